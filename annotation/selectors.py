"""Reads of the annotation app, narrowed by what the user may see."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Count, Q, QuerySet
from django.http import Http404
from django.utils import timezone

from annotation.models import (
    Adjudication,
    Assignment,
    AssignmentStatus,
    Campaign,
    CampaignAnnotator,
    CampaignItem,
    CampaignStatus,
    Judgment,
)
from annotation.permissions import user_can_annotate, user_can_curate
from annotation.task_types import task_type
from annotation.tasks_registry import task_spec


def campaign_list(*, user: Any) -> QuerySet[Campaign]:
    """Curators see every campaign; annotators the active ones; others none."""
    if user_can_curate(user):
        return Campaign.objects.all()
    if user_can_annotate(user):
        return Campaign.objects.filter(status=CampaignStatus.ACTIVE, imported=False)
    return Campaign.objects.none()


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


def my_progress(*, campaign: Campaign, annotator: Any, now: datetime | None = None) -> MyProgress:
    """An annotator's own counts: judged, and items still open to them (an estimate:
    other annotators may take some first). Nothing about other annotators' answers."""
    now = now or timezone.now()
    done = Judgment.objects.filter(campaign_item__campaign=campaign, annotator=annotator).count()
    remaining = (
        CampaignItem.objects.filter(
            campaign=campaign, is_gold=False, judgment_count__lt=campaign.judgments_per_item
        )
        .exclude(assignments__annotator=annotator)
        .count()
    )
    current = Assignment.objects.filter(
        campaign_item__campaign=campaign,
        annotator=annotator,
        status=AssignmentStatus.LEASED,
        expires_at__gt=now,
    ).exists()
    paused = CampaignAnnotator.objects.filter(campaign=campaign, annotator=annotator, paused=True).exists()
    return MyProgress(done=done, remaining=remaining + int(current), paused=paused)


# --- curator views ---------------------------------------------------------------------


def campaign_progress(*, campaign: Campaign) -> dict[str, Any]:
    k = campaign.judgments_per_item
    items = CampaignItem.objects.filter(campaign=campaign, is_gold=False)
    totals = items.aggregate(
        n=Count("pk"),
        complete=Count("pk", filter=Q(judgment_count__gte=k)),
        started=Count("pk", filter=Q(judgment_count__gt=0)),
        flagged=Count("pk", filter=Q(needs_review=True)),
    )
    judgments = Judgment.objects.filter(campaign_item__campaign=campaign).count()
    needed = totals["n"] * k
    return {
        **totals,
        "judgments": judgments,
        "needed": needed,
        "percent": round(100 * min(judgments, needed) / needed) if needed else 100,
        "gold_items": CampaignItem.objects.filter(campaign=campaign, is_gold=True).count(),
    }


def campaign_annotators(*, campaign: Campaign) -> list[dict[str, Any]]:
    """Per annotator: judgments, median time, gold accuracy, paused."""
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
    rows = []
    for annotator_id, member in sorted(members.items(), key=lambda kv: kv[1].annotator.get_username()):
        rows.append(
            {
                "member": member,
                "username": member.annotator.get_username(),
                "judgments": counts.get(annotator_id, 0),
                "gold_accuracy": (member.gold_correct / member.gold_seen) if member.gold_seen else None,
            }
        )
    return rows


def campaign_item_count(*, campaign: Campaign, flagged_only: bool = False) -> int:
    """How many items the curator's item list of ``campaign`` has (flagged ones only, if asked)."""
    qs = CampaignItem.objects.filter(campaign=campaign)
    return (qs.filter(needs_review=True) if flagged_only else qs).count()


def campaign_items_page(
    *, campaign: Campaign, flagged_only: bool = False, limit: int = 200, offset: int = 0
) -> list[dict[str, Any]]:
    """Items with their votes and adjudications, for the curator (blind rules do not
    apply to curators)."""
    qs = (
        CampaignItem.objects.filter(campaign=campaign)
        .select_related("schema", "reason__schema", "comve_item")
        .order_by("-needs_review", "pk")
    )
    if flagged_only:
        qs = qs.filter(needs_review=True)
    items = list(qs[offset : offset + limit])
    ids = [i.pk for i in items]
    votes: dict[int, Counter[str]] = {i: Counter() for i in ids}
    texts: dict[int, list[str]] = {i: [] for i in ids}
    kind = task_type(campaign.task)
    for item_id, answer, payload, text in Judgment.objects.filter(campaign_item_id__in=ids).values_list(
        "campaign_item_id", "answer", "payload", "text"
    ):
        written = text or kind.payload_text(payload)
        if written:
            texts[item_id].append(written)
        votes[item_id][kind.spec.answer_key(answer, payload) or "written"] += 1
    adjudications: dict[int, list[Adjudication]] = {i: [] for i in ids}
    for adj in (
        Adjudication.objects.filter(campaign_item_id__in=ids).select_related("curator").order_by("created_at")
    ):
        adjudications[adj.campaign_item_id].append(adj)
    return [
        {
            "item": item,
            "summary": item_summary(item=item),
            "votes": sorted(votes[item.pk].items()),
            "texts": texts[item.pk],
            "adjudications": adjudications[item.pk],
        }
        for item in items
    ]


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
