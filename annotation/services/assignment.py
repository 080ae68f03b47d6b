"""Assignment: lease the next item to an annotator, expire leases.

Concurrency (DESIGN section 10: never let an item pass K, never lose or double-count a
judgment). Every write that can change how many judgments an item has or will have (a new
lease, a submitted judgment) holds the item's row lock for its whole transaction:
- PostgreSQL: ``SELECT ... FOR UPDATE SKIP LOCKED`` picks a candidate item nobody is
  working on, then the item's load (judgments + live leases) is counted again in a new
  statement, which in READ COMMITTED sees everything committed before the lock was
  granted. ``judgment_submit`` locks the item with ``FOR UPDATE`` (waiting).
- SQLite: the settings open every transaction with ``BEGIN IMMEDIATE``, so write
  transactions run one at a time and the same counts are exact; ``select_for_update`` is
  a no-op there.
The unique constraints on (item, annotator) for leases and judgments are the last line.

An item's K is its own (``CampaignItem.judgments_needed``: ANLI's third vote) where it has
one, else the campaign's; an item is never handed to its author (``CampaignItem.author``)
nor to another account of the same person (``participation().same_person``).
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.db import connection, transaction
from django.db.backends.utils import CursorWrapper
from django.db.models import Count, Exists, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.errors import AnnotatorPaused, CampaignNotActive, SkipRefused
from annotation.models import (
    Assignment,
    AssignmentStatus,
    Campaign,
    CampaignAnnotator,
    CampaignItem,
    CampaignStatus,
)
from annotation.participation import participation
from core.roles import Actor, signed_in


def _live_leases(now: datetime) -> Q:
    return Q(status=AssignmentStatus.LEASED, expires_at__gt=now)


def _item_load(
    item_id: int, now: datetime, *, exclude_annotator: User | None = None
) -> tuple[int, int, int | None]:
    """(judgments, live leases, the item's own K or None for the campaign's) of an item,
    read in one fresh statement."""
    leases = Assignment.objects.filter(_live_leases(now), campaign_item=OuterRef("pk"))
    if exclude_annotator is not None:
        leases = leases.exclude(annotator=exclude_annotator)
    live = leases.order_by().values("campaign_item").annotate(n=Count("pk")).values("n")
    judged, leased, needed = (
        CampaignItem.objects.filter(pk=item_id)
        .annotate(live=Coalesce(Subquery(live), Value(0)))
        .values_list("judgment_count", "live", "judgments_needed")
        .get()
    )
    return int(judged), int(leased), None if needed is None else int(needed)


def item_k(campaign: Campaign, needed: int | None) -> int:
    """K of one item: its own (``CampaignItem.judgments_needed``: ANLI's third vote, a lower
    K for some items) over the campaign's."""
    return campaign.judgments_per_item if needed is None else int(needed)


