"""An annotator page that forgives (issue 14), the services: an answer changed in place
while its item is not aggregated (recorded, never doubled, gold counted once) and an
item skipped (its lease released, the skip recorded, never handed back to the skipper)."""

import random
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.agreement.services import campaign_judgments
from annotation.models import Assignment, AssignmentStatus, CampaignAnnotator, Judgment, JudgmentRevision
from annotation.selectors import campaign_annotators, campaign_progress, judgment_export_rows
from annotation.services import (
    JudgmentLocked,
    JudgmentRefused,
    SkipRefused,
    assignment_next,
    assignment_skip,
    campaign_aggregate,
    campaign_create,
    judgment_change,
    judgment_submit,
)
from tests.datasets.factories import SchemaFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign():
    SchemaFactory.create_batch(3)
    return campaign_create(name="sw", task="switchability", items="schemas", k=2)


def _answered(campaign, annotator, answer="switchable"):
    lease = assignment_next(campaign=campaign, annotator=annotator)
    assert lease is not None
    return judgment_submit(annotator=annotator, assignment=lease, answer=answer).judgment


def test_a_change_replaces_the_answer_in_place_and_keeps_the_old_one(campaign, annotator):
    judgment = _answered(campaign, annotator, "switchable")
    item = judgment.campaign_item
    result = judgment_change(annotator=annotator, item=item, answer="not_switchable")
    assert result.changed
    assert Judgment.objects.filter(campaign_item=item).count() == 1  # never doubled
    judgment.refresh_from_db()
    item.refresh_from_db()
    assert judgment.answer == "not_switchable" and item.judgment_count == 1
    [revision] = JudgmentRevision.objects.all()
    assert (revision.judgment_id, revision.answer, revision.revised_by_id) == (
        judgment.pk,
        "switchable",
        annotator.pk,
    )
    assert revision.revised_at is not None


def test_changing_to_the_same_answer_records_no_revision(campaign, annotator):
    judgment = _answered(campaign, annotator, "switchable")
    result = judgment_change(annotator=annotator, item=judgment.campaign_item, answer="switchable")
    assert not result.changed
    assert not JudgmentRevision.objects.exists()


def test_two_changes_keep_two_revisions_in_order(campaign, annotator):
    judgment = _answered(campaign, annotator, "switchable")
    judgment_change(annotator=annotator, item=judgment.campaign_item, answer="not_switchable")
    judgment_change(annotator=annotator, item=judgment.campaign_item, answer="switchable")
    assert list(JudgmentRevision.objects.values_list("answer", flat=True)) == ["switchable", "not_switchable"]
    assert Judgment.objects.get().answer == "switchable"


def test_a_bad_changed_answer_writes_nothing(campaign, annotator):
    judgment = _answered(campaign, annotator, "switchable")
    with pytest.raises(JudgmentRefused, match="answer"):
        judgment_change(annotator=annotator, item=judgment.campaign_item, answer="dunno")
    assert Judgment.objects.get().answer == "switchable"
    assert not JudgmentRevision.objects.exists()


def test_nobody_changes_another_annotators_answer(campaign, annotator, annotator2):
    judgment = _answered(campaign, annotator, "switchable")
    with pytest.raises(JudgmentRefused, match="no answer on this item"):
        judgment_change(annotator=annotator2, item=judgment.campaign_item, answer="not_switchable")
    assert Judgment.objects.get().answer == "switchable"
    assert not JudgmentRevision.objects.exists()


def test_a_change_is_refused_once_the_item_is_aggregated(campaign, annotator, annotator2):
    first = _answered(campaign, annotator, "switchable")
    item = first.campaign_item
    lease = Assignment.objects.create(
        campaign_item=item,
        annotator=annotator2,
        leased_at=timezone.now(),
        expires_at=timezone.now() + timedelta(minutes=10),
    )
    judgment_submit(annotator=annotator2, assignment=lease, answer="switchable")
    # K judgments reached but not aggregated yet: still open to change
    judgment_change(annotator=annotator, item=item, answer="not_switchable")
    judgment_change(annotator=annotator, item=item, answer="switchable")
    campaign_aggregate(campaign=campaign)
    item.refresh_from_db()
    assert item.aggregate  # the campaign's own record of the outcome
    with pytest.raises(JudgmentLocked, match="aggregated"):
        judgment_change(annotator=annotator, item=item, answer="not_switchable")
    assert Judgment.objects.get(pk=first.pk).answer == "switchable"
    assert JudgmentRevision.objects.count() == 2


