"""A published release as one download: deterministic zip of exactly its manifest's files,
checked against the manifest, for the same roles as the per-file downloads (issue 15)."""

import hashlib
import io
import json
import zipfile
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from releases.card_html import card_html
from releases.models import ReleaseStatus
from tests.releases.factories import create_release, make_schemas, published_release

pytestmark = pytest.mark.django_db


@pytest.fixture
def release(settings, tmp_path, curator, django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = tmp_path / "media"
    make_schemas(4)
    return published_release(django_capture_on_commit_callbacks, user=curator)


def _get(client, release):
    response = client.get(reverse("releases:release-bundle", args=[release.name, release.version]))
    body = b"".join(response.streaming_content) if response.status_code == 200 else response.content
    return response, body


def test_the_zip_holds_exactly_the_manifest_files_and_is_the_same_bytes_every_time(
    client, researcher, release
):
    client.force_login(researcher)
    first, body = _get(client, release)
    assert first.status_code == 200
    assert first["Content-Disposition"] == 'attachment; filename="wsc-1.0.0.zip"'
    digest = hashlib.sha256(body).hexdigest()
    assert first["X-Checksum-SHA256"] == digest
    archive = zipfile.ZipFile(io.BytesIO(body))
    names = {f["name"] for f in release.manifest["files"]}
    assert set(archive.namelist()) == {f"wsc-1.0.0/{n}" for n in names | {"manifest.json"}}
    for entry in release.manifest["files"]:
        member = archive.read(f"wsc-1.0.0/{entry['name']}")
        assert hashlib.sha256(member).hexdigest() == entry["sha256"]
    assert json.loads(archive.read("wsc-1.0.0/manifest.json")) == release.manifest
    assert {i.date_time for i in archive.infolist()} == {(1980, 1, 1, 0, 0, 0)}
    # built from nothing again (the cached zip removed): the same bytes
    for stale in (Path(settings.MEDIA_ROOT) / "release-bundles").iterdir():
        stale.unlink()
    _, again = _get(client, release)
    assert again == body
    page = client.get(reverse("releases:release-detail", args=[release.name, release.version]))
    html = page.content.decode()
    assert digest in html and reverse("releases:release-bundle", args=[release.name, release.version]) in html
    assert "load_dataset('./wsc-1.0.0', 'wsc')" in html


def test_a_file_that_no_longer_matches_its_manifest_refuses_the_whole_download(client, researcher, release):
    client.force_login(researcher)
    data = Path(settings.MEDIA_ROOT) / release.files.get(name="wsc.jsonl").path
    data.chmod(0o644)
    data.write_text(data.read_text(encoding="utf-8").replace("A", "B", 1), encoding="utf-8")
    response, body = _get(client, release)
    assert response.status_code == 409
    assert b"wsc.jsonl" in body
    assert not (Path(settings.MEDIA_ROOT) / "release-bundles" / "wsc-1.0.0.zip").exists()


def test_a_damaged_cached_zip_is_built_again_not_served(client, researcher, release):
    client.force_login(researcher)
    _, good = _get(client, release)
    cached = Path(settings.MEDIA_ROOT) / "release-bundles" / "wsc-1.0.0.zip"
    cached.write_bytes(b"not a zip")
    response, body = _get(client, release)
    assert body == good and response["X-Checksum-SHA256"] == hashlib.sha256(good).hexdigest()


def test_drafts_have_no_one_file_download_and_researchers_do_not_see_them(
    client, curator, researcher, nobody, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path / "media"
    make_schemas(2)
    draft = create_release(django_capture_on_commit_callbacks, user=curator)
    assert draft.status == ReleaseStatus.DRAFT
    client.force_login(curator)
    response, body = _get(client, draft)
    assert response.status_code == 409 and b"once the release is published" in body
    client.force_login(researcher)
    assert _get(client, draft)[0].status_code == 404
    client.force_login(nobody)
    assert _get(client, draft)[0].status_code == 403


def test_anonymous_users_are_sent_to_log_in(client, release):
    response = client.get(reverse("releases:release-bundle", args=[release.name, release.version]))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_the_card_is_html_with_raw_html_scripts_and_foreign_links_neutralised():
    card = (
        "---\nconfigs:\n- config_name: wsc\n---\n# Title\n\n"
        "<script>alert(1)</script> <img src=x onerror=alert(1)> [js](javascript:alert(1)) "
        "[source](docs/formats.md) [paper](https://arxiv.org/abs/1811.01778) ![x](https://e.x/i.png)\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n"
    )
    html = card_html(card)
    assert "<h1>Title</h1>" in html and "<table>" in html and "configs" not in html
    assert "<script" not in html and "<img" not in html and "&lt;script&gt;" in html
    assert 'href="javascript' not in html and 'href="docs/' not in html and "source" in html
    assert '<a href="https://arxiv.org/abs/1811.01778">paper</a>' in html
