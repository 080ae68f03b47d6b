"""Reads of the annotation app, narrowed by what the user may see."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from django.db.models import Count, Exists, F, IntegerField, Max, OuterRef, Q, QuerySet, Subquery, Sum
from django.db.models.functions import Coalesce
from django.http import Http404
from django.utils import timezone

from annotation.agreement import stats as ag
from annotation.errors import AnnotatorPaused, AssignmentRefused, CampaignNotActive
from annotation.models import (
    Adjudication,
    AgreementHeadline,
    Assignment,
    AssignmentStatus,
    Campaign,
    CampaignAnnotator,
    CampaignItem,
    CampaignStatus,
    Judgment,
    JudgmentRevision,
)
from annotation.participation import participation
from annotation.permissions import user_can_annotate, user_can_curate
from annotation.selectors.reach import OutOfReach as OutOfReach  # re-exported: callers read selectors.X
from annotation.selectors.reach import items_out_of_reach as items_out_of_reach
from annotation.selectors.reach import items_out_of_reach_many as items_out_of_reach_many
from annotation.task_types import ContextLine, TaskType, task_spec, task_type
from datasets.models import ComVEItem, Schema


def own_k() -> Coalesce:
    """An item's K as a column: its own (``CampaignItem.judgments_needed``) over its
    campaign's."""
    return Coalesce("judgments_needed", "campaign__judgments_per_item", output_field=IntegerField())


def campaign_list(*, user: Any) -> QuerySet[Campaign]:
    """Curators see every campaign; annotators the active ones; others none."""
    if user_can_curate(user):
        return Campaign.objects.all()
    if user_can_annotate(user):
        campaigns = Campaign.objects.filter(status=CampaignStatus.ACTIVE, imported=False)
        # a crowd participant sees only the campaign of their study link (annotation.participation)
        return participation().visible_campaigns(user=user, campaigns=campaigns)
    return Campaign.objects.none()


def campaign_item_choices() -> dict[str, Any]:
    """What the new-campaign form's pickers offer: the collections of schemas and ComVE
    items, and the (data set, split, collection) of the ComVE items there are."""
    schemas = Schema.objects.values_list("collection", flat=True).distinct()
    comve = ComVEItem.objects.values_list("dataset", "split", "collection").distinct()
    sets = sorted({(str(d), str(s), str(c)) for d, s, c in comve})
    return {
        "collections": sorted({*schemas, *(c for _, _, c in sets if c)}),
        "comve_sets": sets,
    }


def campaign_get(*, user: Any, name: str) -> Campaign:
    campaign = campaign_list(user=user).filter(name=name).first()
    if campaign is None:
        raise Http404("No such campaign")
    return campaign


def assignment_get(*, user: Any, pk: int) -> Assignment:
    """An annotator's own assignment; someone else's is a 404."""
    assignment = (
        Assignment.objects.select_related("campaign_item__campaign").filter(pk=pk, annotator=user).first()
    )
    if assignment is None:
        raise Http404("No such assignment")
    return assignment


def item_presentation(*, item: CampaignItem, task: str) -> dict[str, Any]:
    """What the annotator sees for an item (DESIGN section 5 table): the task's
    ``present`` hook. Never the key, never other answers, never whether the item is gold."""
    view: dict[str, Any] = {"task": task}
    view.update(task_type(task).present(item))
    return view


def assignment_for_display(*, assignment: Assignment, campaign: Campaign) -> Assignment:
    """The assignment with its item and what the campaign's task shows of it, in one query."""
    item = (
        CampaignItem.objects.select_related(*task_type(campaign.task).item_relations)
        .filter(pk=assignment.campaign_item_id, campaign=campaign)
        .get()
    )
    item.campaign = campaign
    assignment.campaign_item = item
    return assignment


@dataclass(frozen=True)
class MyProgress:
    done: int
    remaining: int
    paused: bool

    @property
    def total(self) -> int:
        return self.done + self.remaining

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 100


