"""A crowd participant in headless Chromium (issue 14): in through a Prolific-style link
(its landing page, then its button), consent, screening passed, a batch finished by
keyboard with one answer changed and one item skipped, then the completion code; a second
entry under the same id from the same browser resumes; who fails the screening gets the
return code; who ends early confirms, gets the partial code and is flagged in the payment
report."""

import csv
import io

import pytest

from annotation.crowd import services as crowd
from annotation.models import Assignment, AssignmentStatus, Judgment, JudgmentRevision, Participant
from annotation.services import campaign_create
from tests.browser.annotating import item_in_hand, next_item, press_on_page
from tests.datasets.factories import SchemaFactory

pytestmark = pytest.mark.django_db(transaction=True)


def _study(curator, **options):
    SchemaFactory.create_batch(5)
    gold = [SchemaFactory.create(switchable=value) for value in (True, False)]
    campaign = campaign_create(
        name="sw", task="switchability", items="schemas", k=2, gold_ids=[g.pk for g in gold]
    )
    return crowd.study_link_create(
        campaign=campaign,
        platform="prolific",
        consent="You judge sentences for a research data set.",
        completion_code="DONE7",
        return_code="BACK7",
        screening_items=2,
        pass_mark=1.0,
        user=curator,
        **options,
    )


def _entry_url(link, pid):
    return f"/study/{crowd.study_link_token(link)}/?PROLIFIC_PID={pid}&STUDY_ID=st1&SESSION_ID=se1"


def _enter(page, link, pid):
    """Follow the link: its landing page, then its button (entering is a POST)."""
    page.goto(_entry_url(link, pid))
    page.click("#enter")


def _gold_key(lease_pk):
    item = Assignment.objects.select_related("campaign_item").get(pk=lease_pk).campaign_item
    return "y" if item.gold_answer == "switchable" else "n"


def test_a_participant_passes_screening_works_a_batch_by_keyboard_and_gets_the_code(page, curator):
    link = _study(curator, batch_size=3)
    page.goto(_entry_url(link, "PID0001"))
    page.wait_for_selector("#enter-form")
    page.keyboard.press("Enter")  # the landing page's button has the focus
    page.wait_for_selector("#consent-form")
    assert "research data set" in page.locator("#consent").inner_text()
    page.keyboard.press("Space")  # the box has the focus
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")  # Start
    page.wait_for_url("**/annotation/campaigns/sw/**")
    page.keyboard.press("Enter")  # Start on the annotation page
    page.wait_for_selector("#annotate-form")
    for _ in range(2):  # the screening: the two gold items, answered right
        lease = item_in_hand(page)
        press_on_page(page, _gold_key(lease), "Enter")
        next_item(page, lease)
    participant = Participant.objects.get()
    assert participant.state == "working" and (participant.screening_seen, participant.screening_correct) == (
        2,
        2,
    )

    first = item_in_hand(page)
    press_on_page(page, "y", "Enter")
    next_item(page, first)
    second = item_in_hand(page)
    press_on_page(page, "s")  # skip one
    next_item(page, second)
    assert Assignment.objects.get(pk=second).status == AssignmentStatus.SKIPPED
    third = item_in_hand(page)
    press_on_page(page, "p")  # back to the answer before, and change it
    page.wait_for_selector("#review")
    press_on_page(page, "n", "Enter")
    page.wait_for_selector("#annotate-form input[name=assignment]", state="attached")
    changed = Judgment.objects.get(
        campaign_item=Assignment.objects.get(pk=first).campaign_item, annotator=participant.user
    )
    assert (
        changed.answer == "not_switchable" and JudgmentRevision.objects.filter(judgment=changed).count() == 1
    )
    assert item_in_hand(page) == third
    press_on_page(page, "y", "Enter")
    next_item(page, third)

    # a second entry under the same id (another tab, later) resumes the same participant
    other = page.context.new_page()
    _enter(other, link, "PID0001")
    other.wait_for_url("**/annotation/campaigns/sw/**")
    other.close()
    assert Participant.objects.count() == 1 and Participant.objects.get().entries == 2

    press_on_page(page, "n", "Enter")  # the third real item: the batch is complete
    page.wait_for_url("**/done/")
    assert page.locator("#completion-code").inner_text() == "DONE7"
    assert "submissions/complete?cc=DONE7" in page.locator("#return-to-platform").get_attribute("href")
    participant.refresh_from_db()
    assert participant.state == "done" and participant.answered == 3
    assert Judgment.objects.filter(annotator=participant.user).count() == 5  # 2 gold + 3, never doubled


