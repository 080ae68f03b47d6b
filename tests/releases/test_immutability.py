"""Nobody changes a published release: not the admin, the API, the services, a bulk
queryset write, a model save, raw SQL, or an edit of the items it was made from."""

import hashlib
from pathlib import Path

import pytest
from django.db import DatabaseError, connection, transaction
from django.urls import reverse

from datasets.models import Schema
from releases import services
from releases.errors import ReleaseImmutableError, ReleaseIntegrityError
from releases.models import BuildStatus, Release, ReleaseFile, ReleaseItem, ReleaseStatus
from tests.releases.factories import make_schemas, published_release

pytestmark = pytest.mark.django_db


@pytest.fixture
def release(settings, tmp_path, curator, django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = tmp_path / "media"
    make_schemas(6)
    return published_release(django_capture_on_commit_callbacks, user=curator, changelog="First.")


def state(release: Release) -> dict:
    """Everything about a release: its row, items, file rows and file bytes."""
    row = Release.objects.filter(pk=release.pk).values().get()
    items = list(ReleaseItem.objects.filter(release_id=release.pk).order_by("position").values())
    files = list(ReleaseFile.objects.filter(release_id=release.pk).order_by("name").values())
    folder = services.release_folder(release)
    disk = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}
    return {"row": row, "items": items, "files": files, "disk": disk}


@pytest.fixture
def staff_curator(curator):
    curator.is_staff = True
    curator.save()
    return curator


# --- admin ---


def test_admin_change_post_on_a_published_release_is_refused(client, admin_user, release):
    before = state(release)
    client.force_login(admin_user)
    url = reverse("admin:releases_release_change", args=[release.pk])
    response = client.post(url, {"changelog": "rewritten", "_save": "Save"})
    assert response.status_code == 403
    assert state(release) == before


def test_admin_delete_post_on_a_published_release_is_refused(client, admin_user, staff_curator, release):
    before = state(release)
    for user in (admin_user, staff_curator):
        client.force_login(user)
        response = client.post(reverse("admin:releases_release_delete", args=[release.pk]), {"post": "yes"})
        assert response.status_code == 403
    assert state(release) == before


def test_admin_shows_a_published_release_read_only(client, staff_curator, release):
    client.force_login(staff_curator)
    response = client.get(reverse("admin:releases_release_change", args=[release.pk]))
    assert response.status_code == 200
    assert b'name="changelog"' not in response.content  # no form field: read-only view
    changelist = client.get(reverse("admin:releases_release_changelist"))
    assert b"delete_selected" not in changelist.content


def test_admin_items_and_files_cannot_be_changed_or_deleted(client, admin_user, release):
    before = state(release)
    client.force_login(admin_user)
    item = ReleaseItem.objects.filter(release=release).first()
    file = ReleaseFile.objects.filter(release=release).first()
    assert item is not None and file is not None
    assert (
        client.post(reverse("admin:releases_releaseitem_change", args=[item.pk]), {"key": "x"}).status_code
        == 403
    )
    assert (
        client.post(reverse("admin:releases_releaseitem_delete", args=[item.pk]), {"post": "yes"}).status_code
        == 403
    )
    assert (
        client.post(reverse("admin:releases_releasefile_delete", args=[file.pk]), {"post": "yes"}).status_code
        == 403
    )
    assert client.post(reverse("admin:releases_releaseitem_add"), {"key": "x"}).status_code == 403
    assert state(release) == before


def test_admin_approve_and_publish_actions_on_a_published_release_change_nothing(client, admin_user, release):
    before = state(release)
    client.force_login(admin_user)
    url = reverse("admin:releases_release_changelist")
    for action in ("approve_releases", "publish_releases"):
        response = client.post(
            url, {"action": action, "_selected_action": [release.pk], "confirm": "yes"}, follow=True
        )
        assert response.status_code == 200
        assert b"can never change" in response.content or b"only a draft" in response.content
    assert state(release) == before


# --- API ---


@pytest.mark.parametrize("method", ["put", "patch", "delete", "post"])
def test_api_write_methods_on_a_published_release_are_refused(client, admin_user, curator, release, method):
    before = state(release)
    url = reverse("releases-api:release-detail", args=[release.name, release.version])
    for user in (admin_user, curator):
        client.force_login(user)
        response = getattr(client, method)(url, data={"changelog": "x"}, content_type="application/json")
        assert response.status_code == 405
    list_url = reverse("releases-api:release-list")
    assert client.post(list_url, data={"name": "x"}, content_type="application/json").status_code == 405
    file_url = reverse("releases-api:release-download", args=[release.name, release.version, "wsc.jsonl"])
    assert getattr(client, method)(file_url, data="x", content_type="text/plain").status_code == 405
    assert state(release) == before


