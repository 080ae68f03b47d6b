"""Writes of the annotation app: campaigns, leases, judgments, aggregation, adjudication.

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
"""

from __future__ import annotations

import functools
import json
import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, connection, models, transaction
from django.db.models import Count, Exists, F, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.text import slugify

from annotation import aggregation_rules as rules
from annotation.errors import (
    AnnotationError,
    AnnotatorPaused,
    CampaignError,
    CampaignNotActive,
    JudgmentRefused,
    LeaseExpired,
)
from annotation.models import (
    Adjudication,
    Assignment,
    AssignmentStatus,
    Campaign,
    CampaignAnnotator,
    CampaignItem,
    CampaignStatus,
    Judgment,
    Task,
)
from annotation.switching import bracketed_sentence, switch_candidates
from annotation.tasks_registry import ITEM_KINDS, AnswerError, answer_clean, answer_key, task_spec
from datasets.models import ComVEDataset, ComVEItem, ComVESplit, Reason, ReasonOrigin, Schema

# ---------------------------------------------------------------------------------------
# Campaigns

ITEM_FILTERS: dict[str, dict[str, str]] = {
    # field name accepted in --filter -> kind of value
    "schemas": {
        "collection": "str",
        "source": "str",
        "answer": "str",
        "external_id": "str",
        "switchable": "bool",
        "associative": "bool",
        "import_batch": "int",
    },
    "reasons": {
        "origin": "str",
        "label": "str",
        "source_label": "str",
        "knowledge_type": "str",
        "schema__collection": "str",
        "schema": "int",
        "import_batch": "int",
    },
    "comve": {
        "dataset": "str",
        "split": "str",
        "has_a": "bool",
        "has_b": "bool",
        "has_c": "bool",
        "needs_rewrite": "bool",
        "import_batch": "int",
    },
}

ITEM_MODELS: dict[str, type[models.Model]] = {"schemas": Schema, "reasons": Reason, "comve": ComVEItem}
ITEM_FIELD = {"schemas": "schema", "reasons": "reason", "comve": "comve_item"}


def _filter_value(kind: str, field_name: str, raw: Any) -> Any:
    allowed = ITEM_FILTERS[kind]
    if field_name not in allowed:
        raise CampaignError(
            f"filter {field_name!r}: not a filter for {kind}; use one of {', '.join(sorted(allowed))}"
        )
    text = str(raw).strip()
    if text.lower() in ("none", "null"):
        return None
    if allowed[field_name] == "bool":
        if text.lower() in ("1", "true", "yes"):
            return True
        if text.lower() in ("0", "false", "no"):
            return False
        raise CampaignError(f"filter {field_name!r}: {text!r} is not true/false/none")
    if allowed[field_name] == "int":
        try:
            return int(text)
        except ValueError:
            raise CampaignError(f"filter {field_name!r}: {text!r} is not a number") from None
    return text


def _selected(kind: str, filters: dict[str, Any], ids: Sequence[int] | None) -> models.QuerySet:
    qs = ITEM_MODELS[kind].objects.all()  # type: ignore[attr-defined]
    for name, raw in (filters or {}).items():
        value = _filter_value(kind, name, raw)
        qs = qs.filter(**({f"{name}__isnull": True} if value is None else {name: value}))
    if ids is not None:
        wanted = {int(i) for i in ids}
        found = set(qs.filter(pk__in=wanted).values_list("pk", flat=True))
        missing = sorted(wanted - found)
        if missing:
            raise CampaignError(f"ids: no {kind} with id {', '.join(map(str, missing[:10]))} (after filters)")
        qs = qs.filter(pk__in=wanted)
    return qs.order_by("pk")


def gold_answer_for(task: str, obj: Any) -> str:
    """The known answer of an item used as gold; CampaignError when it has none."""
    answer = ""
    if task == Task.SWITCHABILITY and obj.switchable is not None:
        answer = "switchable" if obj.switchable else "not_switchable"
    elif task == Task.ASSOCIATIVITY and obj.associative is not None:
        answer = "associative" if obj.associative else "not_associative"
    elif task == Task.REASON_PLAUSIBILITY and obj.label in ("positive", "negative"):
        answer = "plausible" if obj.label == "positive" else "implausible"
    elif task == Task.KNOWLEDGE_TYPE and obj.knowledge_type:
        answer = obj.knowledge_type
    elif task == Task.COMVE_CHECK and obj.false_index is not None:
        answer = f"{obj.false_index}:{obj.correct_option}" if _has_options(obj) else str(obj.false_index)
    if not answer:
        raise CampaignError(f"gold id {obj.pk}: the item has no known answer for {task}")
    return answer


