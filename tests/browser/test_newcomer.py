"""A newcomer's hour with only the links on the pages (issue: skips and the guided path):
import one's own schemas, start the WinoWhy pipeline from the import result, five writers
(one skips from the text field and reopens the item), the pipeline ends, "release these
items" publishes; and a run's results show without a click."""

import re
import threading
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from annotation.models import Pipeline
from evaluation import views as evaluation_views
from evaluation.tasks import evaluation_run_task
from releases.models import Release, ReleaseStatus
from tests.browser.test_pipeline import TEMPLATE, _annotators, _label, _validate, _vote, _work, _write
from tests.evaluation.tiny_models import build_tiny_causal

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def _confirm(page, expect: str) -> None:
    page.reload()
    page.wait_for_selector("#confirm")
    page.click("#confirm")
    page.wait_for_selector(f".messages >> text={expect}")


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
    published_releases_removed_afterwards, page, new_page, login, curator, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.WINNOW_MODELS_DIR = tmp_path / "models"
    build_tiny_causal(tmp_path / "models" / "tiny-causal")
    writers = _annotators(5)
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
        assert _work(tab, "kettles-writing", _write(i)) == 3
    _confirm(page, "Reason writing done")
    for tab in pages:
        assert _work(tab, "kettles-validation", _validate) == 15
    _confirm(page, "Validation of the written reasons done")
    call_command(
        "generate_reasons",
        *("--collection", "mine", "--model", "tiny-causal", "--k", "1", "--max-new-tokens", "4"),
        stdout=StringIO(),
        stderr=StringIO(),
    )
    _confirm(page, "Candidate pool done")
    for tab in pages:
        _work(tab, "kettles-plausibility", _vote)
    _confirm(page, "Plausibility voting done")
    for tab in pages:
        assert _work(tab, "kettles-knowledge", _label) == 6
    _confirm(page, "Knowledge types done")
    assert Pipeline.objects.get(name="kettles").status == "done"

    # the finished pipeline says where its output went, and releases it from a filled form
    assert "collection mine, in the data set WinoWhy" in page.inner_text("#output")
    page.click("#release-these")
    assert page.locator("select[name=dataset]").input_value() == "winowhy"
    assert page.locator("select[name=collection]").input_value() == "mine"
    assert page.locator("input[name=name]").input_value() == "kettles"
    page.fill("input[name=version]", "1.0.0")
    page.click("button[value=preview]")
    page.click("button[value=create]")
    page.wait_for_url("**/releases/kettles/1.0.0/")
    page.click("#release-actions button:has-text('Approve kettles 1.0.0')")
    page.click("#release-actions a:has-text('Publish kettles 1.0.0')")
    page.click("button:has-text('Yes, publish kettles 1.0.0')")
    page.wait_for_url("**/releases/kettles/1.0.0/")
    assert page.locator(".messages").inner_text().startswith("Published kettles 1.0.0")
    assert Release.objects.get(name="kettles").status == ReleaseStatus.PUBLISHED


def test_a_done_run_shows_its_results_without_a_click(
    published_releases_removed_afterwards, page, login, settings, tmp_path, monkeypatch, django_user_model
):
    settings.MEDIA_ROOT = tmp_path / "media"
    call_command("seed_demo", verbosity=0)
    call_command("release_demo", verbosity=0)
    workers: list[threading.Thread] = []
    go = threading.Event()

    def work(run_id: int) -> None:
        try:
            go.wait(timeout=60)  # the page is showing the queued run first
            evaluation_run_task(run_id=run_id)
        finally:
            connection.close()

    def enqueue(*, run_id: int) -> bool:
        worker = threading.Thread(target=work, args=(run_id,))
        worker.start()
        workers.append(worker)
        return True

    monkeypatch.setattr(evaluation_views, "evaluation_run_enqueue", enqueue)
    login(page, django_user_model.objects.get(username="researcher"), "researcher")
    page.goto("/evaluation/")
    page.select_option("select[name=release]", "demo-wsc@1.0.0")
    page.select_option("select[name=method]", "first")
    page.fill("input[name=name]", "baseline")
    page.click("form.run-form button[type=submit]")
    page.wait_for_url(re.compile(r"/evaluation/runs/\d+/$"))
    assert page.locator("table#run-model").count() == 0  # queued: no results yet
    go.set()
    page.locator("table#run-model").wait_for(timeout=120_000)  # no click
    assert page.locator("#run-progress").inner_text().startswith("Done")
    for worker in workers:
        worker.join(timeout=120)
