"""An annotator page that forgives (issue 14), in headless Chromium: a participant
finishes items by keyboard, goes back (the "p" key and the browser's Back button) and
changes one answer, skips one; an expired session mid-item brings the participant back to
the same campaign with the typed answer restored; a stale form or a failed request says so
and keeps the answer; the curator's progress poll goes to the sign-in page instead of
nesting it."""

import re

import pytest
from django.contrib.sessions.models import Session

from annotation.models import Assignment, AssignmentStatus, Judgment, JudgmentRevision
from annotation.services import campaign_create
from tests.browser.annotating import item_in_hand, next_item, press_on_page
from tests.datasets.factories import SchemaFactory

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_participant_finishes_by_keyboard_goes_back_changes_one_and_skips_one(page, login, annotator):
    SchemaFactory.create_batch(4)
    campaign_create(name="sw", task="switchability", items="schemas", k=1)
    login(page, annotator)
    page.goto("/annotation/campaigns/sw/")
    page.keyboard.press("Enter")  # Start
    page.wait_for_selector("#annotate-form")
    assert page.locator("#lease .lease-left").inner_text().endswith("left)")  # the time left, ticking

    answered = []
    for key in ("y", "n"):
        lease = item_in_hand(page)
        answered.append(Assignment.objects.get(pk=lease).campaign_item_id)
        press_on_page(page, key, "Enter")
        next_item(page, lease)
    # each item has its own address: the one in hand now
    third = Assignment.objects.get(pk=item_in_hand(page))
    assert page.url.endswith(f"/annotation/campaigns/sw/?item={third.campaign_item_id}")

    # the browser's Back button shows the answer before, inside the campaign, leasing nothing
    page.go_back()
    page.wait_for_selector("#review")
    assert page.url.endswith(f"?item={answered[1]}")
    assert page.locator("input[value=not_switchable]").is_checked()
    page.go_forward()
    page.wait_for_selector("#annotate-form input[name=assignment]", state="attached")
    assert item_in_hand(page) == third.pk and Assignment.objects.count() == 3

    # "s" skips the item in hand: the next one comes, the skip is recorded
    press_on_page(page, "s")
    next_item(page, third.pk)
    third.refresh_from_db()
    assert third.status == AssignmentStatus.SKIPPED
    assert "skipped" in page.locator("#item .message").inner_text()
    fourth = item_in_hand(page)

    # "p" opens the previous answer; "y" and Enter change it, then the item in hand is back
    press_on_page(page, "p")
    page.wait_for_selector("#review")
    assert page.url.endswith(f"?item={answered[1]}")
    assert page.locator("#recent li").count() == 2
    press_on_page(page, "y", "Enter")
    page.wait_for_selector("#annotate-form input[name=assignment]", state="attached")
    assert "was changed" in page.locator("#item .message").inner_text()
    assert item_in_hand(page) == fourth
    changed = Judgment.objects.get(campaign_item_id=answered[1])
    assert changed.answer == "switchable" and Judgment.objects.count() == 2
    assert JudgmentRevision.objects.get().answer == "not_switchable"

    # the last item by keyboard; nothing more (the skipped item is not handed back)
    press_on_page(page, "n", "Enter")
    page.wait_for_selector("#done")
    assert Judgment.objects.count() == 3
    # the recent answers come when their fold is opened (an answer's response leaves them out)
    assert page.locator("#recent li").count() == 1 and "Loading" in page.locator("#recent").text_content()
    page.click("#recent summary")
    page.wait_for_function("() => document.querySelectorAll('#recent li a').length === 3")
    assert "(changed)" in page.locator("#recent").text_content()


@pytest.fixture
def writing():
    SchemaFactory.create_batch(2)
    return campaign_create(name="rw", task="reason_writing", items="schemas", k=1)


def _start_writing(page, login, annotator):
    login(page, annotator)
    page.goto("/annotation/campaigns/rw/")
    page.keyboard.press("Enter")
    page.wait_for_selector("textarea[name=text]")
    page.locator("textarea[name=text]").fill("the trophy is the large one, so it cannot fit")
    return Assignment.objects.get()


