"""Screening, batches, quality control and the payment report of study links (issue 14)."""

import csv
import io

import pytest
from django.urls import reverse

from annotation.crowd import services as crowd
from annotation.crowd.selectors import participant_rows
from annotation.errors import AnnotationError
from annotation.models import Assignment, CampaignAnnotator, Participant, ParticipantState
from annotation.services import assignment_next, campaign_create, judgment_submit
from tests.datasets.factories import SchemaFactory


@pytest.fixture
def campaign(db):
    SchemaFactory.create_batch(4)
    gold = [SchemaFactory.create(switchable=value) for value in (True, True, False)]
    return campaign_create(
        name="sw", task="switchability", items="schemas", k=3, gold_ids=[g.pk for g in gold]
    )


def _link(campaign, curator, **options):
    return crowd.study_link_create(
        campaign=campaign, platform="prolific", consent="ok", return_code="NOPE1", user=curator, **options
    )


def _join(client, link, pid):
    token = crowd.study_link_token(link)
    client.post(f"/study/{token}/?PROLIFIC_PID={pid}&STUDY_ID=S&SESSION_ID=X")
    client.post(reverse("study:consent", args=[token]), {"agree": "yes"})
    return token


def _work(client, user, answer_for, limit=20):
    """Answer every item handed out through the page, the way the page sends answers."""
    url = reverse("annotation:campaign-annotate", args=["sw"])
    response = client.post(url, {"start": "1"})
    answered = 0
    while answered < limit:
        if response.status_code == 302 and "/done/" in response.url:
            return answered, response
        lease = (
            Assignment.objects.filter(annotator=user, status="leased").select_related("campaign_item").first()
        )
        if lease is None:
            return answered, response
        response = client.post(
            url, {"assignment": lease.pk, "answer": answer_for(lease.campaign_item), "duration_ms": 400}
        )
        answered += 1
    return answered, response


def _right(item):
    return item.gold_answer or "switchable"


def _wrong(item):
    if item.is_gold:
        return "not_switchable" if item.gold_answer == "switchable" else "switchable"
    return "switchable"


def test_a_participant_who_passes_the_screening_works_a_batch_then_gets_the_code(client, campaign, curator):
    link = _link(campaign, curator, screening_items=3, pass_mark=0.6, batch_size=2)
    token = _join(client, link, "PASS1")
    participant = Participant.objects.get()
    assert participant.state == ParticipantState.SCREENING
    answered, response = _work(client, participant.user, _right)
    participant.refresh_from_db()
    assert (participant.screening_seen, participant.screening_correct) == (3, 3)
    assert participant.answered == 2 and answered == 5  # 3 screening, then a batch of 2
    assert participant.state == ParticipantState.DONE
    assert response.url == reverse("study:done", args=[token])
    page = client.get(response.url).content.decode()
    assert link.completion_code in page and "NOPE1" not in page


def test_the_progress_line_counts_the_qualification_then_the_batch(client, campaign, curator):
    """A participant's progress is theirs to finish: the screening questions, then their
    batch; not the campaign's items."""
    _join(client, _link(campaign, curator, screening_items=3, pass_mark=0.6, batch_size=2), "LINE1")
    url = reverse("annotation:campaign-annotate", args=["sw"])
    participant = Participant.objects.get()
    response = client.post(url, {"start": "1"}, headers={"HX-Request": "true"})
    assert "Qualification: 0 of 3 answered" in response.content.decode()
    for _ in range(3):
        lease = Assignment.objects.get(annotator=participant.user, status="leased")
        response = client.post(
            url,
            {"assignment": lease.pk, "answer": _right(lease.campaign_item)},
            headers={"HX-Request": "true"},
        )
    html = response.content.decode()
    assert "0 of 2 done in your batch" in html and "about" not in html
    lease = Assignment.objects.get(annotator=participant.user, status="leased")
    assert not lease.campaign_item.is_gold
    html = client.post(
        url, {"assignment": lease.pk, "answer": "switchable"}, headers={"HX-Request": "true"}
    ).content.decode()
    assert "1 of 2 done in your batch" in html