def _has_options(comve: ComVEItem | None) -> bool:
    return bool(comve and comve.option_a and comve.option_b and comve.option_c and comve.correct_option)


def campaign_create(
    *,
    name: str,
    task: str,
    items: str,
    filters: dict[str, Any] | None = None,
    ids: Sequence[int] | None = None,
    k: int | None = None,
    gold_ids: Sequence[int] | None = None,
    lease_seconds: int = 600,
    gold_rate: float = 0.0,
    instructions: str | None = None,
    slots: int = 0,
    created_by: Any = None,
    imported: bool = False,
) -> Campaign:
    """Create a campaign over the chosen items (a data set, a filter, a list of ids).

    ``items`` is the kind: schemas, reasons, comve, or slots (empty writing slots for
    ComVE writing; ``slots`` says how many)."""
    if task not in Task.values:
        raise CampaignError(f"task: {task!r} is not one of {', '.join(Task.values)}")
    spec = task_spec(task)
    if items not in ITEM_KINDS:
        raise CampaignError(f"items: {items!r} is not one of {', '.join(ITEM_KINDS)}")
    if items not in spec.item_kinds:
        raise CampaignError(f"items: {spec.title} works on {' or '.join(spec.item_kinds)}, not {items}")
    if not name or slugify(name) != name:
        raise CampaignError(f"name: {name!r} must be a slug (letters, digits, - and _)")
    if Campaign.objects.filter(name=name).exists():
        raise CampaignError(f"name: a campaign called {name!r} exists already")
    k = spec.default_k if k is None else int(k)
    if not 1 <= k <= 100:
        raise CampaignError(f"k: {k} is not between 1 and 100")
    if not 30 <= int(lease_seconds) <= 7 * 86400:
        raise CampaignError(f"lease: {lease_seconds} seconds is not between 30 and 604800")
    if not 0.0 <= float(gold_rate) <= 1.0:
        raise CampaignError(f"gold_rate: {gold_rate} is not between 0 and 1")
    if gold_ids and (spec.writes_text or spec.writes_comve):
        raise CampaignError(f"gold ids: {spec.title} has no right answer to check")

    selection: dict[str, Any] = {"items": items, "filters": dict(filters or {})}
    if ids is not None:
        selection["ids"] = [int(i) for i in ids]
    with transaction.atomic():
        campaign = Campaign.objects.create(
            name=name,
            task=task,
            judgments_per_item=k,
            lease_seconds=int(lease_seconds),
            gold_rate=float(gold_rate),
            instructions=spec.instructions
            if instructions is None or not instructions.strip()
            else instructions,
            selection=selection,
            created_by=created_by,
            imported=imported,
        )
        rows: list[CampaignItem] = []
        if items == "slots":
            if filters or ids:
                raise CampaignError("slots: writing slots take no filter or ids")
            if not 1 <= int(slots) <= 10000:
                raise CampaignError(f"slots: {slots} is not between 1 and 10000")
            selection["slots"] = int(slots)
            rows = [CampaignItem(campaign=campaign) for _ in range(int(slots))]
        else:
            qs = _selected(items, filters or {}, ids)
            gold_set = {int(g) for g in gold_ids or ()}
            if task == Task.COMVE_CHECK:
                qs = qs.filter(false_index__isnull=False).exclude(statement_0="")
            main_ids = [pk for pk in qs.values_list("pk", flat=True) if pk not in gold_set]
            if not main_ids:
                raise CampaignError(f"items: the selection of {items} is empty")
            fk = ITEM_FIELD[items]
            rows = [CampaignItem(campaign=campaign, **{f"{fk}_id": pk}) for pk in main_ids]
            if gold_set:
                golds = ITEM_MODELS[items].objects.filter(pk__in=gold_set)  # type: ignore[attr-defined]
                found = {g.pk: g for g in golds}
                missing = sorted(gold_set - set(found))
                if missing:
                    raise CampaignError(f"gold ids: no {items} with id {', '.join(map(str, missing[:10]))}")
                for pk in sorted(found):
                    rows.append(
                        CampaignItem(
                            campaign=campaign,
                            is_gold=True,
                            gold_answer=gold_answer_for(task, found[pk]),
                            **{f"{fk}_id": pk},
                        )
                    )
                selection["gold_ids"] = sorted(found)
        CampaignItem.objects.bulk_create(rows, batch_size=1000)
        campaign.selection = selection
        campaign.save(update_fields=["selection"])
        if connection.vendor == "postgresql" and len(rows) >= 200:
            transaction.on_commit(_analyze_campaign_items)
    return campaign