def test_agreement_and_exports_read_the_changed_answer(campaign, annotator, annotator2):
    for a in (annotator, annotator2):
        for _ in range(2):
            _answered(campaign, a, "switchable")
    changed = Judgment.objects.filter(annotator=annotator).order_by("pk").first()
    assert changed is not None
    judgment_change(annotator=annotator, item=changed.campaign_item, answer="not_switchable")
    rows = {r["judgment_id"]: r for r in judgment_export_rows(campaign=campaign)}
    assert len(rows) == 4  # no row for the old answer
    assert rows[changed.pk]["answer"] == "not_switchable"
    codes = campaign_judgments(campaign=campaign).codes
    assert codes.n_raters == 2
    votes = sorted(codes.categories[i] for i in codes.category_idx)
    assert votes == ["not_switchable", "switchable", "switchable", "switchable"]


def test_a_changed_gold_answer_counts_the_gold_item_once(annotator):
    SchemaFactory.create_batch(2, switchable=True)
    gold = SchemaFactory.create(switchable=False)
    campaign = campaign_create(
        name="g", task="switchability", items="schemas", k=1, gold_ids=[gold.pk], gold_rate=1.0
    )
    lease = assignment_next(campaign=campaign, annotator=annotator, rng=random.Random(1))
    assert lease is not None and lease.campaign_item.is_gold
    judgment_submit(annotator=annotator, assignment=lease, answer="switchable")  # wrong
    member = CampaignAnnotator.objects.get(campaign=campaign, annotator=annotator)
    assert (member.gold_seen, member.gold_correct) == (1, 0)
    judgment_change(annotator=annotator, item=lease.campaign_item, answer="not_switchable")  # right
    member.refresh_from_db()
    assert (member.gold_seen, member.gold_correct) == (1, 1)
    judgment_change(annotator=annotator, item=lease.campaign_item, answer="switchable")  # wrong again
    member.refresh_from_db()
    assert (member.gold_seen, member.gold_correct) == (1, 0)


def test_a_skip_releases_the_lease_and_is_recorded(annotator, annotator2):
    SchemaFactory.create()
    campaign = campaign_create(name="one", task="switchability", items="schemas", k=1)
    lease = assignment_next(campaign=campaign, annotator=annotator)
    assert lease is not None
    assert assignment_next(campaign=campaign, annotator=annotator2) is None  # held by the first
    skipped = assignment_skip(annotator=annotator, assignment=lease)
    assert skipped.status == AssignmentStatus.SKIPPED and skipped.skipped_at is not None
    other = assignment_next(campaign=campaign, annotator=annotator2)
    assert other is not None and other.campaign_item_id == lease.campaign_item_id  # back in the pool
    assert campaign_progress(campaign=campaign)["skipped"] == 1
    rows = {r["username"]: r["skipped"] for r in campaign_annotators(campaign=campaign)}
    assert rows == {annotator.get_username(): 1, annotator2.get_username(): 0}


def test_a_skipped_item_is_never_handed_to_the_skipper_again(annotator):
    SchemaFactory.create_batch(2)
    campaign = campaign_create(name="two", task="switchability", items="schemas", k=1)
    first = assignment_next(campaign=campaign, annotator=annotator)
    assert first is not None
    assignment_skip(annotator=annotator, assignment=first)
    second = assignment_next(campaign=campaign, annotator=annotator)
    assert second is not None and second.campaign_item_id != first.campaign_item_id
    judgment_submit(annotator=annotator, assignment=second, answer="switchable")
    assert assignment_next(campaign=campaign, annotator=annotator) is None


def test_an_answered_item_cannot_be_skipped_and_a_skip_is_the_skippers_own(campaign, annotator, annotator2):
    lease = assignment_next(campaign=campaign, annotator=annotator)
    assert lease is not None
    with pytest.raises(SkipRefused):
        assignment_skip(annotator=annotator2, assignment=lease)
    judgment_submit(annotator=annotator, assignment=lease, answer="switchable")
    lease.refresh_from_db()
    with pytest.raises(SkipRefused, match="answered"):
        assignment_skip(annotator=annotator, assignment=lease)
    lease.refresh_from_db()
    assert lease.status == AssignmentStatus.SUBMITTED


def test_a_second_skip_is_the_same_skip(campaign, annotator):
    lease = assignment_next(campaign=campaign, annotator=annotator)
    assert lease is not None
    first = assignment_skip(annotator=annotator, assignment=lease)
    again = assignment_skip(annotator=annotator, assignment=lease)
    assert again.skipped_at == first.skipped_at
    assert Assignment.objects.filter(status=AssignmentStatus.SKIPPED).count() == 1