class _CountOf(Subquery):
    """``(SELECT COUNT(*) FROM (<queryset>))``: a count as a column of another query."""

    template = "(SELECT COUNT(*) FROM (%(subquery)s) _counted)"
    output_field = IntegerField()


def my_progress(*, campaign: Campaign, annotator: Any, now: datetime | None = None) -> MyProgress:
    """An annotator's own counts: judged, and items still open to them (an estimate:
    other annotators may take some first). Nothing about other annotators' answers.
    One query: every item page shows it."""
    now = now or timezone.now()
    mine = Assignment.objects.filter(annotator=annotator, campaign_item=OuterRef("pk"))
    row = (
        Campaign.objects.filter(pk=campaign.pk)
        .annotate(
            done=_CountOf(
                Judgment.objects.filter(campaign_item__campaign=campaign, annotator=annotator).values("pk")
            ),
            remaining=_CountOf(
                CampaignItem.objects.annotate(k=own_k())
                .filter(campaign=campaign, is_gold=False, judgment_count__lt=F("k"))
                .exclude(Exists(mine))
                # never their own item (a writer's), under any of their accounts
                .exclude(author_id__in=[annotator.pk, *participation().same_person(user=annotator)])
                .values("pk")
            ),
            current=Exists(
                Assignment.objects.filter(
                    campaign_item__campaign=campaign,
                    annotator=annotator,
                    status=AssignmentStatus.LEASED,
                    expires_at__gt=now,
                )
            ),
            paused=Exists(
                CampaignAnnotator.objects.filter(campaign=campaign, annotator=annotator, paused=True)
            ),
        )
        .values("done", "remaining", "current", "paused")
        .get()
    )
    return MyProgress(
        done=row["done"], remaining=row["remaining"] + int(row["current"]), paused=bool(row["paused"])
    )


def assignment_current(
    *, campaign: Campaign, annotator: Any, now: datetime | None = None
) -> Assignment | None:
    """The live lease the annotator holds in this campaign, if any (reading leases nothing)."""
    now = now or timezone.now()
    return (
        Assignment.objects.filter(
            campaign_item__campaign=campaign,
            annotator=annotator,
            status=AssignmentStatus.LEASED,
            expires_at__gt=now,
        )
        .order_by("leased_at", "pk")
        .first()
    )


def assignment_of_item(*, campaign: Campaign, annotator: Any, item_id: int) -> Assignment | None:
    """The annotator's own assignment of an item of this campaign (leased, answered,
    skipped or expired), or None: another annotator's items are out of reach."""
    return (
        Assignment.objects.select_related("campaign_item__campaign")
        .filter(campaign_item__campaign=campaign, campaign_item_id=item_id, annotator=annotator)
        .first()
    )


def assignments_skipped(*, campaign: Campaign, annotator: Any) -> list[Assignment]:
    """The items the annotator skipped in this campaign, oldest skip first (the item page
    lists them, each with Reopen)."""
    return list(
        Assignment.objects.filter(
            campaign_item__campaign=campaign, annotator=annotator, status=AssignmentStatus.SKIPPED
        ).order_by("skipped_at", "pk")
    )


def judgment_own(*, campaign: Campaign, annotator: Any, item_id: int) -> Judgment | None:
    """The annotator's own judgment on an item of this campaign, or None (never another's)."""
    return (
        Judgment.objects.select_related("campaign_item__campaign")
        .filter(campaign_item__campaign=campaign, campaign_item_id=item_id, annotator=annotator)
        .first()
    )


@dataclass(frozen=True)
class RecentAnswer:
    item_id: int
    summary: str
    answer: str  # in words
    changed: int  # how many times the annotator changed it
    locked: bool  # aggregated: no change any more