def _analyze_campaign_items() -> None:
    """Fresh planner statistics after a bulk insert. Until autovacuum's next ANALYZE the
    planner believes the new campaign has almost no items and sorts all of them on every
    assignment_next instead of walking the campaignitem_next index (100 ms instead of 1 ms
    at 4,000 items)."""
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {connection.ops.quote_name(CampaignItem._meta.db_table)}")


def campaign_status_set(*, campaign: Campaign, status: str) -> Campaign:
    if status not in CampaignStatus.values:
        raise CampaignError(f"status: {status!r} is not one of {', '.join(CampaignStatus.values)}")
    Campaign.objects.filter(pk=campaign.pk).update(status=status)
    campaign.status = status
    return campaign


def campaign_annotator_pause(*, campaign: Campaign, annotator: Any, paused: bool = True) -> CampaignAnnotator:
    """A curator pauses (or lets go on) an annotator: a paused annotator gets no items."""
    with transaction.atomic():
        member, _ = CampaignAnnotator.objects.get_or_create(campaign=campaign, annotator=annotator)
        if member.paused != paused:
            member.paused = paused
            member.save(update_fields=["paused"])
    return member


# ---------------------------------------------------------------------------------------
# Assignment


def _live_leases(now: datetime) -> Q:
    return Q(status=AssignmentStatus.LEASED, expires_at__gt=now)


def _item_load(item_id: int, now: datetime, *, exclude_annotator: Any = None) -> tuple[int, int]:
    """(judgments, live leases) of an item, read in one fresh statement."""
    leases = Assignment.objects.filter(_live_leases(now), campaign_item=OuterRef("pk"))
    if exclude_annotator is not None:
        leases = leases.exclude(annotator=exclude_annotator)
    live = leases.order_by().values("campaign_item").annotate(n=Count("pk")).values("n")
    judged, leased = (
        CampaignItem.objects.filter(pk=item_id)
        .annotate(live=Coalesce(Subquery(live), Value(0)))
        .values_list("judgment_count", "live")
        .get()
    )
    return int(judged), int(leased)


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
            f" AND x.expires_at > %s ORDER BY x.leased_at, x.id LIMIT 1)"
            f" FROM {member} m WHERE m.campaign_id = %s AND m.annotator_id = %s{lock}"
        ),
        # the fullest open item (then the newest) this annotator has not had, with room
        # left after the live leases; PostgreSQL skips items another request holds
        "candidate": (
            f"SELECT c.id FROM {ci} c WHERE c.campaign_id = %s AND NOT c.is_gold AND c.judgment_count < %s"  # noqa: S608
            f" AND NOT EXISTS (SELECT 1 FROM {a} mine WHERE mine.campaign_item_id = c.id AND mine.annotator_id = %s)"
            f" AND (SELECT COUNT(*) FROM {a} l WHERE l.campaign_item_id = c.id AND l.status = %s"
            f" AND l.expires_at > %s) < %s - c.judgment_count"
            " {rejected}ORDER BY c.judgment_count DESC, c.id DESC LIMIT 1"
        ),
        "lock": " FOR UPDATE OF c SKIP LOCKED" if postgres else "",
        # the lease, written only if the item still has room when counted afresh (a new
        # statement sees every lease committed before the item's lock was granted)
        "lease": (
            f"INSERT INTO {a} (campaign_item_id, annotator_id, status, leased_at, expires_at)"  # noqa: S608
            f" SELECT %s, %s, %s, %s, %s WHERE (SELECT judgment_count FROM {ci} WHERE id = %s) + ({live}) < %s"
            " RETURNING id"
        ),
    }


