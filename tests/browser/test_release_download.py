"""A researcher downloads a published release in one file from its page and loads it with
Hugging Face `datasets` (issue 15): the same rows as the release's JSONL."""

import hashlib
import json
import zipfile

import pytest

from tests.releases.factories import make_schemas, published_release
from tests.releases.hf import hf_load

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_researcher_downloads_the_release_in_one_file_and_loads_it_with_datasets(
    published_releases_removed_afterwards,
    page,
    login,
    researcher,
    curator,
    settings,
    tmp_path,
    django_capture_on_commit_callbacks,
):
    settings.MEDIA_ROOT = tmp_path / "media"
    make_schemas(4)
    release = published_release(django_capture_on_commit_callbacks, user=curator)
    login(page, researcher)
    page.goto(f"/releases/{release.name}/{release.version}/")
    checksum = page.locator("#download code.checksum").inner_text()
    snippet = page.locator("#load-snippet").inner_text()
    assert "unzip wsc-1.0.0.zip" in snippet
    with page.expect_download() as info:
        page.click("#download a.button")
    download = info.value
    assert download.suggested_filename == "wsc-1.0.0.zip"
    work = tmp_path / "researcher"
    work.mkdir()
    archive = work / download.suggested_filename
    download.save_as(archive)
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == checksum
    zipfile.ZipFile(archive).extractall(work)  # what `unzip` does
    rows = hf_load("./wsc-1.0.0", "wsc", workdir=work)
    shipped = [
        json.loads(line)
        for line in (work / "wsc-1.0.0" / "wsc.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert len(rows) == len(shipped) == 4
    assert [r["id"] for r in rows] == [s["id"] for s in shipped]
    assert [r["sentence"] for r in rows] == [s["sentence"] for s in shipped]
