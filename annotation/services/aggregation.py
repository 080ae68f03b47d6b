"""Aggregation and adjudication: a curator's decision beside the votes, and the task's
rule applied to every item with K judgments, writing the labels onto the items."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.db import models, transaction

from annotation.errors import AnnotationError
from annotation.models import Adjudication, Campaign, CampaignItem, Judgment
from annotation.task_types import AggregatedItem, task_type
from core.roles import Actor, signed_in


def adjudication_decisions(task: str) -> tuple[str, ...]:
    """What a curator may decide on an item of ``task``."""
    return task_type(task).adjudication_decisions()


def adjudication_record(*, item: CampaignItem, curator: Actor, decision: str, note: str = "") -> Adjudication:
    """A curator's decision on an item, stored beside the votes (which stay as they are)."""
    curator = signed_in(curator)
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
                    model._default_manager.filter(pk__in=pks[start : start + 500]).update(**values)


def campaign_aggregate(*, campaign: Campaign) -> AggregateSummary:
    """Apply the task's rule to every item with K judgments and write the labels onto the
    items. Idempotent: a second run finds nothing to change (``changed == 0``)."""
    summary = AggregateSummary()
    kind = task_type(campaign.task)
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
        aggregated: list[AggregatedItem] = []
        for item in items:
            item_votes = votes.get(item.pk, [])
            if len(item_votes) < k:
                summary.pending += 1
                continue
            summary.aggregated += 1
            decision = decisions.get(item.pk)
            result = kind.aggregate_item(campaign=campaign, item=item, votes=item_votes, decision=decision)
            changed = result.created > 0
            for obj, values in result.updates:
                changed |= changes.set(obj, values)
            summary.created += result.created
            if result.label is not None:
                summary.labels[result.label] += 1
            counts = dict(sorted(Counter(j.answer for j in item_votes).items()))
            aggregate: dict[str, Any] = {"votes": counts, "n": len(item_votes), **result.record}
            if decision:
                aggregate["adjudication"] = decision
            changed |= changes.set(item, {"aggregate": aggregate, "needs_review": result.needs_review})
            summary.changed += int(changed)
            aggregated.append(AggregatedItem(item=item, votes=item_votes, result=result))
        finish = kind.aggregate_finish(aggregated)
        for obj, values in finish.updates:
            summary.changed += int(changes.set(obj, values))
        summary.extra.update(finish.extra)
        changes.write()
    return summary
