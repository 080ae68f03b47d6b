"""A curator adjudicates two flagged items in headless Chromium, one by click and one by
keyboard; the flagged filter stays on and each decision applies at once."""

import pytest

from annotation.models import Adjudication
from annotation.services import campaign_aggregate, campaign_create
from datasets.models import Schema
from tests.annotation.answering import annotators, answer_all
from tests.datasets.factories import SchemaFactory

pytestmark = pytest.mark.django_db(transaction=True)


def test_curator_adjudicates_two_flagged_items_with_the_filter_kept(page, login, curator):
    SchemaFactory.create_batch(3)
    campaign = campaign_create(name="sw-browser", task="switchability", items="schemas", k=3)
    answer_all(
        campaign, annotators(3), lambda item, i: {"answer": "not_switchable" if i == 0 else "switchable"}
    )
    campaign_aggregate(campaign=campaign)
    assert not Schema.objects.filter(switchable=True).exists()  # not unanimous: not switchable
    login(page, curator)
    page.goto("/annotation/dashboard/")
    row = page.locator('tr[data-campaign="sw-browser"]')
    assert row.locator('[data-figure="awaiting"] a').inner_text() == "3"
    row.locator('[data-figure="awaiting"] a').click()
    page.wait_for_url("**/annotation/campaigns/sw-browser/adjudicate/?show=awaiting")
    page.locator("nav.filters a", has_text="flagged").click()
    page.wait_for_url("**/adjudicate/?show=flagged")
    items = page.locator("article.adjudicate-item")
    assert items.count() == 3
    first = items.nth(0)
    assert first.locator("mark").inner_text() == "it"  # the pronoun, marked in the sentence
    assert "Switchable: 2 votes" in first.locator(".votes").inner_text()
    first_id = first.get_attribute("data-item")

    # by click, with a note
    first.locator("input[name=note]").fill("annotator 0 misread")
    first.locator("button", has_text="Switchable").first.click()
    page.wait_for_url("**/adjudicate/?show=flagged&page=1")
    assert "applied now" in page.locator(".messages").inner_text()
    first = page.locator(f'article[data-item="{first_id}"]')
    assert "Decision by" in first.inner_text() and "annotator 0 misread" in first.inner_text()
    assert "Aggregated label: Switchable" in first.inner_text()

    # by keyboard: Tab from the note field to the first decision button, then Enter
    second = page.locator("article.adjudicate-item").nth(1)
    second_id = second.get_attribute("data-item")
    assert second_id != first_id
    second.locator("input[name=note]").focus()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.value") == "switchable"
    page.keyboard.press("Enter")
    page.wait_for_url("**/adjudicate/?show=flagged&page=1")
    assert page.locator("nav.filters [aria-current=page]").inner_text().startswith("flagged")
    assert "Decision by" in page.locator(f'article[data-item="{second_id}"]').inner_text()

    decided = {a.campaign_item_id for a in Adjudication.objects.all()}
    assert decided == {int(first_id or 0), int(second_id or 0)}
    assert Schema.objects.filter(switchable=True).count() == 2  # applied at once, no aggregation run

    # on a phone the page does not scroll sideways
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
