"""Annotators work by keyboard in headless Chromium; curators create campaigns."""

import pytest
from django.contrib.auth.models import Group

from annotation.models import Assignment, Campaign, Judgment
from annotation.services import assignment_next, campaign_create, judgment_submit
from core.roles import Role
from datasets.models import ComVEItem, Reason
from tests.datasets.factories import ComVEItemFactory, ReasonFactory, SchemaFactory

pytestmark = pytest.mark.django_db(transaction=True)


def _mark_page(page):
    """A flag that survives only as long as the page is not reloaded."""
    page.evaluate("window.__sameDocument = true")


def _still_same_document(page):
    return page.evaluate("window.__sameDocument === true")


def _open(page, name):
    """Open a campaign's page (which leases nothing) and start by keyboard if no item is in hand."""
    page.goto(f"/annotation/campaigns/{name}/")
    _mark_page(page)
    if page.locator("#start-form").count():
        page.keyboard.press("Enter")  # Start
        page.wait_for_selector("#annotate-form, #done, #refused")
        assert _still_same_document(page), "starting reloaded the page"


def _answer_choice_campaign(page, name, keys):
    _open(page, name)
    for key in keys:
        before = page.locator("input[name=assignment]").get_attribute("value")
        page.locator("#item").click(position={"x": 2, "y": 2})  # focus the page, not a field
        for k in key:
            page.keyboard.press(k)
        page.keyboard.press("Enter")
        page.wait_for_function(
            "prev => { const el = document.querySelector('input[name=assignment]');"
            " return !el || el.value !== prev; }",
            arg=before,
        )
    page.wait_for_selector("#done")
    assert _still_same_document(page), "the next item came with a page reload"


def test_annotator_finishes_items_of_every_task_by_keyboard(page, login, annotator):
    schema = SchemaFactory.create()
    SchemaFactory.create(
        text_before="Paul tried to call George on the phone, but",
        pronoun="he",
        text_after="wasn't successful.",
        candidate_a="Paul",
        candidate_b="George",
    )
    ReasonFactory.create_batch(2, schema=schema, label="positive")
    ComVEItemFactory.create()
    campaign_create(name="sw", task="switchability", items="schemas", k=1)
    campaign_create(name="as", task="associativity", items="schemas", k=1)
    campaign_create(name="pl", task="reason_plausibility", items="reasons", k=1)
    campaign_create(name="kt", task="knowledge_type", items="reasons", k=1)
    campaign_create(name="cc", task="comve_check", items="comve", k=1)
    campaign_create(name="rw", task="reason_writing", items="schemas", ids=[schema.pk], k=1)
    campaign_create(name="cw", task="comve_writing", items="slots", slots=1)
    login(page, annotator)

    page.goto("/annotation/campaigns/sw/")
    assert page.locator("#start-form").is_visible() and not page.locator("#original").count()
    assert not Assignment.objects.exists()  # opening the page leased nothing
    _open(page, "sw")
    assert page.locator("#original").inner_text() != page.locator("#switched").inner_text()
    assert page.locator("kbd", has_text="y").first.is_visible()
    _answer_choice_campaign(page, "sw", ["y", "n"])
    _open(page, "as")
    assert page.locator("#clause").inner_text() in ("it is too large", "he wasn't successful")
    _answer_choice_campaign(page, "as", ["n", "y"])
    _answer_choice_campaign(page, "pl", ["y", "n"])
    _answer_choice_campaign(page, "kt", ["2", "4"])
    _answer_choice_campaign(page, "cc", ["2a"])

    # reason writing: type the reason, Enter submits
    _open(page, "rw")
    assert "refers to" in page.locator("label.prompt").inner_text()
    page.locator("textarea[name=text]").focus()
    page.keyboard.type("a trophy that is too large cannot fit into a smaller suitcase")
    page.keyboard.press("Enter")
    page.wait_for_selector("#done")
    assert _still_same_document(page)

    # ComVE writing: fields typed, radios chosen with Space, Enter submits
    _open(page, "cw")
    fields = {
        "statement_0": "He drinks milk.",
        "statement_1": "He drinks a chair.",
        "option_a": "A chair is not a liquid.",
        "option_b": "Milk is white.",
        "option_c": "Chairs have legs.",
        "reference_1": "You cannot drink a chair.",
        "reference_2": "A chair is solid.",
        "reference_3": "Only liquids can be drunk.",
    }
    for name, value in fields.items():
        page.locator(f"input[name={name}]").focus()
        page.keyboard.type(value)
    page.locator("input[name=false_index][value='1']").focus()
    page.keyboard.press("Space")
    page.locator("input[name=correct_option][value=A]").focus()
    page.keyboard.press("Space")
    page.locator("input[name=reference_3]").focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("#done")

    answers = {
        c.name: sorted(Judgment.objects.filter(campaign_item__campaign=c).values_list("answer", flat=True))
        for c in Campaign.objects.all()
    }
    assert answers["sw"] == ["not_switchable", "switchable"]
    assert answers["as"] == ["associative", "not_associative"]
    assert answers["pl"] == ["implausible", "plausible"]
    assert answers["kt"] == ["Object", "Spatial"]  # keys 2 and 4
    assert answers["cc"] == ["1"]
    assert Judgment.objects.get(campaign_item__campaign__name="cc").payload == {"option": "A"}
    written = Judgment.objects.get(campaign_item__campaign__name="rw")
    assert written.text == "a trophy that is too large cannot fit into a smaller suitcase"
    assert written.duration_ms is not None
    cw = Judgment.objects.get(campaign_item__campaign__name="cw").payload
    assert (
        cw["false_index"] == 1
        and cw["correct_option"] == "A"
        and cw["references"][2] == fields["reference_3"]
    )
    assert not ComVEItem.objects.filter(split="pilot").exists()  # waits for curator aggregation
    assert Reason.objects.count() == 2