# --- services ---


def test_services_refuse_to_change_a_published_release(release, curator, tmp_path):
    before = state(release)
    with pytest.raises(ReleaseImmutableError):
        services.release_approve(release=release, user=curator)
    with pytest.raises(ReleaseImmutableError):
        services.release_publish(release=release, user=curator)
    with pytest.raises(ReleaseImmutableError):
        services.release_changelog_update(release=release, changelog="new", user=curator)
    with pytest.raises(ReleaseImmutableError):
        services.release_delete(release=release, user=curator)
    # A forced rebuild of a published release whose files match is a no-op.
    services.release_build(release_id=release.pk, force=True)
    assert state(release) == before


# --- querysets, models, the database ---


def test_bulk_queryset_writes_on_a_published_release_are_refused(release):
    before = state(release)
    with pytest.raises(ReleaseImmutableError):
        Release.objects.all().update(changelog="bulk")
    with pytest.raises(ReleaseImmutableError):
        Release.objects.filter(pk=release.pk).update(status=ReleaseStatus.DRAFT)
    with pytest.raises(ReleaseImmutableError):
        Release.objects.all().delete()
    release.changelog = "bulk"
    with pytest.raises(ReleaseImmutableError):
        Release.objects.bulk_update([release], ["changelog"])
    with pytest.raises(ReleaseImmutableError):
        ReleaseItem.objects.filter(release=release).update(payload={})
    with pytest.raises(ReleaseImmutableError):
        ReleaseItem.objects.all().delete()
    items = list(ReleaseItem.objects.filter(release=release))
    for item in items:
        item.payload = {"changed": True}
    with pytest.raises(ReleaseImmutableError):
        ReleaseItem.objects.bulk_update(items, ["payload"])
    with pytest.raises(ReleaseImmutableError):
        ReleaseItem.objects.bulk_create(
            [ReleaseItem(release=release, position=999, key="x", payload={}, digest="0")]
        )
    with pytest.raises(ReleaseImmutableError):
        ReleaseFile.objects.filter(release=release).update(sha256="0" * 64)
    with pytest.raises(ReleaseImmutableError):
        ReleaseFile.objects.filter(release=release).delete()
    assert state(Release.objects.get(pk=release.pk)) == before


def test_model_save_and_delete_of_a_published_release_are_refused(release):
    before = state(release)
    fresh = Release.objects.get(pk=release.pk)
    fresh.changelog = "edited"
    with pytest.raises(ReleaseImmutableError):
        fresh.save()
    fresh.status = ReleaseStatus.DRAFT
    with pytest.raises(ReleaseImmutableError):
        fresh.save()
    with pytest.raises(ReleaseImmutableError):
        fresh.delete()
    item = ReleaseItem.objects.filter(release=release).first()
    assert item is not None
    item.payload = {"x": 1}
    with pytest.raises(ReleaseImmutableError):
        item.save()
    with pytest.raises(ReleaseImmutableError):
        item.delete()
    file = ReleaseFile.objects.filter(release=release).first()
    assert file is not None
    with pytest.raises(ReleaseImmutableError):
        file.delete()
    with pytest.raises(ReleaseImmutableError):
        ReleaseItem.objects.create(release=release, position=999, key="new", payload={}, digest="0")
    assert state(release) == before


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE datasets_release SET changelog = 'raw' WHERE id = %s",
        "UPDATE datasets_release SET status = 'draft' WHERE id = %s",
        "DELETE FROM datasets_release WHERE id = %s",
        "UPDATE datasets_releaseitem SET payload = '{}' WHERE release_id = %s",
        "DELETE FROM datasets_releaseitem WHERE release_id = %s",
        "UPDATE datasets_releasefile SET sha256 = 'x' WHERE release_id = %s",
        "DELETE FROM datasets_releasefile WHERE release_id = %s",
        "INSERT INTO datasets_releaseitem (release_id, position, key, payload, digest) VALUES (%s, 999, 'k', '{}', 'd')",
    ],
)
def test_database_triggers_refuse_raw_sql_on_a_published_release(release, sql):
    before = state(release)
    with pytest.raises(DatabaseError, match="immutable"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, [release.pk])
    assert state(release) == before