@functools.cache
def _next_sql(postgres: bool) -> dict[str, str]:
    """The statements of `assignment_next`, written once: raw SQL because the ORM spent
    more time building these queries than the database spent running them."""
    ci = CampaignItem._meta.db_table
    a = Assignment._meta.db_table
    member = CampaignAnnotator._meta.db_table
    lock = " FOR UPDATE OF m" if postgres else ""
    # On PostgreSQL a lease lost in a crash only returns its item to the pool (an answer
    # sent on it is then refused with a message), so a lease need not wait for the WAL
    # flush: the member query switches synchronous_commit off for this transaction only.
    # Judgments keep the default, synchronous commit.
    async_commit = "set_config('synchronous_commit', 'off', true), " if postgres else ""
    # (table names come from the models; every value is a parameter)
    live = f"SELECT COUNT(*) FROM {a} l WHERE l.campaign_item_id = %s AND l.status = %s AND l.expires_at > %s"  # noqa: S608
    return {
        # the annotator's membership (locked: one request at a time per annotator) and
        # the live lease they already hold, if any
        "member": (
            f"SELECT {async_commit}m.paused, (SELECT x.id FROM {a} x INNER JOIN {ci} i ON i.id = x.campaign_item_id"  # noqa: S608
            f" WHERE x.annotator_id = m.annotator_id AND i.campaign_id = m.campaign_id AND x.status = %s"
            f" AND x.expires_at > %s ORDER BY x.leased_at, x.id LIMIT 1),"
            # the highest K an item of the campaign has of its own (campaignitem_own_k)
            f" (SELECT MAX(o.judgments_needed) FROM {ci} o WHERE o.campaign_id = m.campaign_id"
            " AND o.judgments_needed IS NOT NULL)"
            f" FROM {member} m WHERE m.campaign_id = %s AND m.annotator_id = %s{lock}"
        ),
        # the fullest open item (then the newest) this annotator has not had and did not
        # write, with room left under its K (its own, else the campaign's) after the live
        # leases; PostgreSQL skips items another request holds. The first bound (the
        # highest K of any item) keeps the walk of campaignitem_next a range scan.
        "candidate": (
            f"SELECT c.id FROM {ci} c WHERE c.campaign_id = %s AND NOT c.is_gold AND c.judgment_count < %s"  # noqa: S608
            " AND c.judgment_count < COALESCE(c.judgments_needed, %s)"
            " AND (c.author_id IS NULL OR c.author_id NOT IN ({people}))"
            f" AND NOT EXISTS (SELECT 1 FROM {a} mine WHERE mine.campaign_item_id = c.id AND mine.annotator_id = %s)"
            f" AND (SELECT COUNT(*) FROM {a} l WHERE l.campaign_item_id = c.id AND l.status = %s"
            f" AND l.expires_at > %s) < COALESCE(c.judgments_needed, %s) - c.judgment_count"
            " {rejected}ORDER BY c.judgment_count DESC, c.id DESC LIMIT 1"
        ),
        "lock": " FOR UPDATE OF c SKIP LOCKED" if postgres else "",
        # the lease, written only if the item still has room when counted afresh (a new
        # statement sees every lease committed before the item's lock was granted)
        "lease": (
            f"INSERT INTO {a} (campaign_item_id, annotator_id, status, leased_at, expires_at)"  # noqa: S608
            f" SELECT %s, %s, %s, %s, %s WHERE (SELECT judgment_count - COALESCE(judgments_needed, %s)"
            f" FROM {ci} WHERE id = %s) + ({live}) < 0"
            " RETURNING id"
        ),
    }


def assignment_next(
    *,
    campaign: Campaign,
    annotator: Actor,
    now: datetime | None = None,
    rng: random.Random | None = None,
) -> Assignment | None:
    """Lease the next item for ``annotator``, or None when nothing is left for them.

    An annotator with a live lease gets that lease back (a reload never skips an item).
    Gold items come at ``campaign.gold_rate`` while regular work remains."""
    annotator = signed_in(annotator)
    now = now or timezone.now()
    if campaign.status != CampaignStatus.ACTIVE:
        raise CampaignNotActive.of(name=campaign.name, status=campaign.status)
    k = campaign.judgments_per_item
    sql = _next_sql(connection.vendor == "postgresql")
    when = connection.ops.adapt_datetimefield_value(now)
    leased = AssignmentStatus.LEASED.value
    with transaction.atomic(), connection.cursor() as cursor:
        member_params = [leased, when, campaign.pk, annotator.pk]
        cursor.execute(sql["member"], member_params)
        row = cursor.fetchone()
        if row is None:  # the annotator's first request in this campaign
            CampaignAnnotator.objects.get_or_create(campaign=campaign, annotator=annotator)
            cursor.execute(sql["member"], member_params)
            row = cursor.fetchone()
        paused, current, own_k = row[-3], row[-2], row[-1]
        if paused:
            raise AnnotatorPaused()
        if current is not None:
            return Assignment.objects.select_related("campaign_item").get(pk=current)
        # never an item they wrote, under this account or another of the same person's
        # (a crowd writer who comes back through another study link)
        work = _Work(
            k=k,
            bound=max(k, int(own_k or 0)),
            people=[annotator.pk, *participation().same_person(user=annotator)],
        )
        draw = rng.random() if rng is not None else random.random()
        if campaign.gold_rate > 0 and draw < campaign.gold_rate:
            mine = Assignment.objects.filter(campaign_item=OuterRef("pk"), annotator=annotator)
            gold = (
                CampaignItem.objects.filter(campaign=campaign, is_gold=True)
                .exclude(Exists(mine))
                .order_by("pk")
                .first()
            )
            # gold only while regular work remains for this annotator
            if (
                gold is not None
                and _candidate(cursor, sql, campaign, annotator, work, when, [], lock=False) is not None
            ):
                return _lease(gold.pk, annotator, campaign, now)
        rejected: list[int] = []
        expires = now + timedelta(seconds=campaign.lease_seconds)
        for _ in range(100):
            candidate = _candidate(cursor, sql, campaign, annotator, work, when, rejected)
            if candidate is None:
                return None
            cursor.execute(
                sql["lease"],
                [
                    candidate,
                    annotator.pk,
                    leased,
                    when,
                    connection.ops.adapt_datetimefield_value(expires),
                    k,
                    candidate,
                    candidate,
                    leased,
                    when,
                ],
            )
            created = cursor.fetchone()
            if created is None:
                rejected.append(candidate)  # filled by a transaction that committed meanwhile
                continue
            assignment = Assignment(
                pk=created[0],
                campaign_item_id=candidate,
                annotator=annotator,
                status=AssignmentStatus.LEASED,
                leased_at=now,
                expires_at=expires,
            )
            assignment._state.adding = False
            assignment._state.db = connection.alias
            return assignment
        return None