def test_instructions_are_one_key_away(page, login, annotator):
    SchemaFactory.create()
    campaign_create(name="sw", task="switchability", items="schemas")
    login(page, annotator)
    page.goto("/annotation/campaigns/sw/")
    assert not page.locator(".instruction-text").is_visible()
    page.locator("#item").click(position={"x": 2, "y": 2})
    page.keyboard.press("?")
    assert page.locator(".instruction-text").is_visible()
    assert "Worked examples" in page.locator(".instruction-text").inner_text()


def test_a_second_annotator_is_never_shown_an_item_with_k_judgments(
    page, new_page, login, annotator, annotator2
):
    SchemaFactory.create(
        text_before="The fish ate the worm because",
        pronoun="it",
        text_after="was hungry.",
        candidate_a="the fish",
        candidate_b="the worm",
    )
    SchemaFactory.create(
        text_before="Paul tried to call George on the phone, but",
        pronoun="he",
        text_after="wasn't successful.",
        candidate_a="Paul",
        candidate_b="George",
    )
    campaign = campaign_create(name="sw", task="switchability", items="schemas", k=1)
    login(page, annotator)
    _open(page, "sw")
    first_sentence = page.locator("#original").inner_text()
    assert first_sentence  # annotator 1 holds one item
    page.locator("#item").click(position={"x": 2, "y": 2})
    page.keyboard.press("y")
    page.keyboard.press("Enter")
    page.wait_for_selector(
        "#switched >> text=George" if "fish" in first_sentence else "#switched >> text=worm"
    )

    other = new_page()
    login(other, annotator2)
    _open(other, "sw")
    # annotator 1 judged one item (K=1) and holds a lease on the other: nothing for annotator 2
    assert other.locator("#done").is_visible()
    assert first_sentence not in other.locator("#item").inner_text()
    held = assignment_next(campaign=campaign, annotator=annotator)
    judgment_submit(annotator=annotator, assignment=held, answer="switchable")
    other.reload()
    assert other.locator("#done").is_visible()
    shown = other.locator("#item").inner_text()
    assert "fish" not in shown and "George" not in shown


def test_curator_creates_a_campaign_and_sees_its_progress(page, login, curator, annotator):
    SchemaFactory.create_batch(3)
    login(page, curator)
    page.goto("/annotation/new/")
    page.fill("input[name=name]", "assoc-pilot")
    page.select_option("select[name=task]", "associativity")
    page.select_option("select[name=items]", "schemas")
    page.click("#campaign-more summary")  # raw filters sit under "More" beside the pickers
    page.fill("input[name=filters]", "collection=wsc273")
    page.fill("input[name=k]", "2")
    page.click("#campaign-create button[type=submit]")
    page.wait_for_url("**/annotation/campaigns/assoc-pilot/curate/")
    assert "0 of 6 judgments" in page.locator("#progress-figures").inner_text()
    campaign = Campaign.objects.get(name="assoc-pilot")
    lease = assignment_next(campaign=campaign, annotator=annotator)
    judgment_submit(annotator=annotator, assignment=lease, answer="associative")
    page.reload()
    assert "1 of 6 judgments" in page.locator("#progress-figures").inner_text()
    assert annotator.username in page.locator("#annotators").inner_text()


def test_annotator_role_is_needed(page, login, django_user_model):
    SchemaFactory.create()
    campaign_create(name="sw", task="switchability", items="schemas")
    user = django_user_model.objects.create_user(username="res", password="pw-res")
    user.groups.add(Group.objects.get_or_create(name=Role.RESEARCHER.value)[0])
    login(page, user)
    response = page.goto("/annotation/campaigns/sw/")
    assert response.status == 403


def test_annotating_works_without_javascript(browser, live_server, login, annotator):
    SchemaFactory.create_batch(2)
    campaign_create(name="sw", task="switchability", items="schemas", k=1)
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    try:
        page = context.new_page()
        login(page, annotator)
        page.goto("/annotation/campaigns/sw/")
        page.click("#start-form button[type=submit]")  # a plain POST, then a redirect
        page.wait_for_load_state()
        for answer in ("switchable", "not_switchable"):
            page.goto("/annotation/campaigns/sw/")  # the item in hand
            page.check(f"input[name=answer][value={answer}]")
            page.click("form.annotate-form button[type=submit]")  # a plain POST, then a redirect
            page.wait_for_load_state()
        assert page.locator("#done").is_visible()
    finally:
        context.close()
    assert sorted(Judgment.objects.values_list("answer", flat=True)) == ["not_switchable", "switchable"]
    assert all(j.duration_ms is not None for j in Judgment.objects.all())  # from the lease time
