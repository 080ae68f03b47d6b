"""Issue 13's "done when" for pipelines: a curator imports the template's three schemas,
starts a WinoWhy pipeline, five annotators write, validate, vote and label through every
stage by keyboard, the curator confirms each stage in the browser, and the release of the
collection carries human, reverse and generated reasons with the labels the campaigns gave."""

from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Pipeline
from datasets.models import Reason
from releases.models import Release, ReleaseStatus
from tests.browser.steps import TEMPLATE, annotators, confirm, label, publish, validate, vote, work, write
from tests.evaluation.tiny_models import build_tiny_causal

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_winowhy_pipeline_from_import_to_release(
    published_releases_removed_afterwards, page, new_page, login, curator, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.WINNOW_MODELS_DIR = tmp_path / "models"
    build_tiny_causal(tmp_path / "models" / "tiny-causal")
    writers = annotators(5)
    pages = []
    for user in writers:
        tab = new_page()
        login(tab, user)
        pages.append(tab)

    # the curator imports the template's three schemas through the upload page
    login(page, curator)
    page.goto("/datasets/import/")
    page.select_option("#id_format", "schemas")
    page.fill("#id_collection", "mine")
    page.set_input_files("#id_uploads", str(TEMPLATE))
    page.click("button[value=import]")
    page.wait_for_selector("#import-result >> text=Imported")

    # ... and starts the WinoWhy pipeline from the Pipelines page
    page.click("nav >> text=Pipelines")
    page.select_option("#id_kind", "winowhy")
    page.fill("#id_collection", "mine")
    page.fill("#id_name", "kettles")
    page.click("text=Start pipeline")
    page.wait_for_selector("#waiting >> text=3 of 3 items of reason writing still need judgments")

    for i, tab in enumerate(pages):
        assert work(tab, "kettles-writing", write(i)) == 3
    confirm(page, "Reason writing done")
    for tab in pages:
        assert work(tab, "kettles-validation", validate) == 15

    # the validation's outcome and the pool waiting for the curator, with the command line
    page.goto("/annotation/pipelines/kettles/")
    assert "manage.py generate_reasons --collection mine" in page.inner_text("#generated")
    page.click("#confirm")
    page.wait_for_selector("#waiting >> text=Candidate pool: check the preview")
    out = StringIO()
    call_command(
        "generate_reasons",
        "--collection",
        "mine",
        "--model",
        "tiny-causal",
        "--k",
        "2",
        "--max-new-tokens",
        "5",
        stdout=out,
        stderr=StringIO(),
    )
    generated = Reason.objects.filter(schema__collection="mine", origin="generated").count()
    assert generated >= 1, out.getvalue()
    page.reload()
    pool = page.inner_text("#preview")
    assert "human: 6" in pool and "reverse: 4" in pool and f"generated: {generated}" in pool
    page.click("#confirm")
    page.wait_for_selector(".messages >> text=Candidate pool done")

    for tab in pages:
        assert work(tab, "kettles-plausibility", vote) == 10 + generated
    confirm(page, "Plausibility voting done")
    for tab in pages:
        assert work(tab, "kettles-knowledge", label) == 6
    confirm(page, "Knowledge types done")
    stages = page.inner_text("#stages")
    assert "kettle-1: Property" in stages and "lamp-1: Object" in stages
    assert Pipeline.objects.get(name="kettles").status == "done"

    # the curator publishes a release of the collection, in the browser
    page.goto("/releases/new/")
    page.fill("input[name=name]", "kettles")
    page.select_option("select[name=dataset]", "winowhy")
    page.select_option("select[name=collection]", "mine")
    page.fill("input[name=version]", "1.0.0")
    page.click("button[value=preview]")
    assert "It would freeze" in page.locator("#preview").inner_text()
    page.click("button[value=create]")
    publish(page, "kettles", "1.0.0")
    release = Release.objects.get(name="kettles")
    assert release.status == ReleaseStatus.PUBLISHED
    items = [item.payload for item in release.items.all()]
    by_origin: dict[str, set[tuple[str, str]]] = {}
    for item in items:
        by_origin.setdefault(item["origin"], set()).add((item["label"], item["knowledge_type"]))
    assert set(by_origin) == {"human", "reverse", "generated"}
    # the labels the campaigns gave: human reasons by writers 0 and 1 were valid and voted
    # positive with their knowledge type; the others were not valid (no plausibility vote)
    assert ("positive", "Property") in by_origin["human"] and ("positive", "Object") in by_origin["human"]
    assert by_origin["reverse"] == {("negative", "")}
    assert by_origin["generated"] == {("negative", "")}
    # the card names each label's source: the stages' campaigns
    card = page.locator(".card").inner_text()
    assert "Label sources" in card
    assert "campaign kettles-plausibility" in card and "campaign kettles-knowledge" in card
    sources = release.label_sources or {}
    assert set(sources["counts"]["plausibility"]) >= {"campaign:kettles-plausibility"}
    assert set(sources["counts"]["knowledge_type"]) == {"campaign:kettles-knowledge"}
