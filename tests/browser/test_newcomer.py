"""A newcomer's hour with only the links on the pages (issue: skips and the guided path):
import one's own schemas with their title and licence, start the WinoWhy pipeline from the
import result, five writers (one skips from the text field and reopens the item), the
pipeline ends, "release these items" publishes a release whose card describes the
collection (its own licence, never WinoWhy's), every config of the zip loads with Hugging
Face `datasets`, and a run on it shows its results without a click."""

from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Pipeline
from releases.card import CITATIONS, LICENCES, WHAT
from releases.models import Release, ReleaseStatus
from tests.browser.steps import (
    TEMPLATE,
    annotators,
    confirm,
    download,
    every_config_loads,
    label,
    publish,
    run_shows_its_results_without_a_click,
    validate,
    vote,
    work,
    write,
)
from tests.evaluation.tiny_models import build_tiny_causal

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def _skip_and_reopen(page) -> int:
    """From the text field: Alt+s skips (s alone types); the Skipped list reopens the item."""
    page.goto("/annotation/campaigns/kettles-writing/")
    page.keyboard.press("Enter")  # Start
    page.wait_for_selector("#annotate-form")
    assert "Alt" in page.inner_text("#skip-help")
    page.locator("#text").focus()
    page.keyboard.type("s")  # a letter in the text, not a skip
    assert page.locator("#text").input_value() == "s"
    first = page.locator("input[name=assignment]").get_attribute("value")
    page.keyboard.press("Alt+s")
    page.wait_for_selector("#skipped")
    assert page.locator("input[name=assignment]").get_attribute("value") != first
    page.click("#skipped summary")
    page.click("#skipped button[data-reopen]")
    page.wait_for_selector("text=reopened: it is yours to answer again")
    assert page.locator("#skipped").count() == 0
    return int(page.locator("input[name=assignment]").get_attribute("value") or 0)


def test_a_newcomers_hour_from_import_to_a_published_release(
    published_releases_removed_afterwards,
    page,
    new_page,
    login,
    curator,
    researcher,
    settings,
    tmp_path,
    monkeypatch,
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

    # home leads with the steps; the first one takes the curator to the import page
    login(page, curator)
    page.goto("/")
    assert "Build a benchmark" in page.inner_text("#home-build")
    page.click("#build-steps li[data-step=import] a")
    page.select_option("#id_format", "schemas")
    page.fill("#id_collection", "mine")
    page.set_input_files("#id_uploads", str(TEMPLATE))
    page.click("details.collection-card summary")  # what the card of its releases will say
    page.fill("#id_collection_title", "Kettle schemas")
    page.fill("#id_collection_licence", "cc-by-4.0")
    page.click("button[value=import]")
    page.wait_for_selector("#import-result >> text=Imported")

    # the import result's next step: the pipeline form, filled with the collection
    page.click("#next-pipeline")
    assert page.locator("#id_collection").input_value() == "mine"
    assert page.locator("#id_kind").input_value() == "winowhy"
    page.fill("#id_name", "kettles")
    page.click("text=Start pipeline")
    page.wait_for_selector("#waiting >> text=3 of 3 items of reason writing still need judgments")

    # one writer skips an item from the text field, then reopens it from the Skipped list
    _skip_and_reopen(pages[0])
    for i, tab in enumerate(pages):
        assert work(tab, "kettles-writing", write(i)) == 3
    confirm(page, "Reason writing done")
    for tab in pages:
        assert work(tab, "kettles-validation", validate) == 15
    confirm(page, "Validation of the written reasons done")
    call_command(
        "generate_reasons",
        *("--collection", "mine", "--model", "tiny-causal", "--k", "1", "--max-new-tokens", "4"),
        stdout=StringIO(),
        stderr=StringIO(),
    )
    confirm(page, "Candidate pool done")
    for tab in pages:
        work(tab, "kettles-plausibility", vote)
    confirm(page, "Plausibility voting done")
    for tab in pages:
        assert work(tab, "kettles-knowledge", label) == 6
    confirm(page, "Knowledge types done")
    assert Pipeline.objects.get(name="kettles").status == "done"

    # the finished pipeline says where its output went, and releases it from a filled form
    assert "collection mine, in the data set WinoWhy" in page.inner_text("#output")
    page.click("#release-these")
    assert page.locator("select[name=dataset]").input_value() == "winowhy"
    assert page.locator("select[name=collection]").input_value() == "mine"
    assert page.locator("input[name=name]").input_value() == "kettles"
    assert page.locator("input[name=collection_licence]").input_value() == "cc-by-4.0"  # as imported
    page.fill("input[name=version]", "1.0.0")
    page.click("button[value=preview]")
    page.click("button[value=create]")
    publish(page, "kettles", "1.0.0")
    assert Release.objects.get(name="kettles").status == ReleaseStatus.PUBLISHED

    # the page and the card describe the collection: its title, its own licence, not WinoWhy's
    assert page.inner_text("#release-about").startswith("Kettle schemas (own collection mine)")
    card = page.locator(".card").inner_text()
    assert "Kettle schemas" in card and "cc-by-4.0" in card
    for public in (LICENCES["winowhy"][1], LICENCES["wsc"][1], WHAT["winowhy"], "WSC273", "None"):
        assert public not in card
    assert CITATIONS["winowhy"].splitlines()[0] not in card

    # every config the zip's card names loads with Hugging Face `datasets`, no empty file
    folder = download(page, tmp_path / "reader")
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert "\nlicense: cc-by-4.0\n" in readme and LICENCES["winowhy"][1] not in readme
    loaded = every_config_loads(folder, tmp_path / "reader")
    assert "winowhy" in loaded and len(loaded["winowhy"]) == Release.objects.get(name="kettles").item_count

    # a researcher's run on it shows its results when it finishes, without a click
    reader = new_page()
    login(reader, researcher)
    run_shows_its_results_without_a_click(reader, monkeypatch, release="kettles@1.0.0", method="random")


def test_a_done_run_shows_its_results_without_a_click(
    published_releases_removed_afterwards, page, login, settings, tmp_path, monkeypatch, django_user_model
):
    settings.MEDIA_ROOT = tmp_path / "media"
    call_command("seed_demo", verbosity=0)
    call_command("release_demo", verbosity=0)
    login(page, django_user_model.objects.get(username="researcher"), "researcher")
    run_shows_its_results_without_a_click(page, monkeypatch, release="demo-wsc@1.0.0", method="first")
