"""assignment_next: K, never twice, leases, gold, pause."""

import random
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment, AssignmentStatus, CampaignStatus
from annotation.services import (
    AnnotatorPaused,
    CampaignNotActive,
    assignment_next,
    assignments_expire,
    campaign_annotator_pause,
    campaign_create,
    campaign_status_set,
    judgment_submit,
)
from tests.datasets.factories import SchemaFactory

pytestmark = pytest.mark.django_db


def _campaign(n=2, k=2, **kw):
    SchemaFactory.create_batch(n, switchable=True)
    return campaign_create(name="c", task="switchability", items="schemas", k=k, **kw)


def test_annotator_never_gets_the_same_item_twice(make_annotators):
    campaign = _campaign(n=3, k=3)
    (a,) = make_annotators(1)
    seen = []
    while (lease := assignment_next(campaign=campaign, annotator=a)) is not None:
        seen.append(lease.campaign_item_id)
        judgment_submit(annotator=a, assignment=lease, answer="switchable")
    assert len(seen) == 3 == len(set(seen))


def test_a_reload_returns_the_lease_in_hand(annotator):
    campaign = _campaign()
    first = assignment_next(campaign=campaign, annotator=annotator)
    again = assignment_next(campaign=campaign, annotator=annotator)
    assert first is not None and again is not None
    assert first.pk == again.pk
    assert Assignment.objects.count() == 1


def test_an_item_with_k_judgments_and_leases_is_not_handed_out(make_annotators):
    campaign = _campaign(n=1, k=2)
    a, b, c = make_annotators(3)
    assert assignment_next(campaign=campaign, annotator=a) is not None
    assert assignment_next(campaign=campaign, annotator=b) is not None
    assert assignment_next(campaign=campaign, annotator=c) is None  # two live leases fill K=2


def test_an_expired_lease_returns_the_item_to_the_pool(make_annotators):
    campaign = _campaign(n=1, k=1, lease_seconds=60)
    a, b = make_annotators(2)
    now = timezone.now()
    lease = assignment_next(campaign=campaign, annotator=a, now=now)
    assert lease is not None
    assert assignment_next(campaign=campaign, annotator=b, now=now + timedelta(seconds=30)) is None
    later = now + timedelta(seconds=61)
    other = assignment_next(campaign=campaign, annotator=b, now=later)
    assert other is not None and other.campaign_item_id == lease.campaign_item_id
    # the one who let it expire does not get it again
    assert assignment_next(campaign=campaign, annotator=a, now=later) is None
    assert assignments_expire(campaign=campaign, now=later) == 1
    assert Assignment.objects.get(pk=lease.pk).status == AssignmentStatus.EXPIRED


def test_items_closest_to_completion_come_first(make_annotators):
    campaign = _campaign(n=3, k=3)
    a, b = make_annotators(2)
    first = assignment_next(campaign=campaign, annotator=a)
    assert first is not None
    judgment_submit(annotator=a, assignment=first, answer="switchable")
    second = assignment_next(campaign=campaign, annotator=b)
    assert second is not None and second.campaign_item_id == first.campaign_item_id


def test_paused_annotator_gets_no_items(annotator, annotator2):
    campaign = _campaign()
    campaign_annotator_pause(campaign=campaign, annotator=annotator)
    with pytest.raises(AnnotatorPaused, match="paused"):
        assignment_next(campaign=campaign, annotator=annotator)
    assert assignment_next(campaign=campaign, annotator=annotator2) is not None
    campaign_annotator_pause(campaign=campaign, annotator=annotator, paused=False)
    assert assignment_next(campaign=campaign, annotator=annotator) is not None


def test_closed_campaign_hands_out_nothing(annotator):
    campaign = _campaign()
    campaign_status_set(campaign=campaign, status=CampaignStatus.CLOSED)
    with pytest.raises(CampaignNotActive):
        assignment_next(campaign=campaign, annotator=annotator)


def test_gold_items_come_at_the_gold_rate_and_are_not_limited_by_k(make_annotators):
    SchemaFactory.create_batch(3, switchable=True)
    gold = SchemaFactory.create(switchable=False)
    campaign = campaign_create(
        name="g", task="switchability", items="schemas", k=1, gold_ids=[gold.pk], gold_rate=1.0
    )
    annotators = make_annotators(3)
    for a in annotators:
        lease = assignment_next(campaign=campaign, annotator=a, rng=random.Random(1))
        assert lease is not None
        assert lease.campaign_item.is_gold  # every annotator gets the gold item, K=1 notwithstanding
        judgment_submit(
            annotator=a, assignment=lease, answer="not_switchable" if a != annotators[0] else "switchable"
        )
    for a in annotators:
        lease = assignment_next(campaign=campaign, annotator=a, rng=random.Random(1))
        assert lease is not None
        assert not lease.campaign_item.is_gold  # gold seen once, then regular work
    members = {m.annotator_id: m for m in campaign.annotators.all()}
    assert (members[annotators[0].pk].gold_seen, members[annotators[0].pk].gold_correct) == (1, 0)
    assert (members[annotators[1].pk].gold_seen, members[annotators[1].pk].gold_correct) == (1, 1)


def test_no_gold_once_regular_work_is_done(annotator):
    SchemaFactory.create(switchable=True)
    gold = SchemaFactory.create(switchable=True)
    campaign = campaign_create(
        name="g", task="switchability", items="schemas", k=1, gold_ids=[gold.pk], gold_rate=0.0
    )
    lease = assignment_next(campaign=campaign, annotator=annotator)
    judgment_submit(annotator=annotator, assignment=lease, answer="switchable")
    assert assignment_next(campaign=campaign, annotator=annotator, rng=random.Random(0)) is None