def test_who_fails_the_screening_gets_the_return_code(page, curator):
    link = _study(curator)
    _enter(page, link, "PID0002")
    page.check("#agree")
    page.click("#start")
    page.wait_for_url("**/annotation/campaigns/sw/**")
    page.keyboard.press("Enter")
    page.wait_for_selector("#annotate-form")
    for _ in range(2):
        lease = item_in_hand(page)
        press_on_page(page, "n" if _gold_key(lease) == "y" else "y", "Enter")  # wrong on purpose
        if _ == 0:
            next_item(page, lease)
    page.wait_for_url("**/done/")
    assert "did not reach its mark" in page.locator("#screened-out").inner_text()
    assert page.locator("#completion-code").inner_text() == "BACK7"
    assert Participant.objects.get().state == "screened_out"
    assert not Judgment.objects.filter(campaign_item__is_gold=False).exists()


def _writing_item_in_hand(page, curator, pid):
    """A participant (``pid``) through a Prolific link to a reason-writing campaign, past
    the consent, with an item in hand: its assignment's id."""
    SchemaFactory.create_batch(3)
    campaign = campaign_create(name="rw", task="reason_writing", items="schemas", k=1)
    link = crowd.study_link_create(campaign=campaign, platform="prolific", consent="ok", user=curator)
    _enter(page, link, pid)
    page.check("#agree")
    page.click("#start")
    page.wait_for_url("**/annotation/campaigns/rw/**")
    page.keyboard.press("Enter")
    page.wait_for_selector("textarea[name=text]")
    return item_in_hand(page)


def test_an_expired_session_brings_the_participant_back_through_the_link_with_the_answer(page, curator):
    from django.contrib.sessions.models import Session

    lease = _writing_item_in_hand(page, curator, "PID0003")
    page.locator("textarea[name=text]").fill("the trophy is the large one, so it cannot fit")
    Session.objects.all().delete()  # the session ends mid-item
    page.locator("textarea[name=text]").press("Enter")
    # no password to sign in with: the study's link takes them back in (its landing page,
    # whose button this browser's binding lets through), to the same item
    page.wait_for_selector("#enter-form")
    page.click("#enter")
    page.wait_for_selector(".restored")
    assert "/annotation/campaigns/rw/" in page.url and item_in_hand(page) == lease
    assert (
        page.locator("textarea[name=text]").input_value() == "the trophy is the large one, so it cannot fit"
    )
    assert Participant.objects.get().entries == 2 and not Judgment.objects.exists()
    page.locator("textarea[name=text]").press("Enter")
    next_item(page, lease)
    assert Judgment.objects.get().text == "the trophy is the large one, so it cannot fit"


def test_a_reload_after_the_session_ended_offers_the_way_back_into_the_study(page, curator):
    """No htmx request to catch it: a reload lands on the sign-in page, which offers the
    study's link this browser remembered; following it resumes the item in hand."""
    from django.contrib.sessions.models import Session

    lease = _writing_item_in_hand(page, curator, "PID0004")
    Session.objects.all().delete()
    page.reload()
    page.wait_for_selector("#login-study #back-to-study")
    assert "/accounts/login/" in page.url
    page.click("#back-to-study")
    page.click("#enter")
    page.wait_for_selector("textarea[name=text]")
    assert item_in_hand(page) == lease and Participant.objects.get().entries == 2


def test_who_ends_early_confirms_gets_the_partial_code_and_is_flagged_in_the_payment_report(
    page, new_page, login, curator
):
    link = _study(curator, batch_size=3, partial_code="HALF7")
    _enter(page, link, "PID0005")
    page.check("#agree")
    page.click("#start")
    page.wait_for_url("**/annotation/campaigns/sw/**")
    page.keyboard.press("Enter")
    page.wait_for_selector("#annotate-form")
    for _ in range(2):  # the screening, passed
        lease = item_in_hand(page)
        press_on_page(page, _gold_key(lease), "Enter")
        next_item(page, lease)
    lease = item_in_hand(page)
    press_on_page(page, "y", "Enter")  # one real item of three
    next_item(page, lease)
    page.click("#study-finish a")
    page.wait_for_selector("#finish-confirm")
    assert "HALF7" in page.locator("#finish-early").inner_text()
    assert "DONE7" not in page.content()
    assert Participant.objects.get().state == "working"  # nothing ends before the confirmation
    page.click("#confirm-finish")
    page.wait_for_url("**/done/")
    assert page.locator("#completion-code").inner_text() == "HALF7"
    assert "your 1 answer is recorded" in page.locator("#ended-early").inner_text()
    assert "submissions/complete?cc=HALF7" in page.locator("#return-to-platform").get_attribute("href")
    assert Participant.objects.get().state == "ended_early"

    curator_page = login(new_page(), curator)
    report = curator_page.request.get("/annotation/campaigns/sw/participants/all.csv").text()
    (row,) = csv.DictReader(io.StringIO(report))
    assert (row["external_id"], row["state"], row["ended_early"], row["code"]) == (
        "PID0005",
        "ended_early",
        "yes",
        "HALF7",
    )