def judgment_recent(*, campaign: Campaign, annotator: Any, limit: int = 5) -> list[RecentAnswer]:
    """The annotator's own latest answers in this campaign, newest first (nobody else's)."""
    kind = task_type(campaign.task)
    rows = (
        Judgment.objects.filter(campaign_item__campaign=campaign, annotator=annotator)
        .select_related("campaign_item__schema", "campaign_item__reason", "campaign_item__comve_item")
        .annotate(n_revisions=Count("revisions"))
        .order_by("-pk")[:limit]
    )
    out = []
    for j in rows:
        words = kind.decision_label(j.answer) if j.answer else (j.text or "(written answer)")
        out.append(
            RecentAnswer(
                item_id=j.campaign_item_id,
                summary=item_summary(item=j.campaign_item),
                answer=words,
                changed=j.n_revisions,
                locked=bool(j.campaign_item.aggregate),
            )
        )
    return out


def judgment_neighbours(
    *, campaign: Campaign, annotator: Any, judgment: Judgment | None
) -> tuple[int | None, int | None]:
    """The items of the annotator's answers just before and just after ``judgment`` in the
    order they were given (before the first answer when None: the latest answer, nothing
    after). Only the annotator's own answers."""
    mine = Judgment.objects.filter(campaign_item__campaign=campaign, annotator=annotator)
    if judgment is None:
        latest = mine.order_by("-pk").values_list("campaign_item_id", flat=True).first()
        return latest, None
    before = (
        mine.filter(pk__lt=judgment.pk).order_by("-pk").values_list("campaign_item_id", flat=True).first()
    )
    after = mine.filter(pk__gt=judgment.pk).order_by("pk").values_list("campaign_item_id", flat=True).first()
    return before, after


def judgment_revisions(*, judgment: Judgment) -> QuerySet[JudgmentRevision]:
    """The answers a judgment had before, oldest first (shown to its own annotator only)."""
    return JudgmentRevision.objects.filter(judgment=judgment).order_by("revised_at", "pk")


def judgment_form_values(*, judgment: Judgment) -> dict[str, str]:
    """A recorded answer as the values of the annotation form's fields (to show it and
    change it): ``answer``, ``text`` and each payload key; a list ``references`` becomes
    ``reference_1``, ``reference_2``... Generic over tasks: the form's field names are the
    payload's keys."""
    values = {"answer": judgment.answer, "text": judgment.text}
    for key, value in (judgment.payload or {}).items():
        if isinstance(value, list | tuple):
            stem = key[:-1] if key.endswith("s") else key
            for i, part in enumerate(value, start=1):
                values[f"{stem}_{i}"] = str(part)
        else:
            values[key] = str(value)
    return values


def assignment_refusal(*, campaign: Campaign, progress: MyProgress) -> AssignmentRefused | None:
    """Why no item would be handed out now (the campaign is not active, the annotator is
    paused), as ``assignment_next`` would refuse; None when the annotator may start."""
    if campaign.status != CampaignStatus.ACTIVE:
        return CampaignNotActive.of(name=campaign.name, status=campaign.status)
    if progress.paused:
        return AnnotatorPaused()
    return None


# --- curator views ---------------------------------------------------------------------


