"""Judgments: record an annotator's answer exactly once, import published votes in bulk.

The item's row lock serialises every write that changes how many judgments it has (see
:mod:`annotation.services.assignment` for the rules on PostgreSQL and SQLite)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from annotation.answers import AnswerError
from annotation.errors import JudgmentLocked, JudgmentRefused, LeaseExpired
from annotation.models import (
    Assignment,
    AssignmentStatus,
    Campaign,
    CampaignAnnotator,
    CampaignItem,
    Judgment,
    JudgmentRevision,
)
from annotation.participation import Answered, participation
from annotation.services.assignment import _item_load, item_k
from annotation.task_types import TaskType, answer_clean, comve_has_options, task_spec, task_type
from core.roles import Actor, signed_in
from datasets.models import ComVEItem


@dataclass(frozen=True)
class _LockedItem:
    judgment_count: int
    is_gold: bool
    gold_answer: str
    comve_item_id: int | None
    campaign_id: int
    already: bool  # this annotator has a judgment on it
    needed: int | None  # the item's own K (None: the campaign's)


def _item_locked(item_id: int, annotator: User) -> _LockedItem:
    """Lock an item's row (PostgreSQL; SQLite transactions run one at a time) and read
    what a submission needs, in one raw statement."""
    ci = CampaignItem._meta.db_table
    j = Judgment._meta.db_table
    lock = " FOR UPDATE OF c" if connection.vendor == "postgresql" else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT c.judgment_count, c.is_gold, c.gold_answer, c.comve_item_id, c.campaign_id,"  # noqa: S608 (table names from the models)
            f" EXISTS(SELECT 1 FROM {j} x WHERE x.campaign_item_id = c.id AND x.annotator_id = %s),"
            " c.judgments_needed"
            f" FROM {ci} c WHERE c.id = %s{lock}",
            [annotator.pk, item_id],
        )
        row = cursor.fetchone()
    if row is None:
        raise JudgmentRefused("This item does not exist (any more).")
    count, gold, gold_answer, comve_id, campaign_id, already, needed = row
    return _LockedItem(
        int(count),
        bool(gold),
        gold_answer,
        comve_id,
        int(campaign_id),
        bool(already),
        None if needed is None else int(needed),
    )


def _own_k_follow(kind: TaskType, item_id: int, needed: int | None) -> None:
    """The item's own K as the task's rule sets it after an answer (ANLI's third vote)."""
    wanted = kind.judgments_needed(item_id=item_id)
    if wanted is not None and wanted != needed:
        CampaignItem.objects.filter(pk=item_id).update(judgments_needed=wanted)


@dataclass(frozen=True)
class SubmitResult:
    judgment: Judgment
    created: bool


def judgment_submit(
    *,
    annotator: Actor,
    assignment: Assignment | None = None,
    item: CampaignItem | None = None,
    answer: str = "",
    text: str = "",
    payload: dict[str, Any] | None = None,
    duration_ms: int | None = None,
    now: datetime | None = None,
    through_models: bool = False,
) -> SubmitResult:
    """Record an annotator's answer on a leased item, exactly once.

    An adversarial writing slot is answered only by keeping or retracting the item after
    its tries (``evaluation.adversarial.services``, which pass ``through_models``), never
    from the annotate page's form or the API.

    A repeated submission (double click, resend) returns the judgment recorded the first
    time (``created`` False). A lease past its time is still accepted while the item has
    room; when others have filled the item meanwhile the answer is refused with a message.
    On an imported campaign (votes from a published data set) no lease is needed."""
    annotator = signed_in(annotator)
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
            spec = task_spec(campaign.task)
            if spec.content_clean is not None and not through_models:
                raise JudgmentRefused(
                    "An adversarial item is kept or retracted from its page, after checking it with the models."
                )
            try:
                answer, text, payload = answer_clean(
                    campaign.task,
                    answer=answer,
                    text=text,
                    payload=payload,
                    # (only a task with a second question reads the item's options)
                    has_options=comve_has_options(
                        ComVEItem.objects.get(pk=locked.comve_item_id) if locked.comve_item_id else None
                    )
                    if spec.option_choices
                    else True,
                )
                kind = task_type(campaign.task)
                kind.answer_check(item_id=item_id, answer=answer, text=text, payload=payload)
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
                judged, others, _ = _item_load(item_id, now, exclude_annotator=annotator)
                if judged + others >= item_k(campaign, locked.needed):
                    raise LeaseExpired(
                        "Your time for this item ran out and other annotators have completed it "
                        "meanwhile, so this answer was not recorded. Please go on with the next item."
                    )
            if not locked.is_gold and locked.judgment_count >= item_k(campaign, locked.needed):
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
            if not locked.is_gold:
                _own_k_follow(kind, item_id, locked.needed)
            if locked.is_gold:
                correct = spec.answer_key(answer, payload) == locked.gold_answer
                CampaignAnnotator.objects.get_or_create(campaign=campaign, annotator=annotator)
                CampaignAnnotator.objects.filter(campaign=campaign, annotator=annotator).update(
                    gold_seen=F("gold_seen") + 1, gold_correct=F("gold_correct") + int(correct)
                )
            # what the answer counts for in a participation (a crowd participant's study):
            # in this transaction, so an answer is never recorded without it
            participation().after_answer(
                user=annotator,
                answered=Answered(
                    judgment=judgment,
                    campaign=campaign,
                    is_gold=locked.is_gold,
                    gold_answer=locked.gold_answer or "",
                ),
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
    annotator: User
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
                has_options=comve_has_options(vote.item.comve_item) if vote.item.comve_item_id else True,
            )
            task_type(campaign.task).answer_check(item_id=vote.item.pk, answer=a, text=t, payload=p)
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
            if not item.is_gold and item.judgment_count + added[item.pk] >= item_k(
                campaign, item.judgments_needed
            ):
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


@dataclass(frozen=True)
class ChangeResult:
    judgment: Judgment
    changed: bool  # False when the answer sent was the one already recorded


def item_aggregated(item: CampaignItem) -> bool:
    """Whether an item's answers are final for its annotators: the curator's aggregation
    wrote its record (``CampaignItem.aggregate``, written only for items with K
    judgments). Gold items are never aggregated."""
    return bool(item.aggregate)


def judgment_change(
    *,
    annotator: Actor,
    item: CampaignItem,
    answer: str = "",
    text: str = "",
    payload: dict[str, Any] | None = None,
    now: datetime | None = None,
) -> ChangeResult:
    """Replace an annotator's own answer on an item while the item is not aggregated.

    The judgment is changed in place (still one judgment per item and annotator; the
    item's count does not move) and the answer it had is kept in a JudgmentRevision. On a
    gold item the annotator's gold record counts the item once: ``gold_correct`` follows
    the new answer, ``gold_seen`` stays."""
    annotator = signed_in(annotator)
    now = now or timezone.now()
    with transaction.atomic():
        locked = _item_locked(item.pk, annotator)
        judgment = (
            Judgment.objects.select_for_update(of=("self",))
            .filter(campaign_item_id=item.pk, annotator=annotator)
            .select_related("campaign_item__campaign")
            .first()
        )
        if judgment is None:
            raise JudgmentRefused("You have no answer on this item to change.")
        fresh = judgment.campaign_item
        campaign = fresh.campaign
        if item_aggregated(fresh):
            raise JudgmentLocked(
                "This item has been aggregated (its label is decided), so its answers can no "
                "longer be changed."
            )
        spec = task_spec(campaign.task)
        if spec.content_clean is not None:
            # an adversarial item was kept (as its last scored try) or retracted: final
            raise JudgmentLocked("A kept or retracted item is final: write a new one in the next slot.")
        try:
            answer, text, payload = answer_clean(
                campaign.task,
                answer=answer,
                text=text,
                payload=payload,
                has_options=comve_has_options(
                    ComVEItem.objects.get(pk=locked.comve_item_id) if locked.comve_item_id else None
                )
                if spec.option_choices
                else True,
            )
            kind = task_type(campaign.task)
            kind.answer_check(item_id=item.pk, answer=answer, text=text, payload=payload)
        except AnswerError as exc:
            raise JudgmentRefused(str(exc)) from None
        if (judgment.answer, judgment.text, judgment.payload) == (answer, text, payload):
            return ChangeResult(judgment, changed=False)
        JudgmentRevision.objects.create(
            judgment=judgment,
            revised_by=annotator,
            revised_at=now,
            answer=judgment.answer,
            text=judgment.text,
            payload=judgment.payload,
        )
        if locked.is_gold:
            was = spec.answer_key(judgment.answer, judgment.payload) == locked.gold_answer
            now_correct = spec.answer_key(answer, payload) == locked.gold_answer
            if was != now_correct:
                CampaignAnnotator.objects.filter(campaign=campaign, annotator=annotator).update(
                    gold_correct=F("gold_correct") + (1 if now_correct else -1)
                )
        judgment.answer, judgment.text, judgment.payload = answer, text, payload
        judgment.save(update_fields=["answer", "text", "payload"])
        if not locked.is_gold:
            _own_k_follow(kind, item.pk, locked.needed)
        return ChangeResult(judgment, changed=True)
