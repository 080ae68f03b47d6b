"""Study integrity: a code only for the work done, a screening that skipping cannot pass,
a participant who is a browser and not an id, and no sign-in by a GET (docs/crowd.md)."""

import csv
import io

import pytest
from django.test import Client
from django.urls import reverse
from django.utils.http import urlencode

from annotation.crowd import services as crowd
from annotation.models import Assignment, Judgment, Participant, ParticipantState
from annotation.services import campaign_create
from tests.datasets.factories import SchemaFactory

ANNOTATE = reverse("annotation:campaign-annotate", args=["sw"])


@pytest.fixture
def campaign(db):
    SchemaFactory.create_batch(5)
    gold = [SchemaFactory.create(switchable=value) for value in (True, True, False)]
    return campaign_create(
        name="sw", task="switchability", items="schemas", k=3, gold_ids=[g.pk for g in gold]
    )


def _link(campaign, curator, platform="prolific", **options):
    options = {"completion_code": "FULL1", "return_code": "BACK1", "partial_code": "PART1", **options}
    return crowd.study_link_create(
        campaign=campaign, platform=platform, consent="ok", user=curator, **options
    )


def _url(link, **params):
    return f"/study/{crowd.study_link_token(link)}/?{urlencode(params)}"


def _enter(client, link, **params):
    url = _url(link, **params)
    assert client.get(url).status_code == 200  # the landing page
    return client.post(url)


def _consent(client, link):
    client.post(reverse("study:consent", args=[crowd.study_link_token(link)]), {"agree": "yes"})


def _lease(user):
    return Assignment.objects.select_related("campaign_item").get(annotator=user, status="leased")


def _right(item):
    return item.gold_answer or "switchable"


def _answer(client, user, answer_for=_right):
    lease = _lease(user)
    return client.post(ANNOTATE, {"assignment": lease.pk, "answer": answer_for(lease.campaign_item)})


def _finish(client, link, **data):
    return client.post(reverse("study:finish", args=[crowd.study_link_token(link)]), data)


# --- 1. a code only for the work done ----------------------------------------------------


@pytest.mark.parametrize("state", ["consent", "screening", "working"])
def test_finishing_early_in_any_state_is_confirmed_and_never_gives_the_completion_code(
    client, campaign, curator, state
):
    link = _link(campaign, curator, screening_items=1 if state == "screening" else 0, batch_size=3)
    _enter(client, link, PROLIFIC_PID="EARLY1")
    participant = Participant.objects.get()
    if state != "consent":
        _consent(client, link)
        client.post(ANNOTATE, {"start": "1"})
    if state == "working":
        _answer(client, participant.user)  # one of a batch of 3
    participant.refresh_from_db()
    assert participant.state == state
    token = crowd.study_link_token(link)
    # one click is not enough: the page says what ending now means, and nothing changes
    for unconfirmed in (client.get(reverse("study:finish", args=[token])), _finish(client, link)):
        html = unconfirmed.content.decode()
        assert 'id="finish-confirm"' in html and "PART1" in html and "FULL1" not in html
    participant.refresh_from_db()
    assert participant.state == state
    # whatever else is posted, confirmed: ended early, with the partial code
    done = _finish(client, link, confirm="yes", state="done", answered="3")
    assert done.url == reverse("study:done", args=[token])
    participant.refresh_from_db()
    assert participant.state == ParticipantState.ENDED_EARLY
    page = client.get(done.url).content.decode()
    assert "PART1" in page and "FULL1" not in page and "cc=PART1" in page
    if state == "working":
        assert "your 1 answer is recorded" in page
    else:
        assert "without answering a question" in page and "recorded" not in page
    # and after: the same page, never the completion code
    assert _finish(client, link, confirm="yes").url == done.url
    assert "FULL1" not in client.get(done.url).content.decode()
    assert client.get(ANNOTATE).url == done.url


def test_without_a_partial_code_ending_early_gives_the_return_code_or_none(client, campaign, curator):
    link = _link(campaign, curator, partial_code="", return_code="", batch_size=2)
    _enter(client, link, PROLIFIC_PID="EARLY2")
    _consent(client, link)
    _finish(client, link, confirm="yes")
    page = client.get(reverse("study:done", args=[crowd.study_link_token(link)])).content.decode()
    assert "FULL1" not in page and 'id="completion-code"' not in page
    assert "There is no completion code for this: please return the study on Prolific" in page


