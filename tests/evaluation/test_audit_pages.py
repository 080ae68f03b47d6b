"""Audit pages, downloads, API and filtered releases, per role (curator, researcher,
annotator, anonymous): who may start, see and download what, and what the curator's
filtered release holds (its card states the filter, its diff names every removed item)."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from evaluation.audit.selectors import AUDIT_TABLES
from evaluation.audit.services import audit_create, audit_run_here, source_of_release
from evaluation.models import Audit, AuditStatus
from releases.models import Release, ReleaseStatus
from releases.services import release_folder
from tests.evaluation.audit_helpers import AFLITE_SMALL, make_wsc, wsc_release
from tests.openapi import schema_paths_having

pytestmark = pytest.mark.django_db


def _done(source, curator):
    audit = audit_create(
        source=source,
        model="tiny-causal",
        folds=3,
        epochs=3,
        repeats=2,
        aflite=AFLITE_SMALL,
        created_by=curator,
    )
    audit = audit_run_here(audit=audit)
    assert audit.status == AuditStatus.DONE, audit.error
    return audit


@pytest.fixture
def release_audit(audit_registry, tmp_path, settings, curator, django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = tmp_path / "media"
    release = wsc_release(django_capture_on_commit_callbacks, curator)
    return _done(source_of_release(f"{release.name}@{release.version}"), curator)


@pytest.fixture
def collection_audit(audit_registry, curator):
    make_wsc(12, collection="draft-items")
    return Audit.objects.create(
        source_label="wsc/draft-items",
        dataset="wsc",
        collection="draft-items",
        model_name="tiny-causal",
        model_kind="causal",
        model_sha256="0" * 64,
        status=AuditStatus.QUEUED,
    )


def test_curators_see_the_form_researchers_the_list_and_others_are_refused(
    client, audit_registry, curator, researcher, annotator, nobody
):
    url = reverse("evaluation:audit-list")
    assert client.get(url).status_code == 302  # to the sign-in page
    for user in (annotator, nobody):
        client.force_login(user)
        assert client.get(url).status_code == 403
        assert client.post(url, {"source": "x"}).status_code == 403
    client.force_login(researcher)
    page = client.get(url)
    assert page.status_code == 200 and b'id="audit-form"' not in page.content
    assert client.post(url, {"source": "x"}).status_code == 403
    client.force_login(curator)
    page = client.get(url)
    assert page.status_code == 200 and b'id="audit-form"' in page.content and b"AfLite m" in page.content


def test_a_curators_bad_request_is_refused_on_the_form_naming_the_setting_and_writes_nothing(
    client, audit_registry, curator, django_capture_on_commit_callbacks, tmp_path, settings
):
    settings.MEDIA_ROOT = tmp_path / "media"
    release = wsc_release(django_capture_on_commit_callbacks, curator, n=8)
    client.force_login(curator)
    form = {
        "source": f"release:{release.name}@{release.version}",
        "model": "tiny-causal",
        "folds": 5,
        "seed": 0,
        "epochs": 3,
        "repeats": 1,
        "chunk_texts": 50,
    }
    refused = client.post(reverse("evaluation:audit-list"), form)  # 8 schemas: 4 twin pairs < 5 folds
    assert refused.status_code == 400 and b"5 folds need at least 5 twin pairs" in refused.content
    refused = client.post(reverse("evaluation:audit-list"), {**form, "folds": 2, "aflite_target_n": 100})
    assert refused.status_code == 400 and b"target_n" in refused.content
    refused = client.post(reverse("evaluation:audit-list"), {**form, "folds": 2, "model": "gone"})
    assert refused.status_code == 400 and b"Choose a model from the list" in refused.content
    assert not Audit.objects.exists()


def test_a_curator_starts_an_audit_from_the_page_and_it_runs(
    client, audit_registry, curator, django_capture_on_commit_callbacks, tmp_path, settings
):
    settings.MEDIA_ROOT = tmp_path / "media"
    make_wsc(12)
    client.force_login(curator)
    form = {"source": "collection:wsc/wsc-audit", "model": "tiny-causal", "folds": 2, "seed": 0, "epochs": 3}
    form |= {"repeats": 1, "chunk_texts": 30, "aflite_m": 4, "aflite_t": 3, "aflite_k": 2, "aflite_tau": 0.6}
    form |= {"aflite_target_n": 6}
    with django_capture_on_commit_callbacks(execute=True):  # the chunks, on the eager test "workers"
        response = client.post(reverse("evaluation:audit-list"), form)
    audit = Audit.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse(
        "evaluation:audit-detail", args=[audit.pk]
    )
    audit.refresh_from_db()
    assert audit.status == AuditStatus.DONE, audit.error
    assert audit.params["aflite"]["m"] == 4 and audit.chunks_total == audit.chunks.count() > 1


def test_the_audit_page_shows_the_tables_map_and_downloads_from_the_same_frames(
    client, release_audit, curator, researcher
):
    for user in (curator, researcher):  # a published release's audit: researchers see it too
        client.force_login(user)
        page = client.get(reverse("evaluation:audit-detail", args=[release_audit.pk]))
        assert page.status_code == 200
        text = page.content.decode()
        for needle in (
            'id="table-baselines"',
            'data-chart="cartography"',
            "easy-to-learn",
            "hard-to-learn",
            "ambiguous",
        ):
            assert needle in text
        assert ('id="filtered-release-form"' in text) == (user == curator)
    for name, (_title, frame_of) in AUDIT_TABLES.items():
        frame = frame_of(release_audit)
        csv = client.get(reverse("evaluation:audit-table", args=[release_audit.pk, name, "csv"]))
        assert csv.status_code == 200 and csv["Content-Disposition"].endswith(f'{name}.csv"')
        assert list(pd.read_csv(io.StringIO(csv.content.decode())).columns) == [str(c) for c in frame.columns]
        body = json.loads(
            client.get(reverse("evaluation:audit-table", args=[release_audit.pk, name, "json"])).content
        )
        assert body["columns"] == [str(c) for c in frame.columns] and len(body["rows"]) == len(frame)
    items = json.loads(
        client.get(reverse("evaluation:audit-table", args=[release_audit.pk, "items", "json"])).content
    )
    assert len(items["rows"]) == 24 and {
        "baseline_no_context",
        "confidence",
        "region",
        "aflite_removed_in",
    } <= set(items["columns"])
    assert (
        client.get(reverse("evaluation:audit-table", args=[release_audit.pk, "items", "xlsx"])).status_code
        == 404
    )


def test_researchers_never_see_an_audit_of_a_collection_and_annotators_no_audit(
    client, collection_audit, researcher, annotator, curator
):
    url = reverse("evaluation:audit-detail", args=[collection_audit.pk])
    client.force_login(researcher)
    assert client.get(url).status_code == 404
    assert b"draft-items" not in client.get(reverse("evaluation:audit-list")).content
    client.force_login(annotator)
    assert client.get(url).status_code == 403
    client.force_login(curator)
    page = client.get(url)
    assert page.status_code == 200 and b"waiting for a model worker" in page.content


def test_the_api_lists_and_details_audits_by_the_pages_rules(
    release_audit, collection_audit, curator, researcher, annotator
):
    api = APIClient()
    assert api.get("/api/evaluation/audits/").status_code in (401, 403)
    api.force_authenticate(annotator)
    assert api.get("/api/evaluation/audits/").status_code == 403
    assert api.get(f"/api/evaluation/audits/{release_audit.pk}/").status_code == 403
    api.force_authenticate(researcher)
    assert [a["id"] for a in api.get("/api/evaluation/audits/").json()] == [release_audit.pk]
    assert api.get(f"/api/evaluation/audits/{collection_audit.pk}/").status_code == 404
    body = api.get(f"/api/evaluation/audits/{release_audit.pk}/").json()
    assert body["status"] == "done" and body["model_sha256"] == release_audit.model_sha256
    assert [row["baseline"] for row in body["tables"]["baselines"]][:3] == [
        "full",
        "no_context",
        "candidates",
    ]
    assert len(body["tables"]["items"]) == 24
    api.force_authenticate(curator)
    assert {a["id"] for a in api.get("/api/evaluation/audits/").json()} == {
        release_audit.pk,
        collection_audit.pk,
    }
    schema_paths_having(
        api, curator, {"/api/evaluation/audits/": {"get"}, "/api/evaluation/audits/{audit_id}/": {"get"}}
    )


def test_a_filtered_release_holds_the_kept_items_its_card_states_the_filter_and_its_diff_names_the_removed(
    client, release_audit, curator, researcher, django_capture_on_commit_callbacks
):
    url = reverse("evaluation:audit-filtered-release", args=[release_audit.pk])
    client.force_login(researcher)
    assert client.post(url, {"name": "wsc-audit-aflite", "version": "1.0.0"}).status_code == 403
    client.force_login(curator)
    with django_capture_on_commit_callbacks(execute=True):  # the build
        response = client.post(url, {"name": "wsc-audit-aflite", "version": "1.0.0"})
    filtered = Release.objects.get(name="wsc-audit-aflite")
    assert response.status_code == 302 and filtered.status == ReleaseStatus.DRAFT
    removed = [
        k
        for k, r in zip(
            release_audit.per_item["key"], release_audit.per_item["aflite_removed_in"], strict=True
        )
        if r
    ]
    assert removed and filtered.item_count == 24 - len(removed)
    assert filtered.diff["removed"] == sorted(removed) and filtered.diff["counts"]["removed"] == len(removed)
    assert filtered.diff["previous_version"] == "wsc-audit@1.0.0" and filtered.diff["counts"]["added"] == 0
    card = (release_folder(filtered) / "README.md").read_text()
    assert "## Filter" in card and release_audit.model_sha256 in card and "`wsc-audit@1.0.0`" in card
    assert "Counts per iteration" in card and "| tau | `0.6` |" in card
    release_audit.refresh_from_db()
    assert release_audit.filtered_release == filtered
    full = Release.objects.get(name="wsc-audit")
    assert "filter" not in (full.selection or {})  # the full release is as it was