def assignment_next(
    *, campaign: Campaign, annotator: Any, now: datetime | None = None, rng: random.Random | None = None
) -> Assignment | None:
    """Lease the next item for ``annotator``, or None when nothing is left for them.

    An annotator with a live lease gets that lease back (a reload never skips an item).
    Gold items come at ``campaign.gold_rate`` while regular work remains."""
    now = now or timezone.now()
    if campaign.status != CampaignStatus.ACTIVE:
        raise CampaignNotActive(
            f"The campaign {campaign.name} is {campaign.status}; no items are handed out."
        )
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
        paused, current = row[-2], row[-1]
        if paused:
            raise AnnotatorPaused("A curator has paused your work on this campaign; no items for now.")
        if current is not None:
            return Assignment.objects.select_related("campaign_item").get(pk=current)
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
                and _candidate(cursor, sql, campaign, annotator, k, when, [], lock=False) is not None
            ):
                return _lease(gold.pk, annotator, campaign, now)
        rejected: list[int] = []
        expires = now + timedelta(seconds=campaign.lease_seconds)
        for _ in range(100):
            candidate = _candidate(cursor, sql, campaign, annotator, k, when, rejected)
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
                    candidate,
                    candidate,
                    leased,
                    when,
                    k,
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


def _candidate(
    cursor: Any,
    sql: dict[str, str],
    campaign: Campaign,
    annotator: Any,
    k: int,
    when: Any,
    rejected: list[int],
    *,
    lock: bool = True,
) -> int | None:
    skip = f"AND c.id NOT IN ({', '.join(['%s'] * len(rejected))}) " if rejected else ""
    cursor.execute(
        sql["candidate"].replace("{rejected}", skip) + (sql["lock"] if lock else ""),
        [campaign.pk, k, annotator.pk, AssignmentStatus.LEASED.value, when, k, *rejected],
    )
    row = cursor.fetchone()
    return None if row is None else int(row[0])


def _lease(item_id: int, annotator: Any, campaign: Campaign, now: datetime) -> Assignment:
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


# ---------------------------------------------------------------------------------------
# Judgments


@dataclass(frozen=True)
class _LockedItem:
    judgment_count: int
    is_gold: bool
    gold_answer: str
    comve_item_id: int | None
    campaign_id: int
    already: bool  # this annotator has a judgment on it


def _item_locked(item_id: int, annotator: Any) -> _LockedItem:
    """Lock an item's row (PostgreSQL; SQLite transactions run one at a time) and read
    what a submission needs, in one raw statement."""
    ci = CampaignItem._meta.db_table
    j = Judgment._meta.db_table
    lock = " FOR UPDATE OF c" if connection.vendor == "postgresql" else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT c.judgment_count, c.is_gold, c.gold_answer, c.comve_item_id, c.campaign_id,"  # noqa: S608 (table names from the models)
            f" EXISTS(SELECT 1 FROM {j} x WHERE x.campaign_item_id = c.id AND x.annotator_id = %s)"
            f" FROM {ci} c WHERE c.id = %s{lock}",
            [annotator.pk, item_id],
        )
        row = cursor.fetchone()
    if row is None:
        raise JudgmentRefused("This item does not exist (any more).")
    count, gold, gold_answer, comve_id, campaign_id, already = row
    return _LockedItem(int(count), bool(gold), gold_answer, comve_id, int(campaign_id), bool(already))


@dataclass(frozen=True)
class SubmitResult:
    judgment: Judgment
    created: bool