def test_the_completion_code_comes_with_a_complete_batch(client, campaign, curator):
    link = _link(campaign, curator, batch_size=2)
    _enter(client, link, PROLIFIC_PID="FULLB")
    _consent(client, link)
    user = Participant.objects.get().user
    client.post(ANNOTATE, {"start": "1"})
    _answer(client, user)
    done = _answer(client, user)
    assert done.url == reverse("study:done", args=[crowd.study_link_token(link)])
    page = client.get(done.url).content.decode()
    assert "Your completion code:" in page and "FULL1" in page and "PART1" not in page
    assert "You answered all 2 questions" in page
    assert Participant.objects.get().state == ParticipantState.DONE


def test_who_ended_early_is_flagged_on_the_participants_page_and_in_the_payment_report(
    client, campaign, curator
):
    link = _link(campaign, curator, batch_size=3)
    _enter(client, link, PROLIFIC_PID="EARLY3")
    _consent(client, link)
    client.post(ANNOTATE, {"start": "1"})
    _answer(client, Participant.objects.get().user)
    _finish(client, link, confirm="yes")
    client.force_login(curator)
    page = client.get(reverse("crowd:participants", args=["sw"])).content.decode()
    assert "ended early" in page and "PART1" in page
    report = client.get(reverse("crowd:payment-report", args=["sw", "all"])).content.decode()
    (row,) = csv.DictReader(io.StringIO(report))
    assert (row["state"], row["ended_early"], row["code"], row["items"]) == (
        "ended_early",
        "yes",
        "PART1",
        "1",
    )


# --- 2. a screening that skipping cannot pass --------------------------------------------


def test_the_screening_is_not_passed_by_skipping(client, campaign, curator):
    link = _link(campaign, curator, screening_items=3, pass_mark=1.0)
    _enter(client, link, PROLIFIC_PID="SKIPPER")
    _consent(client, link)
    participant = Participant.objects.get()
    client.post(ANNOTATE, {"start": "1"})
    _answer(client, participant.user)  # one right
    skip = reverse("annotation:campaign-skip", args=["sw"])
    client.post(skip, {"skip": _lease(participant.user).pk})
    last = client.post(skip, {"skip": _lease(participant.user).pk})  # two skipped
    participant.refresh_from_db()
    assert (participant.screening_seen, participant.screening_correct) == (3, 1)
    assert participant.state == ParticipantState.SCREENED_OUT
    assert last.url == reverse("study:done", args=[crowd.study_link_token(link)])
    page = client.get(last.url).content.decode()
    assert "1 of 3 right" in page and "BACK1" in page and "FULL1" not in page
    assert not Judgment.objects.filter(campaign_item__is_gold=False).exists()


# --- 3. a participant is a browser, not an id --------------------------------------------


@pytest.mark.parametrize(
    ("platform", "first", "second", "kept"),
    [
        (
            "prolific",
            {"PROLIFIC_PID": "VICTIM1", "STUDY_ID": "S1", "SESSION_ID": "X1"},
            {"PROLIFIC_PID": "VICTIM1", "STUDY_ID": "S9", "SESSION_ID": "EVIL"},
            {"STUDY_ID": "S1", "SESSION_ID": "X1"},
        ),
        (
            "mturk",
            {"workerId": "W1", "assignmentId": "A1", "hitId": "H1", "turkSubmitTo": "https://www.mturk.com"},
            {
                "workerId": "W1",
                "assignmentId": "EVIL",
                "hitId": "H1",
                "turkSubmitTo": "https://www.mturk.com",
            },
            {"assignmentId": "A1", "hitId": "H1", "turkSubmitTo": "https://www.mturk.com"},
        ),
        ("link", {"pid": "invited-1"}, {"pid": "invited-1"}, {}),
    ],
)
def test_a_second_browser_with_a_known_id_neither_reads_nor_changes_the_participant(
    client, campaign, curator, platform, first, second, kept
):
    link = _link(campaign, curator, platform=platform, batch_size=2)
    _enter(client, link, **first)
    _consent(client, link)
    participant = Participant.objects.get()
    client.post(ANNOTATE, {"start": "1"})
    answered = _lease(participant.user).campaign_item_id
    _answer(client, participant.user, lambda item: "not_switchable")
    in_hand = _lease(participant.user)

    other = Client()
    landing = other.get(_url(link, **second))
    assert landing.status_code == 200 and "Begin the study" in landing.content.decode()
    refused = other.post(_url(link, **second))
    assert refused.status_code == 409
    assert "open in another browser" in refused.content.decode() and "FULL1" not in refused.content.decode()
    # not signed in as them: no item in hand, no answer to read or change, no finish
    assert other.get(ANNOTATE).status_code == 302 and "/accounts/login/" in other.get(ANNOTATE)["Location"]
    assert other.get(f"{ANNOTATE}?item={answered}").status_code == 302
    change = reverse("annotation:item-change", args=["sw", answered])
    assert other.post(change, {"answer": "switchable"}).status_code == 302
    assert other.post(ANNOTATE, {"assignment": in_hand.pk, "answer": "switchable"}).status_code == 302
    assert other.post(
        reverse("study:finish", args=[crowd.study_link_token(link)]), {"confirm": "yes"}
    ).status_code in (
        302,
        403,
    )
    participant.refresh_from_db()
    assert participant.platform_ids == kept and participant.entries == 1
    assert participant.state == ParticipantState.WORKING
    assert Judgment.objects.get(campaign_item_id=answered).answer == "not_switchable"
    assert Participant.objects.count() == 1

    # the first browser goes on, and its finished code is shown to it alone
    _answer(client, participant.user)
    participant.refresh_from_db()
    assert participant.state == ParticipantState.DONE
    assert "FULL1" in client.post(_url(link, **first)).content.decode()
    replay = Client().post(_url(link, **first))
    assert replay.status_code == 409 and "FULL1" not in replay.content.decode()
    participant.refresh_from_db()
    assert participant.platform_ids == kept