def test_an_expired_session_mid_item_returns_to_the_campaign_with_the_answer_restored(
    page, login, annotator, writing
):
    lease = _start_writing(page, login, annotator)
    item_url = f"/annotation/campaigns/rw/?item={lease.campaign_item_id}"
    Session.objects.all().delete()  # the session ends (expired, or a logout in another tab)
    page.locator("textarea[name=text]").press("Enter")
    # the whole page goes to sign in, and signing in returns to the same item
    page.wait_for_url(re.compile(r"/accounts/login/\?next="))
    assert "rw" in page.url and not Judgment.objects.exists()
    page.fill("input[name=username]", annotator.get_username())
    page.fill("input[name=password]", f"pw-{annotator.get_username()}")
    page.click("form button[type=submit]")
    page.wait_for_url(f"**{item_url}")
    page.wait_for_selector(".restored")
    assert (
        page.locator("textarea[name=text]").input_value() == "the trophy is the large one, so it cannot fit"
    )
    page.locator("textarea[name=text]").press("Enter")
    next_item(page, lease.pk)
    assert Judgment.objects.get().text == "the trophy is the large one, so it cannot fit"
    assert Judgment.objects.get().campaign_item_id == lease.campaign_item_id


def test_a_lost_security_token_says_to_reload_and_keeps_the_answer(page, login, annotator, writing):
    lease = _start_writing(page, login, annotator)
    kept = [c for c in page.context.cookies() if c["name"] != "csrftoken"]
    page.context.clear_cookies()
    page.context.add_cookies(kept)
    page.locator("textarea[name=text]").press("Enter")
    page.wait_for_selector(".request-failed")
    assert "Reload the page" in page.locator(".request-failed").inner_text()
    assert page.locator("textarea[name=text]").input_value().startswith("the trophy")
    page.reload()
    page.wait_for_selector(".restored")
    page.locator("textarea[name=text]").press("Enter")
    next_item(page, lease.pk)
    assert Judgment.objects.get(campaign_item_id=lease.campaign_item_id).text.startswith("the trophy")


def test_a_failed_request_says_so_and_keeps_the_answer(page, login, annotator, writing):
    _start_writing(page, login, annotator)
    page.route(
        "**/annotation/campaigns/rw/",
        lambda route: route.abort() if route.request.method == "POST" else route.continue_(),
    )
    page.locator("textarea[name=text]").press("Enter")
    page.wait_for_selector(".request-failed")
    assert "did not answer" in page.locator(".request-failed").inner_text()
    assert page.locator("textarea[name=text]").input_value().startswith("the trophy")
    page.unroute("**/annotation/campaigns/rw/")
    page.route(
        "**/annotation/campaigns/rw/",
        lambda route: (
            route.fulfill(status=500, body="boom") if route.request.method == "POST" else route.continue_()
        ),
    )
    page.locator("textarea[name=text]").press("Enter")
    page.wait_for_function("() => document.querySelector('.request-failed').innerText.includes('(500)')")
    assert page.locator(".request-failed").count() == 1  # one message, the latest
    assert page.locator("textarea[name=text]").input_value().startswith("the trophy")
    assert not Judgment.objects.exists()


def test_the_curators_progress_poll_goes_to_sign_in_when_the_session_ends(page, login, curator, writing):
    login(page, curator)
    page.goto("/annotation/campaigns/rw/curate/")
    page.wait_for_selector("#progress")
    Session.objects.all().delete()
    # the poll runs every 10 s: the page goes to the sign-in page, which returns here
    page.wait_for_url(
        re.compile(r"/accounts/login/\?next=(%2F|/)annotation(%2F|/)campaigns(%2F|/)rw(%2F|/)curate(%2F|/)"),
        timeout=30_000,
    )
    assert page.locator("#progress").count() == 0 and page.locator("input[name=username]").is_visible()