@dataclass(frozen=True)
class _Work:
    """What bounds an annotator's next item: the campaign's K, the highest K of any item
    (its own K may be over the campaign's), and the accounts whose items are not theirs
    to judge (the annotator and their other accounts: a writer never validates their own
    item)."""

    k: int
    bound: int
    people: list[int]


def _candidate(
    cursor: CursorWrapper,
    sql: dict[str, str],
    campaign: Campaign,
    annotator: User,
    work: _Work,
    when: str | None,
    rejected: list[int],
    *,
    lock: bool = True,
) -> int | None:
    skip = f"AND c.id NOT IN ({', '.join(['%s'] * len(rejected))}) " if rejected else ""
    people = ", ".join(["%s"] * len(work.people))
    cursor.execute(
        sql["candidate"].replace("{people}", people).replace("{rejected}", skip)
        + (sql["lock"] if lock else ""),
        [
            campaign.pk,
            work.bound,
            work.k,
            *work.people,
            annotator.pk,
            AssignmentStatus.LEASED.value,
            when,
            work.k,
            *rejected,
        ],
    )
    row = cursor.fetchone()
    return None if row is None else int(row[0])


def assignment_gold_next(
    *, campaign: Campaign, annotator: Actor, now: datetime | None = None
) -> Assignment | None:
    """Lease the next gold item ``annotator`` has not had (a crowd participant's screening,
    annotation.crowd): their live lease if they hold one, None when no gold item is left."""
    annotator = signed_in(annotator)
    now = now or timezone.now()
    if campaign.status != CampaignStatus.ACTIVE:
        raise CampaignNotActive.of(name=campaign.name, status=campaign.status)
    with transaction.atomic():
        live = (
            Assignment.objects.select_related("campaign_item")
            .filter(
                campaign_item__campaign=campaign,
                annotator=annotator,
                status=AssignmentStatus.LEASED,
                expires_at__gt=now,
            )
            .first()
        )
        if live is not None:
            return live
        CampaignAnnotator.objects.get_or_create(campaign=campaign, annotator=annotator)
        mine = Assignment.objects.filter(campaign_item=OuterRef("pk"), annotator=annotator)
        gold = (
            CampaignItem.objects.filter(campaign=campaign, is_gold=True)
            .exclude(Exists(mine))
            .order_by("pk")
            .first()
        )
        return _lease(gold.pk, annotator, campaign, now) if gold is not None else None