def campaigns_progress(*, campaigns: Sequence[Campaign]) -> dict[int, dict[str, Any]]:
    """Per campaign id, its progress: ``n`` items (not gold), ``complete`` (with K
    judgments), ``started``, ``flagged`` for review, ``awaiting`` review (flagged and no
    curator decision yet), ``judgments`` made and ``needed`` (the sum of the items' K), ``percent``,
    ``gold_items``, ``skipped`` (items an annotator gave back unanswered). Five queries
    however many campaigns."""
    ids = [c.pk for c in campaigns]
    items = (
        CampaignItem.objects.filter(campaign_id__in=ids)
        .annotate(k=own_k())
        .values("campaign_id")
        .annotate(
            n=Count("pk", filter=Q(is_gold=False)),
            complete=Count("pk", filter=Q(is_gold=False, judgment_count__gte=F("k"))),
            # judgments needed: each item's K (its own, else the campaign's)
            needed=Coalesce(Sum("k", filter=Q(is_gold=False)), 0),
            started=Count("pk", filter=Q(is_gold=False, judgment_count__gt=0)),
            flagged=Count("pk", filter=Q(is_gold=False, needs_review=True)),
            gold_items=Count("pk", filter=Q(is_gold=True)),
        )
    )
    totals = {row.pop("campaign_id"): row for row in items}
    awaiting = dict(
        CampaignItem.objects.filter(campaign_id__in=ids, is_gold=False, needs_review=True)
        .exclude(adjudications__isnull=False)
        .values_list("campaign_id")
        .annotate(n=Count("pk"))
        .values_list("campaign_id", "n")
    )
    judgments = dict(
        Judgment.objects.filter(campaign_item__campaign_id__in=ids)
        .values_list("campaign_item__campaign_id")
        .annotate(n=Count("pk"))
        .values_list("campaign_item__campaign_id", "n")
    )
    skipped = dict(
        Assignment.objects.filter(campaign_item__campaign_id__in=ids, status=AssignmentStatus.SKIPPED)
        .values_list("campaign_item__campaign_id")
        .annotate(n=Count("pk"))
        .values_list("campaign_item__campaign_id", "n")
    )
    out = {}
    empty = {"n": 0, "complete": 0, "started": 0, "flagged": 0, "gold_items": 0, "needed": 0}
    for c in campaigns:
        row = dict(totals.get(c.pk, empty))
        done, needed = judgments.get(c.pk, 0), int(row.pop("needed"))
        row |= {
            "awaiting": awaiting.get(c.pk, 0),
            "skipped": skipped.get(c.pk, 0),
            "judgments": done,
            "needed": needed,
            "percent": round(100 * min(done, needed) / needed) if needed else 100,
        }
        out[c.pk] = row
    return out


def campaign_progress(*, campaign: Campaign) -> dict[str, Any]:
    """:func:`campaigns_progress` of one campaign."""
    return campaigns_progress(campaigns=[campaign])[campaign.pk]


@dataclass(frozen=True)
class CampaignOverview:
    """A row of the curator dashboard and the campaign list."""

    campaign: Campaign
    title: str
    progress: dict[str, Any]
    #: The headline agreement as last computed (None: never, or a free-text task).
    agreement: AgreementHeadline | None
    free_text: bool
    #: When an annotator last changed an answer in the campaign (None: never).
    last_revised: datetime | None = None

    @property
    def agreement_stale(self) -> bool:
        """Judgments were made, or answers changed, since the headline figure was computed."""
        if self.agreement is None:
            return False
        changed = self.last_revised is not None and self.last_revised > self.agreement.computed_at
        return changed or self.agreement.judgments < self.progress["judgments"]


def campaign_overview(*, user: Any) -> list[CampaignOverview]:
    """Every campaign the curator sees, newest first, with its progress and the headline
    agreement the agreement module last computed (seven queries in all)."""
    campaigns = list(campaign_list(user=user).select_related("agreement_headline"))
    progress = campaigns_progress(campaigns=campaigns)
    revised = dict(
        JudgmentRevision.objects.filter(judgment__campaign_item__campaign__in=[c.pk for c in campaigns])
        .values_list("judgment__campaign_item__campaign_id")
        .annotate(last=Max("revised_at"))
        .values_list("judgment__campaign_item__campaign_id", "last")
    )
    rows = []
    for c in campaigns:
        spec = task_spec(c.task)
        headline = getattr(c, "agreement_headline", None)
        rows.append(
            CampaignOverview(
                campaign=c,
                title=spec.title,
                progress=progress[c.pk],
                agreement=headline,
                free_text=spec.free_text,
                last_revised=revised.get(c.pk),
            )
        )
    return rows


def _seconds(values: list[int]) -> dict[str, float | None]:
    if not values:
        return {"median_seconds": None, "mean_seconds": None, "timed": 0}
    return {
        "median_seconds": statistics.median(values) / 1000,
        "mean_seconds": statistics.fmean(values) / 1000,
        "timed": len(values),
    }


