"""A researcher downloads a published release in one file from its page and loads it with
Hugging Face `datasets` (issue 15): the same rows as the release's JSONL."""

import json

import pytest

from tests.browser.steps import download
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
    work = tmp_path / "researcher"
    folder = download(page, work)  # the checksum the page shows, `unzip wsc-1.0.0.zip`
    assert folder.name == "wsc-1.0.0"
    rows = hf_load("./wsc-1.0.0", "wsc", workdir=work)
    shipped = [json.loads(line) for line in (folder / "wsc.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == len(shipped) == 4
    assert [r["id"] for r in rows] == [s["id"] for s in shipped]
    assert [r["sentence"] for r in rows] == [s["sentence"] for s in shipped]
