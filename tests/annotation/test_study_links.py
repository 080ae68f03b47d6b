"""Study links (issue 14): entry through a platform's link, one participant per external
id, consent, the end with the completion code; refused links; each participant sees only
their own campaign, items and progress."""

from datetime import timedelta

import pytest
from django.core import signing
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode

from annotation.crowd import services as crowd
from annotation.crowd.platforms import PLATFORMS, StudyEntryError, mturk_submit_url
from annotation.errors import AnnotationError
from annotation.models import Assignment, Participant, ParticipantState
from annotation.services import assignment_next, campaign_create, judgment_submit
from tests.datasets.factories import SchemaFactory

PROLIFIC = {"PROLIFIC_PID": "5f0c1a2b3c4d5e6f7a8b9c0d", "STUDY_ID": "s1", "SESSION_ID": "x1"}


@pytest.fixture
def campaign(db):
    SchemaFactory.create_batch(3)
    return campaign_create(name="sw", task="switchability", items="schemas", k=2)


@pytest.fixture
def link(campaign, curator):
    return crowd.study_link_create(campaign=campaign, platform="prolific", consent="I agree.", user=curator)


def _enter(client, link, params=PROLIFIC):
    """Follow the link (its landing page), then enter: the page's button, a POST."""
    url = crowd.study_link_path(link).split("?")[0] + "?" + urlencode(params)
    assert client.get(url).status_code == 200
    return client.post(url)


def _session_ends(client):
    """The session ends (it expired, or the participant signed out elsewhere): the browser
    keeps its other cookies, the participant's binding among them."""
    kept = {name: morsel for name, morsel in client.cookies.items() if name.startswith("winnow_study_")}
    client.logout()
    for name, morsel in kept.items():
        client.cookies[name] = morsel


def test_the_link_to_paste_carries_the_platforms_placeholders(link):
    path = crowd.study_link_path(link)
    assert path.startswith("/study/") and "PROLIFIC_PID={{%PROLIFIC_PID%}}" in path
    assert "STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}" in path
    assert set(PLATFORMS) == {"prolific", "mturk", "link"}


def test_entry_creates_one_participant_who_consents_then_works(client, link, campaign):
    response = _enter(client, link)
    assert response.status_code == 302 and response.url.endswith("/consent/")
    participant = Participant.objects.get()
    assert participant.external_id == PROLIFIC["PROLIFIC_PID"]
    assert participant.platform_ids == {"STUDY_ID": "s1", "SESSION_ID": "x1"}
    assert not participant.user.has_usable_password()
    page = client.get(response.url)
    assert "I agree." in page.content.decode()
    refused = client.post(response.url, {})
    assert refused.status_code == 400 and "Tick" in refused.content.decode()
    started = client.post(response.url, {"agree": "yes"})
    assert started.url == reverse("annotation:campaign-annotate", args=["sw"])
    participant.refresh_from_db()
    assert participant.state == ParticipantState.WORKING
    client.post(started.url, {"start": "1"})
    assert Assignment.objects.filter(annotator=participant.user).count() == 1


def test_a_second_entry_under_the_same_id_resumes_and_never_duplicates(client, link, django_user_model):
    _enter(client, link)
    client.post(reverse("study:consent", args=[crowd.study_link_token(link)]), {"agree": "yes"})
    _session_ends(client)
    again = _enter(client, link, {**PROLIFIC, "SESSION_ID": "x2"})
    assert again.url == reverse("annotation:campaign-annotate", args=["sw"])  # no consent again
    participant = Participant.objects.get()
    assert participant.entries == 2 and participant.platform_ids["SESSION_ID"] == "x2"
    users = django_user_model.objects.filter(username__startswith=f"p{link.pk}-")
    assert users.count() == 1


def test_entry_refusals_are_pages_that_say_why(client, link, curator):
    token = crowd.study_link_token(link)
    tampered = client.get(f"/study/{token[:-3]}abc/", PROLIFIC)
    assert tampered.status_code == 400 and "damaged" in tampered.content.decode()
    missing = client.get(f"/study/{token}/", {"STUDY_ID": "s1"})
    assert missing.status_code == 400 and "PROLIFIC_PID" in missing.content.decode()
    bad_id = client.get(f"/study/{token}/", {"PROLIFIC_PID": "<script>"})
    assert bad_id.status_code == 400 and "is not a participant id" in bad_id.content.decode()
    unknown = client.get(f"/study/{signing.Signer(salt=crowd.SALT).sign('999999')}/", PROLIFIC)
    assert unknown.status_code == 404
    link.expires_at = timezone.now() - timedelta(minutes=1)
    link.save()
    expired = client.get(f"/study/{token}/", PROLIFIC)
    assert expired.status_code == 410 and "expired" in expired.content.decode()
    link.expires_at = None
    link.save()
    crowd.study_link_close(link=link, user=curator)
    closed = client.get(f"/study/{token}/", PROLIFIC)
    assert closed.status_code == 410 and "closed" in closed.content.decode()
    assert not Participant.objects.exists()


