"""judgment_submit: validation, idempotency, expired leases, counting; judgment_import."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment, AssignmentStatus, CampaignItem, Judgment
from annotation.services import (
    ImportedVote,
    JudgmentRefused,
    LeaseExpired,
    assignment_next,
    campaign_create,
    judgment_import,
    judgment_submit,
)
from tests.datasets.factories import ComVEItemFactory, ReasonFactory, SchemaFactory

pytestmark = pytest.mark.django_db


def _campaign(task="switchability", items="schemas", n=1, k=2, **kw):
    if items == "schemas":
        SchemaFactory.create_batch(n)
    elif items == "reasons":
        ReasonFactory.create_batch(n)
    else:
        ComVEItemFactory.create_batch(n)
    return campaign_create(name="c", task=task, items=items, k=k, **kw)


def test_a_repeated_submission_records_one_judgment_and_returns_the_same_result(annotator):
    campaign = _campaign()
    lease = assignment_next(campaign=campaign, annotator=annotator)
    first = judgment_submit(annotator=annotator, assignment=lease, answer="switchable", duration_ms=1500)
    second = judgment_submit(annotator=annotator, assignment=lease, answer="switchable", duration_ms=1700)
    assert first.created and not second.created
    assert first.judgment.pk == second.judgment.pk
    assert Judgment.objects.count() == 1
    assert lease is not None
    item = CampaignItem.objects.get(pk=lease.campaign_item_id)
    assert item.judgment_count == 1
    assert Judgment.objects.get().duration_ms == 1500
    assert Assignment.objects.get(pk=lease.pk).status == AssignmentStatus.SUBMITTED


def test_a_resend_with_another_answer_keeps_the_first(annotator):
    campaign = _campaign()
    lease = assignment_next(campaign=campaign, annotator=annotator)
    judgment_submit(annotator=annotator, assignment=lease, answer="switchable")
    again = judgment_submit(annotator=annotator, assignment=lease, answer="not_switchable")
    assert again.judgment.answer == "switchable"


def test_an_invalid_answer_is_refused_and_nothing_is_written(annotator):
    campaign = _campaign()
    lease = assignment_next(campaign=campaign, annotator=annotator)
    with pytest.raises(JudgmentRefused, match="answer: 'yes'"):
        judgment_submit(annotator=annotator, assignment=lease, answer="yes")
    assert not Judgment.objects.exists()
    assert CampaignItem.objects.get().judgment_count == 0


def test_someone_elses_assignment_is_refused(annotator, annotator2):
    campaign = _campaign()
    lease = assignment_next(campaign=campaign, annotator=annotator)
    with pytest.raises(JudgmentRefused, match="someone else"):
        judgment_submit(annotator=annotator2, assignment=lease, answer="switchable")
    assert lease is not None
    with pytest.raises(JudgmentRefused, match="not given to you"):
        judgment_submit(annotator=annotator2, item=lease.campaign_item, answer="switchable")
    assert not Judgment.objects.exists()


def test_an_expired_lease_is_accepted_while_the_item_has_room(make_annotators):
    campaign = _campaign(k=2, lease_seconds=60)
    a, b = make_annotators(2)
    now = timezone.now()
    lease = assignment_next(campaign=campaign, annotator=a, now=now)
    result = judgment_submit(
        annotator=a, assignment=lease, answer="switchable", now=now + timedelta(minutes=5)
    )
    assert result.created
    assert result.judgment.duration_ms == 300_000  # no client time: the lease time


def test_an_expired_lease_whose_item_is_now_full_is_refused_with_a_clear_message(make_annotators):
    campaign = _campaign(k=1, lease_seconds=60)
    a, b = make_annotators(2)
    now = timezone.now()
    late = assignment_next(campaign=campaign, annotator=a, now=now)
    later = now + timedelta(seconds=120)
    other = assignment_next(campaign=campaign, annotator=b, now=later)
    judgment_submit(annotator=b, assignment=other, answer="switchable", now=later)
    with pytest.raises(LeaseExpired, match="time for this item ran out"):
        judgment_submit(annotator=a, assignment=late, answer="switchable", now=later)
    assert Judgment.objects.count() == 1
    assert CampaignItem.objects.get().judgment_count == 1


def test_an_expired_lease_is_refused_while_others_hold_the_remaining_places(make_annotators):
    campaign = _campaign(k=1, lease_seconds=60)
    a, b = make_annotators(2)
    now = timezone.now()
    late = assignment_next(campaign=campaign, annotator=a, now=now)
    assignment_next(campaign=campaign, annotator=b, now=now + timedelta(seconds=90))  # b holds the place
    with pytest.raises(LeaseExpired):
        judgment_submit(annotator=a, assignment=late, answer="switchable", now=now + timedelta(seconds=100))


def test_reason_writing_and_comve_check_answers(annotator):
    writing = _campaign(task="reason_writing", k=5)
    lease = assignment_next(campaign=writing, annotator=annotator)
    j = judgment_submit(annotator=annotator, assignment=lease, text="  big things do not fit  ").judgment
    assert (j.answer, j.text) == ("", "big things do not fit")
    ComVEItemFactory.create()
    check = campaign_create(name="chk", task="comve_check", items="comve")
    lease = assignment_next(campaign=check, annotator=annotator)
    with pytest.raises(JudgmentRefused, match="option"):
        judgment_submit(annotator=annotator, assignment=lease, answer="1")
    j = judgment_submit(annotator=annotator, assignment=lease, answer="1", payload={"option": "a"}).judgment
    assert j.payload == {"option": "A"}


def test_a_duration_out_of_range_falls_back_to_the_lease_time(annotator):
    campaign = _campaign()
    now = timezone.now()
    lease = assignment_next(campaign=campaign, annotator=annotator, now=now)
    j = judgment_submit(
        annotator=annotator,
        assignment=lease,
        answer="switchable",
        duration_ms=-5,
        now=now + timedelta(seconds=2),
    ).judgment
    assert j.duration_ms == 2000


def test_imported_campaign_takes_votes_in_bulk_once(make_annotators):
    ReasonFactory.create_batch(2)
    campaign = campaign_create(name="imp", task="reason_plausibility", items="reasons", imported=True)
    annotators = make_annotators(5)
    items = list(campaign.items.all())
    votes = [ImportedVote(item=i, annotator=a, answer="plausible") for i in items for a in annotators]
    assert judgment_import(campaign=campaign, votes=votes) == 10
    assert judgment_import(campaign=campaign, votes=votes) == 0  # idempotent
    assert Judgment.objects.count() == 10
    assert set(CampaignItem.objects.values_list("judgment_count", flat=True)) == {5}


def test_bulk_votes_are_refused_on_a_normal_campaign_or_past_k_or_when_invalid(make_annotators):
    ReasonFactory.create_batch(1)
    normal = campaign_create(name="n", task="reason_plausibility", items="reasons")
    annotators = make_annotators(6)
    item = normal.items.get()
    with pytest.raises(JudgmentRefused, match="only imported campaigns"):
        judgment_import(
            campaign=normal, votes=[ImportedVote(item=item, annotator=annotators[0], answer="plausible")]
        )
    imported = campaign_create(name="i", task="reason_plausibility", items="reasons", imported=True)
    item = imported.items.get()
    with pytest.raises(JudgmentRefused, match="vote 6: .* more than K"):
        judgment_import(
            campaign=imported,
            votes=[ImportedVote(item=item, annotator=a, answer="plausible") for a in annotators],
        )
    with pytest.raises(JudgmentRefused, match="vote 2: answer"):
        judgment_import(
            campaign=imported,
            votes=[
                ImportedVote(item=item, annotator=annotators[0], answer="plausible"),
                ImportedVote(item=item, annotator=annotators[1], answer="dunno"),
            ],
        )
    assert not Judgment.objects.exists()


def test_submit_by_item_on_an_imported_campaign_needs_no_lease(annotator):
    ReasonFactory.create()
    campaign = campaign_create(name="i", task="reason_plausibility", items="reasons", imported=True)
    item = campaign.items.get()
    assert judgment_submit(annotator=annotator, item=item, answer="implausible").created
    assert judgment_submit(annotator=annotator, item=item, answer="implausible").created is False
    assert CampaignItem.objects.get().judgment_count == 1