def judgment_submit(
    *,
    annotator: Any,
    assignment: Assignment | None = None,
    item: CampaignItem | None = None,
    answer: str = "",
    text: str = "",
    payload: dict[str, Any] | None = None,
    duration_ms: int | None = None,
    now: datetime | None = None,
) -> SubmitResult:
    """Record an annotator's answer on a leased item, exactly once.

    A repeated submission (double click, resend) returns the judgment recorded the first
    time (``created`` False). A lease past its time is still accepted while the item has
    room; when others have filled the item meanwhile the answer is refused with a message.
    On an imported campaign (votes from a published data set) no lease is needed."""
    now = now or timezone.now()
    if assignment is None and item is None:
        raise JudgmentRefused("Say which item the answer is for.")
    if assignment is not None:
        if assignment.annotator_id != annotator.pk:
            raise JudgmentRefused("This item was given to someone else.")
        item_id = assignment.campaign_item_id
    else:
        assert item is not None
        item_id = item.pk
    if duration_ms is not None and not 0 <= int(duration_ms) <= 86_400_000:
        duration_ms = None
    try:
        with transaction.atomic():
            # The item's row lock serialises everything that changes its count.
            locked = _item_locked(item_id, annotator)
            known = assignment.campaign_item if assignment is not None else item
            campaign = (
                known.campaign
                if known is not None
                and known.campaign_id == locked.campaign_id
                and CampaignItem.campaign.is_cached(known)
                else Campaign.objects.get(pk=locked.campaign_id)
            )
            try:
                answer, text, payload = answer_clean(
                    campaign.task,
                    answer=answer,
                    text=text,
                    payload=payload,
                    has_options=_has_options(
                        ComVEItem.objects.get(pk=locked.comve_item_id) if locked.comve_item_id else None
                    )
                    if campaign.task == Task.COMVE_CHECK
                    else True,
                )
            except AnswerError as exc:
                raise JudgmentRefused(str(exc)) from None
            if locked.already:  # a repeat: the same result as the first time
                existing = Judgment.objects.get(campaign_item_id=item_id, annotator=annotator)
                return SubmitResult(existing, created=False)
            # (a given assignment's status may be stale, but a submitted one has its
            # judgment, which returned above)
            lease = (
                assignment or Assignment.objects.filter(campaign_item_id=item_id, annotator=annotator).first()
            )
            if lease is None:
                # Votes of a published data set (imported campaign) come without a lease.
                if not campaign.imported:
                    raise JudgmentRefused("This item was not given to you; ask for the next item.")
            elif (
                lease.status != AssignmentStatus.SUBMITTED and lease.expires_at <= now and not locked.is_gold
            ):
                judged, others = _item_load(item_id, now, exclude_annotator=annotator)
                if judged + others >= campaign.judgments_per_item:
                    raise LeaseExpired(
                        "Your time for this item ran out and other annotators have completed it "
                        "meanwhile, so this answer was not recorded. Please go on with the next item."
                    )
            if not locked.is_gold and locked.judgment_count >= campaign.judgments_per_item:
                raise JudgmentRefused(
                    "This item has all its judgments already; your answer was not recorded."
                )
            if duration_ms is None and lease is not None:
                duration_ms = max(0, int((now - lease.leased_at).total_seconds() * 1000))
            judgment = Judgment.objects.create(
                campaign_item_id=item_id,
                annotator=annotator,
                answer=answer,
                text=text,
                payload=payload,
                duration_ms=duration_ms,
            )
            if lease is not None:
                lease.status = AssignmentStatus.SUBMITTED
                lease.save(update_fields=["status"])
            CampaignItem.objects.filter(pk=item_id).update(judgment_count=F("judgment_count") + 1)
            if locked.is_gold:
                correct = answer_key(campaign.task, answer, payload) == locked.gold_answer
                CampaignAnnotator.objects.get_or_create(campaign=campaign, annotator=annotator)
                CampaignAnnotator.objects.filter(campaign=campaign, annotator=annotator).update(
                    gold_seen=F("gold_seen") + 1, gold_correct=F("gold_correct") + int(correct)
                )
            return SubmitResult(judgment, created=True)
    except IntegrityError:
        # Two identical submissions raced past the lock (cannot happen with the lock
        # above, but the unique constraint is the last line): return the recorded one.
        recorded = Judgment.objects.filter(campaign_item_id=item_id, annotator=annotator).first()
        if recorded is None:
            raise
        return SubmitResult(recorded, created=False)


@dataclass(frozen=True)
class ImportedVote:
    item: CampaignItem
    annotator: Any
    answer: str = ""
    text: str = ""
    payload: dict[str, Any] = field(default_factory=dict)
    duration_ms: int | None = None
    where: str = ""  # how errors name this vote (e.g. "votes.jsonl, row 3"); "vote N" if empty