def test_who_fails_the_screening_ends_politely_with_the_return_code(client, campaign, curator):
    link = _link(campaign, curator, screening_items=3, pass_mark=0.6)
    token = _join(client, link, "FAIL1")
    participant = Participant.objects.get()
    answered, response = _work(client, participant.user, _wrong)
    participant.refresh_from_db()
    assert answered == 3 and participant.state == ParticipantState.SCREENED_OUT
    assert participant.answered == 0  # no real item was handed out
    page = client.get(reverse("study:done", args=[token])).content.decode()
    assert "NOPE1" in page and "did not reach its mark" in page and "0 of 3 right" in page
    assert "submissions/complete?cc=NOPE1" in page
    # the annotate page sends them back to the code; the link replayed refuses more work
    assert client.get(reverse("annotation:campaign-annotate", args=["sw"])).url.endswith("/done/")
    kept = {name: morsel for name, morsel in client.cookies.items() if name.startswith("winnow_study_")}
    client.logout()  # the session ends; the browser keeps its binding to the participant
    client.cookies.update(kept)
    replay = client.post(f"/study/{token}/?PROLIFIC_PID=FAIL1")
    assert replay.status_code == 409 and "NOPE1" in replay.content.decode()


def test_fast_answers_are_flagged_and_low_gold_accuracy_pauses(client, campaign, curator, settings):
    link = _link(campaign, curator, min_seconds=1.0, gold_pause_below=0.5, gold_pause_after=2)
    campaign.gold_rate = 1.0  # every hand-out a gold item while real work remains
    campaign.save()
    _join(client, link, "FASTW")
    participant = Participant.objects.get()
    _work(client, participant.user, _wrong, limit=6)
    participant.refresh_from_db()
    member = CampaignAnnotator.objects.get(campaign=campaign, annotator=participant.user)
    assert member.gold_seen >= 2 and member.paused
    page = client.post(reverse("annotation:campaign-annotate", args=["sw"]), {"start": "1"}, follow=True)
    assert "paused" in page.content.decode()
    link.gold_pause_below = 0
    link.save()


def test_rows_report_time_gold_majority_and_the_payment_files(client, campaign, curator, make_annotators):
    link = _link(campaign, curator)
    others = make_annotators(2, prefix="maj")
    for user in others:
        while (lease := assignment_next(campaign=campaign, annotator=user)) is not None:
            judgment_submit(annotator=user, assignment=lease, answer="switchable", duration_ms=2000)
    _join(client, link, "MAJ1")
    participant = Participant.objects.get()
    _work(client, participant.user, lambda item: "not_switchable")  # against the others
    (row,) = participant_rows(campaign=campaign)
    assert row["items"] == 4 and row["median_seconds"] == 0.4
    assert row["majority_agreement"] == 0.0 and row["compared"] == 4
    with pytest.raises(AnnotationError, match="say why"):
        crowd.participant_decide(participant=participant, decision="reject", user=curator)
    client.force_login(curator)
    url = reverse("crowd:participants", args=["sw"])
    assert "MAJ1" in client.get(url).content.decode()
    client.post(url, {"participant": participant.pk, "decision": "approve", "bonus": "1.50", "note": ""})
    participant.refresh_from_db()
    assert participant.decision == "approve" and str(participant.bonus) == "1.50"
    bad = client.post(url, {"participant": participant.pk, "decision": "approve", "bonus": "-3"})
    assert bad.status_code == 400

    def report(kind):
        return client.get(reverse("crowd:payment-report", args=["sw", kind])).content.decode()

    table = list(csv.DictReader(io.StringIO(report("all"))))
    assert table[0]["external_id"] == "MAJ1" and table[0]["decision"] == "approve"
    assert table[0]["study_id"] == "S" and table[0]["bonus"] == "1.50"
    assert report("prolific-approve").strip() == "MAJ1"
    assert report("prolific-bonus").strip() == "MAJ1,1.50"
    assert report("mturk").strip() == "AssignmentId,WorkerId,HITId,Approve,Reject"
    assert client.get(reverse("crowd:payment-report", args=["sw", "nope"])).status_code == 404
    client.force_login(others[0])
    assert client.get(url).status_code == 403
    assert client.get(reverse("crowd:payment-report", args=["sw", "all"])).status_code == 403


def test_screening_needs_enough_gold_items(campaign, curator):
    with pytest.raises(AnnotationError, match="has 3 gold items"):
        _link(campaign, curator, screening_items=5)