def test_the_binding_cookie_is_signed_http_only_and_only_for_the_links_pages(client, campaign, curator):
    link = _link(campaign, curator)
    response = _enter(client, link, PROLIFIC_PID="COOKIE1")
    (name,) = [n for n in response.cookies if n.startswith("winnow_study_")]
    morsel = response.cookies[name]
    assert morsel["httponly"] and morsel["samesite"] == "Lax"
    assert morsel["path"] == f"/study/{crowd.study_link_token(link)}/"
    # a forged value is no secret
    other = Client()
    other.cookies[name] = "forged"
    other.cookies[name]["path"] = morsel["path"]
    assert other.post(_url(link, PROLIFIC_PID="COOKIE1")).status_code == 409


# --- 4. no sign-in by GET ----------------------------------------------------------------


def test_a_cross_site_get_of_a_study_link_leaves_a_signed_in_curator_signed_in(client, campaign, curator):
    link = _link(campaign, curator)
    client.force_login(curator)
    landing = client.get(_url(link, PROLIFIC_PID="CSRF1"))
    html = landing.content.decode()
    assert landing.status_code == 200 and curator.username in html and "private window" in html
    assert 'id="enter-form"' not in html
    assert not Participant.objects.exists()
    # even a POST (say, from a form the curator was tricked into) does not replace them
    posted = client.post(_url(link, PROLIFIC_PID="CSRF1"))
    assert posted.status_code == 409 and not Participant.objects.exists()
    assert client.get(reverse("annotation:dashboard")).status_code == 200
    assert int(client.session["_auth_user_id"]) == curator.pk


def test_entering_needs_the_landing_pages_csrf_token(campaign, curator):
    link = _link(campaign, curator)
    browser = Client(enforce_csrf_checks=True)
    url = _url(link, PROLIFIC_PID="CSRF2")
    assert browser.post(url).status_code == 403 and not Participant.objects.exists()
    landing = browser.get(url)
    token = landing.context["csrf_token"]
    entered = browser.post(url, {"csrfmiddlewaretoken": str(token)})
    assert entered.status_code == 302 and Participant.objects.get().external_id == "CSRF2"


def test_a_participants_page_shows_no_slug_and_no_log_out(client, campaign, curator):
    link = _link(campaign, curator)
    _enter(client, link, PROLIFIC_PID="PHONE1")
    _consent(client, link)
    page = client.get(ANNOTATE).content.decode()
    assert "Study participant" in page and "Log out" not in page
    assert '<small class="muted">sw</small>' not in page and 'class="participant"' in page


def test_a_participant_made_before_entries_were_bound_is_bound_by_their_next_entry(client, campaign, curator):
    link = _link(campaign, curator)
    _enter(client, link, PROLIFIC_PID="OLD1")
    Participant.objects.update(secret_hash="")  # as the migration leaves earlier participants
    mine = Client()
    assert _enter(mine, link, PROLIFIC_PID="OLD1").status_code == 302  # bound to this browser now
    assert Client().post(_url(link, PROLIFIC_PID="OLD1")).status_code == 409
    assert _enter(mine, link, PROLIFIC_PID="OLD1").status_code == 302
    # a finished one made before: their code to nobody
    Participant.objects.update(secret_hash="", state=ParticipantState.DONE)
    replay = Client().post(_url(link, PROLIFIC_PID="OLD1"))
    assert replay.status_code == 409 and "FULL1" not in replay.content.decode()