def judgment_import(*, campaign: Campaign, votes: Iterable[ImportedVote]) -> int:
    """Record many votes of a published data set on an imported campaign in one
    transaction (same validation and counting as ``judgment_submit``, in bulk). Votes
    already recorded are skipped; returns how many were new. A bad vote writes nothing."""
    if not campaign.imported:
        raise JudgmentRefused(f"campaign {campaign.name}: only imported campaigns take votes in bulk")
    votes = list(votes)
    cleaned: list[tuple[ImportedVote, str, str, dict[str, Any]]] = []
    for n, vote in enumerate(votes, start=1):
        where = vote.where or f"vote {n}"
        if vote.item.campaign_id != campaign.pk:
            raise JudgmentRefused(f"{where}: item {vote.item.pk} is not in campaign {campaign.name}")
        try:
            a, t, p = answer_clean(
                campaign.task,
                answer=vote.answer,
                text=vote.text,
                payload=vote.payload,
                has_options=_has_options(vote.item.comve_item) if vote.item.comve_item_id else True,
            )
        except AnswerError as exc:
            raise JudgmentRefused(f"{where}: {exc}") from None
        cleaned.append((vote, a, t, p))
    with transaction.atomic():
        item_ids = {v.item.pk for v, *_ in cleaned}
        locked = {
            row.pk: row
            for row in CampaignItem.objects.select_for_update().filter(pk__in=item_ids).order_by("pk")
        }
        done = set(
            Judgment.objects.filter(campaign_item_id__in=item_ids).values_list(
                "campaign_item_id", "annotator_id"
            )
        )
        added: Counter[int] = Counter()
        judgments: list[Judgment] = []
        for n, (vote, a, t, p) in enumerate(cleaned, start=1):
            pair = (vote.item.pk, vote.annotator.pk)
            if pair in done:
                continue
            done.add(pair)
            item = locked[vote.item.pk]
            if not item.is_gold and item.judgment_count + added[item.pk] >= campaign.judgments_per_item:
                where = vote.where or f"vote {n}"
                raise JudgmentRefused(f"{where}: item {item.pk} would get more than K judgments")
            added[item.pk] += 1
            judgments.append(
                Judgment(
                    campaign_item_id=item.pk,
                    annotator=vote.annotator,
                    answer=a,
                    text=t,
                    payload=p,
                    duration_ms=vote.duration_ms,
                )
            )
        Judgment.objects.bulk_create(judgments, batch_size=2000)
        by_count: dict[int, list[int]] = defaultdict(list)
        for item_id, n in added.items():
            by_count[n].append(item_id)
        for n, ids in by_count.items():
            CampaignItem.objects.filter(pk__in=ids).update(judgment_count=F("judgment_count") + n)
    return len(judgments)


# ---------------------------------------------------------------------------------------
# Adjudication


def adjudication_decisions(task: str) -> tuple[str, ...]:
    """What a curator may decide on an item of ``task``."""
    if task == Task.REASON_PLAUSIBILITY:
        return ("positive", "acceptable", "negative")
    if task == Task.COMVE_CHECK:
        return ("rewrite", "keep")
    if task in (Task.REASON_WRITING, Task.COMVE_WRITING):
        return ("accept", "reject")
    return task_spec(task).choice_values


def adjudication_record(*, item: CampaignItem, curator: Any, decision: str, note: str = "") -> Adjudication:
    """A curator's decision on an item, stored beside the votes (which stay as they are)."""
    allowed = adjudication_decisions(item.campaign.task)
    if decision not in allowed:
        raise AnnotationError(f"decision: {decision!r} is not one of {', '.join(allowed)}")
    if len(note) > 5000:
        raise AnnotationError("note: at most 5000 characters")
    return Adjudication.objects.create(campaign_item=item, curator=curator, decision=decision, note=note)


# ---------------------------------------------------------------------------------------
# Aggregation


@dataclass
class AggregateSummary:
    items: int = 0
    aggregated: int = 0
    pending: int = 0
    changed: int = 0
    created: int = 0
    labels: Counter[str] = field(default_factory=Counter)
    extra: dict[str, Any] = field(default_factory=dict)