def _lease(item_id: int, annotator: User, campaign: Campaign, now: datetime) -> Assignment:
    return Assignment.objects.create(
        campaign_item_id=item_id,
        annotator=annotator,
        status=AssignmentStatus.LEASED,
        leased_at=now,
        expires_at=now + timedelta(seconds=campaign.lease_seconds),
    )


def assignments_expire(*, campaign: Campaign, now: datetime | None = None) -> int:
    """Mark leases past their time as expired (bookkeeping only: a lease past its time
    already counts as free everywhere)."""
    now = now or timezone.now()
    return Assignment.objects.filter(
        campaign_item__campaign=campaign, status=AssignmentStatus.LEASED, expires_at__lte=now
    ).update(status=AssignmentStatus.EXPIRED)


def assignment_skip(*, annotator: Actor, assignment: Assignment, now: datetime | None = None) -> Assignment:
    """Give an item back without answering it. The lease ends at once (the item is back in
    the pool for the others) and the skip is recorded on the assignment (status
    ``skipped``, ``skipped_at``); since an annotator has one assignment per item, a
    skipped item is never handed to the same annotator again in this campaign."""
    annotator = signed_in(annotator)
    now = now or timezone.now()
    if assignment.annotator_id != annotator.pk:
        raise SkipRefused("This item was given to someone else.")
    with transaction.atomic():
        fresh = Assignment.objects.select_for_update().get(pk=assignment.pk)
        if fresh.status == AssignmentStatus.SKIPPED:
            return fresh  # a repeat (double click): the same result
        if fresh.status == AssignmentStatus.SUBMITTED:
            raise SkipRefused("You have answered this item already; change the answer instead of skipping.")
        fresh.status = AssignmentStatus.SKIPPED
        fresh.skipped_at = now
        fresh.save(update_fields=["status", "skipped_at"])
        participation().after_skip(user=annotator, assignment=fresh)  # e.g. a screening item
        return fresh


def assignment_reopen(*, annotator: Actor, assignment: Assignment, now: datetime | None = None) -> Assignment:
    """Take back an item the annotator skipped: it becomes their item in hand again (a new
    lease), so a skip is never final. The item they held meanwhile goes back to the pool
    unanswered (it is given out again, to them too). Refused when the item is not theirs,
    not skipped, in a campaign that is not active, or has its K judgments and leases."""
    annotator = signed_in(annotator)
    now = now or timezone.now()
    if assignment.annotator_id != annotator.pk:
        raise SkipRefused("This item was given to someone else.")
    with transaction.atomic():
        item = (
            CampaignItem.objects.select_for_update()
            .select_related("campaign")
            .get(pk=assignment.campaign_item_id)
        )
        campaign = item.campaign
        if campaign.status != CampaignStatus.ACTIVE:
            raise CampaignNotActive.of(name=campaign.name, status=campaign.status)
        fresh = Assignment.objects.select_for_update().get(pk=assignment.pk)
        if fresh.status == AssignmentStatus.LEASED and fresh.expires_at > now:
            return fresh  # a repeat (double click): the same result
        if fresh.status != AssignmentStatus.SKIPPED:
            raise SkipRefused(f"Item {item.pk} is not one you skipped.")
        judged, leased, needed = _item_load(item.pk, now, exclude_annotator=annotator)
        k = item_k(campaign, needed)
        if judged + leased >= k:
            raise SkipRefused(
                f"Item {item.pk} has its {k} answers (or holders) already: it no longer needs yours."
            )
        # the item in hand goes back to the pool: one item in hand at a time
        Assignment.objects.filter(
            _live_leases(now), campaign_item__campaign=campaign, annotator=annotator
        ).exclude(pk=fresh.pk).delete()
        fresh.status = AssignmentStatus.LEASED
        fresh.skipped_at = None
        fresh.leased_at = now
        fresh.expires_at = now + timedelta(seconds=campaign.lease_seconds)
        fresh.save(update_fields=["status", "skipped_at", "leased_at", "expires_at"])
        return fresh
