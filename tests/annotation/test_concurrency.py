"""Many annotators asking and answering at once never push an item past K, never judge
an item twice, and never lose a judgment."""

import threading
from collections import Counter

import pytest
from django.db import connection, connections
from django.db.models import F

from annotation.models import CampaignItem, Judgment
from annotation.services import LeaseExpired, assignment_next, campaign_create, judgment_submit
from tests.datasets.factories import SchemaFactory


def _run_crowd(campaign, annotators, *, resend_every=3):
    """Every annotator, in its own thread, leases and answers until nothing is left.
    Every third answer is sent twice (a double click). Returns (created, repeats, errors)."""
    created: Counter[int] = Counter()
    repeats: Counter[int] = Counter()
    errors = []
    start = threading.Barrier(len(annotators))

    def work(user):
        try:
            start.wait()
            n = 0
            while True:
                lease = assignment_next(campaign=campaign, annotator=user)
                if lease is None:
                    break
                n += 1
                answer = "switchable" if (user.pk + lease.campaign_item_id) % 2 else "not_switchable"
                try:
                    result = judgment_submit(annotator=user, assignment=lease, answer=answer)
                except LeaseExpired:  # cannot happen with a 10-minute lease; counted as an error below
                    errors.append(f"{user.username}: lease expired")
                    continue
                created[user.pk] += int(result.created)
                if n % resend_every == 0:
                    again = judgment_submit(annotator=user, assignment=lease, answer=answer)
                    repeats[user.pk] += int(not again.created and again.judgment.pk == result.judgment.pk)
        except Exception as exc:  # noqa: BLE001 - reported by the test
            errors.append(f"{user.username}: {exc!r}")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, args=(u,)) for u in annotators]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not any(t.is_alive() for t in threads), "a worker hung"
    return created, repeats, errors


def _assert_full_and_exact(campaign, created, repeats):
    k = campaign.judgments_per_item
    items = CampaignItem.objects.filter(campaign=campaign)
    per_item = Counter(
        Judgment.objects.filter(campaign_item__campaign=campaign).values_list("campaign_item_id", flat=True)
    )
    for item in items:
        assert item.judgment_count == k, (item.pk, item.judgment_count)
        assert per_item[item.pk] == k, (item.pk, per_item[item.pk])
    pairs = Counter(
        Judgment.objects.filter(campaign_item__campaign=campaign).values_list(
            "campaign_item_id", "annotator_id"
        )
    )
    assert max(pairs.values()) == 1  # no annotator judged an item twice
    assert sum(created.values()) == Judgment.objects.count() == items.count() * k  # none lost, none doubled
    assert sum(repeats.values()) > 0  # the double submissions did happen and returned the same judgment


@pytest.mark.postgres
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_fifty_annotators_at_once_on_postgresql(make_annotators):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: set DATABASE_URL=postgres://... (row locks with SKIP LOCKED)")
    SchemaFactory.create_batch(40)
    campaign = campaign_create(name="crowd", task="switchability", items="schemas", k=3)
    annotators = make_annotators(50, prefix="crowd")
    created, repeats, errors = _run_crowd(campaign, annotators)
    assert errors == []
    _assert_full_and_exact(campaign, created, repeats)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_several_annotators_at_once_on_sqlite(make_annotators):
    if connection.vendor != "sqlite":
        pytest.skip("the SQLite fallback (BEGIN IMMEDIATE) is tested on SQLite")
    SchemaFactory.create_batch(12)
    campaign = campaign_create(name="crowd", task="switchability", items="schemas", k=3)
    annotators = make_annotators(8, prefix="crowd")
    created, repeats, errors = _run_crowd(campaign, annotators)
    assert errors == []
    _assert_full_and_exact(campaign, created, repeats)


@pytest.mark.postgres
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_thirty_annotators_at_once_give_each_item_its_own_k_and_never_their_own_item(make_annotators):
    """Items with a K of their own (1, or 4 over the campaign's 3) and items written by some
    of the annotators (issue 27's validation): at once, each item gets exactly its own K and
    no author judges their item."""
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: set DATABASE_URL=postgres://... (row locks with SKIP LOCKED)")
    SchemaFactory.create_batch(30)
    campaign = campaign_create(name="own-k", task="switchability", items="schemas", k=3)
    annotators = make_annotators(30, prefix="own")
    ids = list(CampaignItem.objects.filter(campaign=campaign).order_by("pk").values_list("pk", flat=True))
    CampaignItem.objects.filter(pk__in=ids[:10]).update(judgments_needed=1)
    CampaignItem.objects.filter(pk__in=ids[10:20]).update(judgments_needed=4)
    for n, item_id in enumerate(ids):
        CampaignItem.objects.filter(pk=item_id).update(author=annotators[n % 30])
    created, _, errors = _run_crowd(campaign, annotators)
    assert errors == []
    # An annotator who asks while the last open item is locked by another's answer (SKIP
    # LOCKED) is told nothing is left; they come back later, as on the page.
    for user in annotators:
        while (lease := assignment_next(campaign=campaign, annotator=user)) is not None:
            created[user.pk] += int(
                judgment_submit(annotator=user, assignment=lease, answer="switchable").created
            )
    expected = {pk: 1 if n < 10 else 4 if n < 20 else 3 for n, pk in enumerate(ids)}
    per_item = Counter(
        Judgment.objects.filter(campaign_item__campaign=campaign).values_list("campaign_item_id", flat=True)
    )
    assert dict(per_item) == expected
    assert (
        dict(CampaignItem.objects.filter(campaign=campaign).values_list("pk", "judgment_count")) == expected
    )
    assert not Judgment.objects.filter(
        campaign_item__campaign=campaign, annotator=F("campaign_item__author")
    ).exists()
    assert sum(created.values()) == sum(expected.values())