class _Changes:
    """Collects changed rows and writes them with one bulk_update per model."""

    def __init__(self) -> None:
        self.rows: dict[type[models.Model], dict[int, models.Model]] = defaultdict(dict)
        self.fields: dict[type[models.Model], set[str]] = defaultdict(set)

    def set(self, obj: models.Model, values: dict[str, Any]) -> bool:
        changed = [name for name, value in values.items() if getattr(obj, name) != value]
        for name in changed:
            setattr(obj, name, values[name])
        if changed:
            self.rows[type(obj)][obj.pk] = obj
            self.fields[type(obj)].update(changed)
        return bool(changed)

    def write(self) -> None:
        # Rows with the same new values share one UPDATE (labels repeat a lot: a
        # plausibility campaign has six distinct outcomes for thousands of reasons).
        for model, rows in self.rows.items():
            fields = sorted(self.fields[model])
            groups: dict[str, tuple[dict[str, Any], list[int]]] = {}
            for pk, obj in rows.items():
                values = {f: getattr(obj, f) for f in fields}
                key = json.dumps(values, sort_keys=True, default=str)
                groups.setdefault(key, (values, []))[1].append(pk)
            for values, pks in groups.values():
                for start in range(0, len(pks), 500):
                    model.objects.filter(pk__in=pks[start : start + 500]).update(**values)  # type: ignore[attr-defined]


def campaign_aggregate(*, campaign: Campaign) -> AggregateSummary:
    """Apply the task's rule to every item with K judgments and write the labels onto the
    items. Idempotent: a second run finds nothing to change (``changed == 0``)."""
    summary = AggregateSummary()
    task = campaign.task
    k = campaign.judgments_per_item
    with transaction.atomic():
        items = list(
            CampaignItem.objects.filter(campaign=campaign, is_gold=False)
            .select_related("schema", "reason", "reason__schema", "comve_item")
            .order_by("pk")
        )
        votes: dict[int, list[Judgment]] = defaultdict(list)
        for j in Judgment.objects.filter(
            campaign_item__campaign=campaign, campaign_item__is_gold=False
        ).order_by("pk"):
            votes[j.campaign_item_id].append(j)
        decisions: dict[int, str] = {}
        for adj in Adjudication.objects.filter(campaign_item__campaign=campaign).order_by("created_at", "pk"):
            decisions[adj.campaign_item_id] = adj.decision
        summary.items = len(items)
        changes = _Changes()
        type_votes: dict[int, list[list[str]]] = defaultdict(list)
        schemas: dict[int, Schema] = {}
        check_right = check_total = 0
        for item in items:
            item_votes = votes.get(item.pk, [])
            if len(item_votes) < k:
                summary.pending += 1
                continue
            summary.aggregated += 1
            answers = [j.answer for j in item_votes]
            decision = decisions.get(item.pk)
            counts = dict(sorted(Counter(answers).items()))
            aggregate: dict[str, Any] = {"votes": counts, "n": len(item_votes)}
            needs_review = False
            changed = False
            if task in (Task.SWITCHABILITY, Task.ASSOCIATIVITY):
                schema = item.schema
                assert schema is not None
                if task == Task.SWITCHABILITY:
                    label = rules.switchable(answers)
                    if decision:
                        label = decision == "switchable"
                    values: dict[str, Any] = {"switchable": label}
                    if not schema.switched_text:
                        values["switched_text"] = switch_candidates(
                            bracketed_sentence(schema.text_before, schema.pronoun, schema.text_after),
                            schema.candidate_a,
                            schema.candidate_b,
                        )
                    summary.labels["switchable" if label else "not switchable"] += 1
                else:
                    label = rules.associative(answers)
                    if decision:
                        label = decision == "associative"
                    values = {"associative": label}
                    summary.labels["associative" if label else "not associative"] += 1
                changed |= changes.set(schema, values)
                aggregate["label"] = label
                needs_review = len(counts) > 1
            elif task == Task.REASON_PLAUSIBILITY:
                reason = item.reason
                assert reason is not None
                result = rules.plausibility(answers)
                label_text = decision or result.label
                changed |= changes.set(reason, {"plausibility": result.score, "label": label_text})
                aggregate.update(score=result.score, label=label_text)
                summary.labels[label_text] += 1
                needs_review = result.label == "acceptable" and not decision
            elif task == Task.KNOWLEDGE_TYPE:
                reason = item.reason
                assert reason is not None
                kind, tie = rules.majority(answers)
                if decision:
                    kind, tie = decision, False
                changed |= changes.set(reason, {"knowledge_type": kind})
                aggregate.update(label=kind, tie=tie)
                summary.labels[kind] += 1
                type_votes[reason.schema_id].append(answers)
                schemas[reason.schema_id] = reason.schema
                needs_review = tie
            elif task == Task.REASON_WRITING:
                schema = item.schema
                assert schema is not None
                created = _reasons_from_writing(campaign, schema, item_votes)
                summary.created += created
                changed |= created > 0
                aggregate["reasons"] = len(item_votes)
            elif task == Task.COMVE_WRITING:
                created = _comve_from_writing(campaign, item_votes)
                summary.created += created
                changed |= created > 0
                aggregate["written"] = len(item_votes)
                needs_review = not decision
            elif task == Task.COMVE_CHECK:
                comve = item.comve_item
                assert comve is not None
                key = (
                    f"{comve.false_index}:{comve.correct_option}"
                    if _has_options(comve)
                    else str(comve.false_index)
                )
                given = [answer_key(task, j.answer, j.payload) for j in item_votes]
                check = rules.comve_check(given, key)
                rewrite = check.needs_rewrite if not decision else decision == "rewrite"
                changed |= changes.set(comve, {"needs_rewrite": rewrite})
                aggregate.update(
                    wrong=check.wrong, needs_rewrite=rewrite, accuracy=1 - check.wrong / check.total
                )
                check_right += check.total - check.wrong
                check_total += check.total
                summary.labels["rewrite" if rewrite else "keep"] += 1
                needs_review = rewrite
            if decision:
                aggregate["adjudication"] = decision
            changed |= changes.set(item, {"aggregate": aggregate, "needs_review": needs_review})
            summary.changed += int(changed)
        if task == Task.KNOWLEDGE_TYPE:
            for schema_id, per_reason in type_votes.items():
                major = rules.major_types(per_reason)
                summary.changed += int(changes.set(schemas[schema_id], {"knowledge_types": major}))
            summary.extra["questions"] = len(type_votes)
        changes.write()
        if task == Task.COMVE_CHECK:
            summary.extra["human_accuracy"] = check_right / check_total if check_total else None
    return summary