def test_a_finished_participant_who_replays_the_link_gets_the_code_not_more_work(client, link):
    link.batch_size = 1  # the completion code is for a finished batch (study integrity)
    link.save()
    _enter(client, link)
    token = crowd.study_link_token(link)
    client.post(reverse("study:consent", args=[token]), {"agree": "yes"})
    annotate = reverse("annotation:campaign-annotate", args=["sw"])
    client.post(annotate, {"start": "1"})
    lease = Assignment.objects.get(status="leased")
    done = client.post(annotate, {"assignment": lease.pk, "answer": "switchable"})
    assert done.url == reverse("study:done", args=[token])
    page = client.get(done.url).content.decode()
    assert link.completion_code in page and "app.prolific.com/submissions/complete?cc=" in page
    _session_ends(client)
    replay = _enter(client, link)
    assert replay.status_code == 409 and link.completion_code in replay.content.decode()
    assert Participant.objects.get().entries == 1


def test_mturk_preview_creates_nobody_and_the_submit_form_posts_to_mturk(client, campaign, curator):
    link = crowd.study_link_create(
        campaign=campaign, platform="mturk", consent="ok", partial_code="PART1", user=curator
    )
    token = crowd.study_link_token(link)
    preview = client.get(f"/study/{token}/", {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "H"})
    assert preview.status_code == 200 and "Accept the HIT" in preview.content.decode()
    assert not Participant.objects.exists()
    params = {
        "workerId": "A1B2C3",
        "assignmentId": "AS1",
        "hitId": "H",
        "turkSubmitTo": "https://evil.example",
    }
    client.post(f"/study/{token}/?{urlencode(params)}")
    client.post(reverse("study:consent", args=[token]), {"agree": "yes"})
    client.post(reverse("study:finish", args=[token]), {"confirm": "yes"})
    page = client.get(reverse("study:done", args=[token])).content.decode()
    assert 'action="https://www.mturk.com/mturk/externalSubmit"' in page  # never another host
    assert 'name="assignmentId" value="AS1"' in page
    assert (
        mturk_submit_url("https://workersandbox.mturk.com/")
        == "https://workersandbox.mturk.com/mturk/externalSubmit"
    )


def test_entries_are_rate_limited_per_address(client, link, settings, monkeypatch):
    monkeypatch.setattr(crowd, "ENTRY_RATE", 2)
    for n in range(2):
        assert _enter(client, link, {"PROLIFIC_PID": f"p{n}"}).status_code == 302
    refused = _enter(client, link, {"PROLIFIC_PID": "p9"})
    assert refused.status_code == 429 and "wait a minute" in refused.content.decode()
    assert Participant.objects.count() == 2