def campaign_annotators(*, campaign: Campaign) -> list[dict[str, Any]]:
    """Per annotator: judgments, items skipped, time per item (median and mean seconds over the
    judgments with a recorded duration), gold accuracy, paused."""
    members = {
        m.annotator_id: m
        for m in CampaignAnnotator.objects.filter(campaign=campaign).select_related("annotator")
    }
    counts = dict(
        Judgment.objects.filter(campaign_item__campaign=campaign)
        .values_list("annotator_id")
        .annotate(n=Count("pk"))
        .values_list("annotator_id", "n")
    )
    skips = dict(
        Assignment.objects.filter(campaign_item__campaign=campaign, status=AssignmentStatus.SKIPPED)
        .values_list("annotator_id")
        .annotate(n=Count("pk"))
        .values_list("annotator_id", "n")
    )
    durations: dict[int, list[int]] = defaultdict(list)
    for annotator_id, ms in Judgment.objects.filter(
        campaign_item__campaign=campaign, duration_ms__isnull=False
    ).values_list("annotator_id", "duration_ms"):
        if ms is not None:
            durations[annotator_id].append(ms)
    rows = []
    for annotator_id, member in sorted(members.items(), key=lambda kv: kv[1].annotator.get_username()):
        rows.append(
            {
                "member": member,
                "username": member.annotator.get_username(),
                "judgments": counts.get(annotator_id, 0),
                "skipped": skips.get(annotator_id, 0),
                "gold_accuracy": (member.gold_correct / member.gold_seen) if member.gold_seen else None,
                **_seconds(durations.get(annotator_id, [])),
            }
        )
    return rows


#: What the adjudication page lists: its filters, in the order the page offers them.
ADJUDICATION_FILTERS: dict[str, str] = {
    "awaiting": "awaiting review",
    "flagged": "flagged (decided or not)",
    "decided": "decided",
    "all": "all items",
}


def _adjudication_items(*, campaign: Campaign, show: str) -> QuerySet[CampaignItem]:
    qs = CampaignItem.objects.filter(campaign=campaign)
    if show == "awaiting":
        return qs.filter(needs_review=True).exclude(adjudications__isnull=False)
    if show == "flagged":
        return qs.filter(needs_review=True)
    if show == "decided":
        return qs.filter(adjudications__isnull=False).distinct()
    return qs


@dataclass(frozen=True)
class VoteCount:
    key: str
    label: str
    votes: int


@dataclass(frozen=True)
class AdjudicationRow:
    """An item as the curator adjudicates it: its context per task, its votes in words,
    the share of its annotator pairs that disagree, its decisions so far."""

    item: CampaignItem
    context: list[ContextLine]
    votes: list[VoteCount]
    texts: list[str]
    disagreement: float
    #: Curators' decisions, oldest first, each with its words; the last one counts.
    adjudications: list[tuple[Adjudication, str]]
    #: The aggregated outcome in words ("" before the item is aggregated).
    outcome: str


@dataclass(frozen=True)
class AdjudicationPage:
    rows: list[AdjudicationRow]
    total: int
    page: int
    per_page: int
    decisions: list[tuple[str, str]]

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))


def adjudication_count(*, campaign: Campaign, show: str) -> int:
    """How many items the adjudication page lists under filter ``show``."""
    return _adjudication_items(campaign=campaign, show=show).count()