def _reasons_from_writing(campaign: Campaign, schema: Schema, judgments: list[Judgment]) -> int:
    """Every written reason becomes a Reason (origin human, no plausibility yet) to be
    validated by a plausibility campaign; one per judgment, never twice."""
    source = f"campaign:{campaign.name}"
    done = set(Reason.objects.filter(schema=schema, source_file=source).values_list("source_row", flat=True))
    position = (Reason.objects.filter(schema=schema).aggregate(m=models.Max("position"))["m"] or 0) + 1
    created = 0
    for j in judgments:
        if j.pk in done or not j.text.strip():
            continue
        Reason.objects.create(
            schema=schema,
            position=position,
            text=j.text,
            origin=ReasonOrigin.HUMAN,
            plausibility=None,
            source_file=source,
            source_row=j.pk,
            file_checksum="",
        )
        position += 1
        created += 1
    return created


def _comve_from_writing(campaign: Campaign, judgments: list[Judgment]) -> int:
    """Each written item becomes a ComVEItem (dataset comve, split pilot) for curator review."""
    created = 0
    for j in judgments:
        p = j.payload
        external_id = f"{campaign.name}-{j.pk}"
        if ComVEItem.objects.filter(
            dataset=ComVEDataset.COMVE, split=ComVESplit.PILOT, external_id=external_id
        ).exists():
            continue
        false_index = int(p["false_index"])
        ComVEItem.objects.create(
            dataset=ComVEDataset.COMVE,
            split=ComVESplit.PILOT,
            external_id=external_id,
            statement_0=p["statement_0"],
            statement_1=p["statement_1"],
            false_index=false_index,
            false_statement=p["statement_1"] if false_index else p["statement_0"],
            option_a=p["option_a"],
            option_b=p["option_b"],
            option_c=p["option_c"],
            correct_option=p["correct_option"],
            references=list(p["references"]),
            has_a=True,
            has_b=True,
            has_c=True,
            source_file=f"campaign:{campaign.name}",
            source_row=j.pk,
            file_checksum="",
        )
        created += 1
    return created