def test_private_update_path_is_caught_by_the_database(release):
    before = state(release)
    with pytest.raises(DatabaseError), transaction.atomic():
        # the private path under QuerySet.update(), which the stubs do not declare
        Release.objects.filter(pk=release.pk)._update(  # type: ignore[attr-defined]  # deliberately private
            [(Release._meta.get_field("changelog"), None, "sneaky")]
        )
    assert state(release) == before


def test_deleting_the_curator_who_published_is_refused(release, curator):
    from django.db.models import ProtectedError

    before = state(release)
    with pytest.raises(ProtectedError):
        curator.delete()
    assert state(release) == before


def test_editing_the_items_after_release_changes_nothing_in_it(release):
    before = state(release)
    Schema.objects.filter(external_id="0").update(answer="B", switchable=False)
    Schema.objects.filter(external_id="1").delete()
    assert state(release) == before


# --- files on disk ---


def test_published_files_are_read_only_on_disk(release):
    folder = services.release_folder(release)
    assert folder.stat().st_mode & 0o777 == 0o555
    for path in folder.iterdir():
        assert path.stat().st_mode & 0o777 == 0o444


def test_a_tampered_file_is_refused_for_download_and_cannot_be_rebuilt_in_place(client, researcher, release):
    path: Path = services.release_folder(release) / "wsc.jsonl"
    path.chmod(0o644)
    path.write_bytes(path.read_bytes().replace(b'"A"', b'"B"', 1))
    client.force_login(researcher)
    for url in (
        reverse("releases:release-download", args=[release.name, release.version, "wsc.jsonl"]),
        reverse("releases-api:release-download", args=[release.name, release.version, "wsc.jsonl"]),
    ):
        response = client.get(url)
        assert response.status_code == 409
        assert (
            b"no longer match" in b"".join(response)
            if hasattr(response, "streaming_content")
            else response.content
        )
    ok = client.get(
        reverse("releases:release-download", args=[release.name, release.version, "manifest.json"])
    )
    assert ok.status_code == 200
    with pytest.raises(ReleaseImmutableError):
        services.release_build(release_id=release.pk)
    assert Release.objects.get(pk=release.pk).build_status == BuildStatus.DONE


def test_a_refused_download_is_logged_as_an_error_and_answered_as_a_page(client, researcher, release, caplog):
    path: Path = services.release_folder(release) / "wsc.jsonl"
    path.chmod(0o644)
    path.write_bytes(b"tampered\n")
    client.force_login(researcher)
    with caplog.at_level("ERROR", logger="releases.selectors"):
        response = client.get(
            reverse("releases:release-download", args=[release.name, release.version, "wsc.jsonl"])
        )
    assert response.status_code == 409
    assert "<title>Cannot do that now · Winnow</title>" in response.content.decode()
    assert [r.getMessage() for r in caplog.records if r.name == "releases.selectors"] == [
        f"refused to serve {release.ref}/wsc.jsonl: the bytes on disk no longer match the manifest's SHA-256"
    ]


def test_export_of_a_tampered_release_still_matches_the_manifest_and_restores_it(release, tmp_path):
    path = services.release_folder(release) / "wsc.jsonl"
    original = path.read_bytes()
    path.chmod(0o644)
    path.write_bytes(b"tampered\n")
    out = tmp_path / "restore"
    services.release_export(release=release, out_dir=out)
    assert (out / "wsc.jsonl").read_bytes() == original


def test_publish_refuses_files_that_no_longer_match(
    settings, tmp_path, curator, django_capture_on_commit_callbacks
):
    from tests.releases.factories import create_release

    settings.MEDIA_ROOT = tmp_path / "media"
    make_schemas(2)
    draft = create_release(django_capture_on_commit_callbacks, user=curator)
    services.release_approve(release=draft, user=curator)
    path = services.release_folder(draft) / "wsc.jsonl"
    path.chmod(0o644)
    path.write_text("{}\n", encoding="utf-8")
    with pytest.raises(ReleaseIntegrityError):
        services.release_publish(release=draft, user=curator)
    assert Release.objects.get(pk=draft.pk).status == ReleaseStatus.APPROVED