def adjudication_page(*, campaign: Campaign, show: str, page: int, per_page: int) -> AdjudicationPage:
    """One page of the items under filter ``show`` (a key of :data:`ADJUDICATION_FILTERS`),
    most disagreement first (the share of annotator pairs that gave different answers,
    :func:`annotation.agreement.stats.item_disagreement`), ties by item id; each with the
    context its task gives (:meth:`TaskType.context`) and its votes in words. Five queries
    whatever the page size: the filtered ids, their votes, the page's items, their decisions."""
    kind = task_type(campaign.task)
    ids = list(_adjudication_items(campaign=campaign, show=show).values_list("pk", flat=True))
    position = {item_id: n for n, item_id in enumerate(ids)}
    votes: dict[int, Counter[str]] = {i: Counter() for i in ids}
    texts: dict[int, list[str]] = {i: [] for i in ids}
    for item_id, answer, payload, text in (
        Judgment.objects.filter(campaign_item__in=_adjudication_items(campaign=campaign, show=show))
        .order_by("pk")
        .values_list("campaign_item_id", "answer", "payload", "text")
    ):
        written = text or kind.payload_text(payload)
        if written:
            texts[item_id].append(written)
        votes[item_id][kind.spec.answer_key(answer, payload) or "written"] += 1
    keys = sorted({key for counts in votes.values() for key in counts})
    table = np.zeros((len(ids), len(keys)), dtype=np.int64)
    column = {key: n for n, key in enumerate(keys)}
    for item_id, counts in votes.items():
        for key, n in counts.items():
            table[position[item_id], column[key]] = n
    disagreement = ag.item_disagreement(table) if keys else np.zeros(len(ids))
    order = sorted(ids, key=lambda i: (-round(float(disagreement[position[i]]), 9), i))
    chosen = order[(page - 1) * per_page : page * per_page]
    items = {i.pk: i for i in CampaignItem.objects.filter(pk__in=chosen).select_related(*kind.item_relations)}
    decided: dict[int, list[Adjudication]] = defaultdict(list)
    for adj in (
        Adjudication.objects.filter(campaign_item_id__in=chosen)
        .select_related("curator")
        .order_by("created_at", "pk")
    ):
        decided[adj.campaign_item_id].append(adj)
    rows = []
    for item_id in chosen:
        item = items[item_id]
        item.campaign = campaign
        rows.append(
            AdjudicationRow(
                item=item,
                context=kind.context(item),
                votes=[
                    VoteCount(key=key, label=kind.vote_label(key), votes=n)
                    for key, n in sorted(votes[item_id].items(), key=lambda kv: (-kv[1], kv[0]))
                ],
                texts=texts[item_id],
                disagreement=float(disagreement[position[item_id]]),
                adjudications=[(adj, kind.decision_label(adj.decision)) for adj in decided[item_id]],
                outcome=_outcome_words(kind, item),
            )
        )
    return AdjudicationPage(
        rows=rows,
        total=len(ids),
        page=page,
        per_page=per_page,
        decisions=[(d, kind.decision_label(d)) for d in kind.adjudication_decisions()],
    )


def _outcome_words(kind: TaskType, item: CampaignItem) -> str:
    """The item's aggregated label in words ("" before it is aggregated, or for a writing task)."""
    outcome = item.aggregate.get("outcome") if isinstance(item.aggregate, dict) else None
    return kind.decision_label(outcome) if isinstance(outcome, str) and outcome else ""


def item_summary(*, item: CampaignItem) -> str:
    if item.reason is not None:
        return item.reason.text
    if item.schema is not None:
        return item.schema.sentence
    if item.comve_item is not None:
        c = item.comve_item
        return " / ".join(s for s in (c.statement_0, c.statement_1) if s) or c.false_statement
    return "(writing slot)"


EXPORT_FIELDS = (
    "judgment_id",
    "campaign",
    "task",
    "item_id",
    "is_gold",
    "schema_id",
    "reason_id",
    "comve_item_id",
    "annotator",
    "answer",
    "text",
    "payload",
    "duration_ms",
    "submitted_at",
)


def judgment_export_rows(*, campaign: Campaign) -> Iterator[dict[str, Any]]:
    qs = (
        Judgment.objects.filter(campaign_item__campaign=campaign)
        .select_related("campaign_item", "annotator")
        .order_by("pk")
    )
    for j in qs.iterator(chunk_size=2000):
        item = j.campaign_item
        yield {
            "judgment_id": j.pk,
            "campaign": campaign.name,
            "task": campaign.task,
            "item_id": item.pk,
            "is_gold": item.is_gold,
            "schema_id": item.schema_id,
            "reason_id": item.reason_id,
            "comve_item_id": item.comve_item_id,
            "annotator": j.annotator.get_username(),
            "answer": j.answer,
            "text": j.text,
            "payload": j.payload,
            "duration_ms": j.duration_ms,
            "submitted_at": j.submitted_at.isoformat(),
        }


def task_choices(task: str) -> Any:
    return task_spec(task)
