"""A release of a curator's own collection: its card describes that collection (its own
description, licence and citation, never WSC273's), label counts are words, and the zip's
card declares exactly the configs of the non-empty files it carries, each of which loads
with Hugging Face `datasets`."""

import io
import json
import re
import zipfile
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from datasets.models import Collection
from datasets.services import dataset_import
from releases import services
from releases.card import CITATIONS, LICENCES, WHAT
from releases.models import Release
from tests.releases.factories import published_release
from tests.releases.hf import hf_load

pytestmark = pytest.mark.django_db

SCHEMAS = Path(settings.BASE_DIR) / "static" / "import-templates" / "schemas.jsonl"
CARD = {
    "title": "Kitchen schemas",
    "description": "Winograd schemas about kitchens, written by our lab.",
    "licence": "cc-by-sa-4.0",
    "citation": "@misc{kitchen2026, title={Kitchen schemas}}",
}


@pytest.fixture
def own(settings, tmp_path, curator):
    settings.MEDIA_ROOT = tmp_path / "media"
    dataset_import(
        format="schemas",
        paths=[SCHEMAS],
        options={"collection": "kitchen", "collection_card": CARD},
        user=curator,
    )


def _card(release) -> str:
    path = Path(settings.MEDIA_ROOT) / release.files.get(name="README.md").path
    return path.read_text(encoding="utf-8")


def test_the_card_of_an_own_collection_names_its_own_licence_and_words(
    own, curator, django_capture_on_commit_callbacks
):
    assert Collection.objects.get(name="kitchen").licence == "cc-by-sa-4.0"
    release = published_release(
        django_capture_on_commit_callbacks, user=curator, name="kitchen", collection="kitchen"
    )
    card = _card(release)
    assert "\nlicense: cc-by-sa-4.0\n" in card
    assert "`cc-by-sa-4.0`" in card and "Kitchen schemas" in card
    assert CARD["description"] in card and CARD["citation"] in card
    for public in (WHAT["wsc"], LICENCES["wsc"][1], CITATIONS["wsc"], "WSC273", "Trichelair"):
        assert public not in card
    assert "None" not in card
    assert "- switchable: not labelled: " in card


def test_the_release_pages_call_an_own_collection_by_its_title_not_the_data_sets_label(
    own, client, curator, django_capture_on_commit_callbacks
):
    release = published_release(
        django_capture_on_commit_callbacks, user=curator, name="kitchen", collection="kitchen"
    )
    client.force_login(curator)
    detail = client.get(reverse("releases:release-detail", args=[release.name, release.version]))
    about = re.search(r'<p id="release-about">(.*?)</p>', detail.content.decode(), flags=re.S)
    assert about and about.group(1).startswith('Kitchen schemas <span class="muted">(own collection kitchen)')
    listed = client.get(reverse("releases:release-list")).content.decode()
    for page in (about.group(1), listed):
        assert "Kitchen schemas" in page and release.get_dataset_display() not in page
    Collection.objects.filter(name="kitchen").update(title="")
    untitled = published_release(
        django_capture_on_commit_callbacks, user=curator, name="kitchen2", collection="kitchen"
    )
    assert (untitled.data_title, untitled.data_note) == ("kitchen", "own collection")


def test_a_licence_given_on_the_release_form_reaches_the_card(own, client, curator):
    client.force_login(curator)
    url = reverse("releases:release-create")
    form = client.get(url, {"collection": "kitchen", "dataset": "wsc"}).content.decode()
    assert 'value="cc-by-sa-4.0"' in form  # what the collection was given, to keep or change
    fields = {"name": "kitchen", "dataset": "wsc", "collection": "kitchen", "version": "1.0.0"}
    fields |= {"collection_licence": "MIT", "collection_title": "", "step": "preview"}
    page = client.post(url, fields)
    assert page.status_code == 200
    client.post(url, {**fields, "step": "create", "previewed": page.context["previewed"]})
    release = Release.objects.get(name="kitchen")
    assert (release.collection_card or {})["licence"] == "MIT"
    assert Collection.objects.get(name="kitchen").title == "Kitchen schemas"  # blank kept it
    services.release_build(release_id=release.pk)
    card = _card(release)
    assert "\nlicense: mit\n" in card and "## Licence\n\n`mit`\n" in card


def test_every_config_the_zip_card_names_loads_with_hugging_face_datasets(
    own, client, researcher, curator, django_capture_on_commit_callbacks, tmp_path
):
    release = published_release(
        django_capture_on_commit_callbacks, user=curator, name="kitchen", collection="kitchen"
    )
    client.force_login(researcher)
    response = client.get(reverse("releases:release-bundle", args=[release.name, release.version]))
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    archive.extractall(tmp_path / "unzipped")
    folder = tmp_path / "unzipped" / "kitchen-1.0.0"
    assert all(info.file_size > 0 for info in archive.infolist())  # no empty file shipped
    card = (folder / "README.md").read_text(encoding="utf-8")
    configs = re.findall(r"^- config_name: (\S+)$", card, flags=re.MULTILINE)
    jsonl = sorted(p.stem for p in folder.glob("*.jsonl"))
    assert configs == jsonl == ["wsc"]  # no switchable or associative labels: no such files
    page = client.get(
        reverse("releases:release-detail", args=[release.name, release.version])
    ).content.decode()
    assert "load_dataset('./kitchen-1.0.0', 'wsc')" in page and "wsc_switchable" not in page
    for config in configs:
        rows = hf_load(folder, config, workdir=tmp_path / "hf")
        lines = [json.loads(line) for line in (folder / f"{config}.jsonl").open(encoding="utf-8")]
        assert rows and [row["id"] for row in rows] == [line["id"] for line in lines]


def test_a_run_page_calls_an_own_collection_by_its_title(
    own, curator, researcher, client, django_capture_on_commit_callbacks
):
    from evaluation.models import RunStatus
    from evaluation.services import evaluation_run, evaluation_run_create

    release = published_release(
        django_capture_on_commit_callbacks, user=curator, name="kitchen", collection="kitchen"
    )
    run = evaluation_run_create(
        release=f"{release.name}@{release.version}", method="first", created_by=researcher
    )
    assert evaluation_run(run=run).status == RunStatus.DONE
    client.force_login(researcher)
    who = re.search(
        r'<p class="who">(.*?)</p>', client.get(f"/evaluation/runs/{run.pk}/").content.decode(), re.S
    )
    assert who is not None and "Kitchen schemas (own collection kitchen; " in who.group(1), who
