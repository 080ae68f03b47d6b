"""An adversarial writer in headless Chromium: checks a twin pair with the tiny model in the
loop, sees its choice and margin on both twins, sees a bad revision refused beside its field,
and keeps the item (the slot done)."""

import pytest

from annotation.models import AdversarialItem, AdversarialStatus, AdversarialTry, Judgment, TryStatus
from tests.adversarial.conftest import adversarial_models, models_dir  # noqa: F401  (the tiny models folder)
from tests.adversarial.factories import TWINS, adversarial_round, writing_campaign

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.usefixtures("models_dir")
def test_a_writer_checks_a_twin_pair_sees_the_verdict_revises_and_keeps_it(page, login, annotator):
    found = adversarial_round(slots=1)
    name = writing_campaign(found).name
    login(page, annotator)
    page.goto(f"/annotation/campaigns/{name}/")
    page.click("#start-form button")
    page.wait_for_selector("#annotate-form input[name=sentence]")
    assert page.locator("#adversarial-panel").get_attribute("data-state") == "none"
    for field in ("sentence", "candidate_a", "candidate_b", "twin"):
        page.fill(f"input[name={field}]", TWINS[field])
    page.check("input[name=answer][value=A]")
    page.check("input[name=twin_answer][value=B]")
    page.click("#annotate-form button[type=submit]:has-text('Check with the models')")
    page.wait_for_selector("#adversarial-verdict")  # polled until the verdict is there
    rows = page.locator("#adversarial-panel tbody tr")
    assert rows.count() == 2
    assert (
        "tiny-llama" in rows.nth(0).inner_text()
        and "Twin" in page.locator("#adversarial-panel thead").inner_text()
    )
    assert AdversarialTry.objects.get().status == TryStatus.SCORED
    # a revision that does not flip the answer: refused beside its field, nothing sent
    page.check("input[name=twin_answer][value=A]")
    page.click("#annotate-form button[type=submit]:has-text('Check with the models')")
    page.wait_for_selector("#adv-error-twin_answer:has-text('flip')")
    assert page.locator("#adversarial-note").count() == 1 and AdversarialTry.objects.count() == 1
    assert page.locator("#adv-error-sentence").inner_text() == ""
    page.click("#adversarial-keep")
    page.wait_for_selector("#done, #start-form")
    item = AdversarialItem.objects.get()
    assert item.status == AdversarialStatus.KEPT and item.content["twin_answer"] == "B"
    assert Judgment.objects.get().answer == "kept"