def test_a_participant_sees_only_their_campaign_items_and_progress(
    client, link, campaign, annotator, curator
):
    other = campaign_create(name="other", task="associativity", items="schemas", k=2)
    lease = assignment_next(campaign=campaign, annotator=annotator)
    assert lease is not None
    judgment_submit(annotator=annotator, assignment=lease, answer="switchable")
    _enter(client, link)
    token = crowd.study_link_token(link)
    client.post(reverse("study:consent", args=[token]), {"agree": "yes"})
    listing = client.get(reverse("annotation:campaign-list")).content.decode()
    assert "sw" in listing and "other" not in listing
    assert client.get(reverse("annotation:campaign-annotate", args=[other.name])).status_code == 404
    page = client.get(reverse("annotation:campaign-annotate", args=["sw"])).content.decode()
    assert "0 done" in page  # their own progress, not the annotator's judgment
    # their recent answers: none (the annotator's answer on the same campaign is not theirs)
    recent = client.get(reverse("annotation:campaign-recent", args=["sw"])).content.decode()
    assert "No answers yet." in recent and f"?item={lease.campaign_item_id}" not in recent
    assert client.get(reverse("annotation:campaign-recent", args=[other.name])).status_code == 404
    # another's assignment cannot be answered
    foreign = Assignment.objects.create(
        campaign_item=campaign.items.exclude(pk=lease.campaign_item_id).first(),
        annotator=annotator,
        leased_at=timezone.now(),
        expires_at=timezone.now() + timedelta(minutes=5),
    )
    answer = client.post(
        reverse("annotation:campaign-annotate", args=["sw"]),
        {"assignment": foreign.pk, "answer": "switchable"},
    )
    assert answer.status_code == 404
    # the annotator API is not theirs (screening, batches and checks live on the study page)
    api = client.post("/api/annotation/campaigns/sw/next/", content_type="application/json")
    assert api.status_code == 403 and "study's page" in api.json()["detail"]
    submit = client.post(
        f"/api/annotation/assignments/{foreign.pk}/submit/",
        {"answer": "switchable"},
        content_type="application/json",
    )
    assert submit.status_code == 403
    # curator pages stay closed
    assert client.get(reverse("crowd:links", args=["sw"])).status_code == 403
    assert client.get(reverse("annotation:campaign-detail", args=["sw"])).status_code == 403
    # a participant page of another link is refused
    second = crowd.study_link_create(campaign=other, platform="link", consent="ok", user=curator)
    assert client.post(reverse("study:finish", args=[crowd.study_link_token(second)])).status_code == 403


def test_curator_opens_and_closes_links_and_bad_input_is_named(client, campaign, curator, annotator):
    client.force_login(curator)
    url = reverse("crowd:links", args=["sw"])
    bad = client.post(url, {"platform": "prolific", "consent": " ", "completion_code": "no spaces!"})
    assert bad.status_code == 400
    past = client.post(
        url, {"platform": "link", "consent": "ok", "expires_at": "2000-01-01T00:00", "completion_code": ""}
    )
    assert past.status_code == 400 and "passed already" in past.content.decode()
    created = client.post(
        url, {"platform": "link", "consent": "ok", "completion_code": "DONE42"}, follow=True
    )
    html = created.content.decode()
    assert "pid=PARTICIPANT" in html and "DONE42" in html
    prolific = client.post(url, {"platform": "prolific", "consent": "ok"}, follow=True).content.decode()
    # the placeholders as Prolific wants them, not percent-encoded
    assert (
        "?PROLIFIC_PID={{%PROLIFIC_PID%}}&amp;STUDY_ID={{%STUDY_ID%}}&amp;SESSION_ID={{%SESSION_ID%}}"
        in prolific
    )
    link = campaign.study_links.get(platform="link")
    client.post(reverse("crowd:link-close", args=["sw", link.pk]))
    link.refresh_from_db()
    assert link.status == "closed"
    with pytest.raises(AnnotationError):
        crowd.study_link_create(campaign=campaign, platform="link", consent="x", user=annotator)
    with pytest.raises(StudyEntryError):
        crowd.study_link_create(campaign=campaign, platform="nope", consent="x", user=curator)


def test_existing_participants_move_from_the_annotator_to_the_participant_role(client, link, annotator):
    """The data migration (annotation 0010) on a database whose participants were made
    annotators: they hold the participant role after it, and ordinary annotators keep theirs."""
    import importlib
    from types import SimpleNamespace

    from django.apps import apps
    from django.db import connection

    migration = importlib.import_module("annotation.migrations.0010_participant_role")
    _enter(client, link)
    user = Participant.objects.get().user
    migration.backwards(apps, SimpleNamespace(connection=connection))  # as before the role
    assert list(user.groups.values_list("name", flat=True)) == ["annotator"]
    migration.forwards(apps, SimpleNamespace(connection=connection))
    assert list(user.groups.values_list("name", flat=True)) == ["participant"]
    assert list(annotator.groups.values_list("name", flat=True)) == ["annotator"]
    migration.forwards(apps, SimpleNamespace(connection=connection))  # again: nothing doubled
    assert user.groups.count() == 1


def test_a_participant_whose_session_ended_on_a_full_page_is_told_how_back(client, link):
    """A reload after the session ended (no htmx, so no way to the study's link in the
    page): the sign-in page tells a participant to come back through their study."""
    response = client.get(reverse("annotation:campaign-annotate", args=["sw"]))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    page = client.get(response["Location"]).content.decode()
    assert 'id="login-study"' in page and "You have no password here" in page
    plain = client.get(reverse("login") + "?next=/releases/").content.decode()
    assert 'id="login-study"' not in plain
