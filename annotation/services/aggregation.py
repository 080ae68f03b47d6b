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
from annotation.services.assignment import item_k
from annotation.task_types import AggregatedItem, ItemAggregate, TaskType, task_type
from core.roles import Actor, signed_in
from datasets.labels import LABEL_FIELDS, CampaignLayers
from datasets.services import CampaignRows


def adjudication_decisions(task: str) -> tuple[str, ...]:
    """What a curator may decide on an item of ``task``."""
    return task_type(task).adjudication_decisions()


@dataclass(frozen=True)
class AdjudicationResult:
    """A recorded decision and what it did: ``applied`` when the item had its K judgments
    and its aggregated label now follows the decision; otherwise the decision waits for the
    item's last judgments and the next aggregation of the campaign."""

    adjudication: Adjudication
    applied: bool
    label: str | None
    judgments: int
    needed: int


def adjudication_record(
    *, item: CampaignItem, curator: Actor, decision: str, note: str = ""
) -> AdjudicationResult:
    """A curator's decision on an item, stored beside the votes (which stay as they are),
    and applied at once: the item is aggregated again by the campaign's rule, exactly as
    :func:`campaign_aggregate` would (the same code), so its label and the labels it writes
    onto the data set follow the decision now. An item without its K judgments is left to
    the aggregation that follows its last judgment."""
    curator = signed_in(curator)
    campaign = item.campaign
    kind = task_type(campaign.task)
    allowed = kind.adjudication_decisions()
    if decision not in allowed:
        words = ", ".join(kind.decision_label(d) for d in allowed)
        raise AnnotationError(f"decision: {decision!r} is not one of this task's decisions ({words})")
    if len(note) > 5000:
        raise AnnotationError("note: at most 5000 characters")
    with transaction.atomic():
        # the item's row locked: two decisions on one item apply one after the other
        item = (
            CampaignItem.objects.select_for_update(of=("self",))
            .select_related(*kind.item_relations)
            .get(pk=item.pk)
        )
        item.campaign = campaign
        adjudication = Adjudication.objects.create(
            campaign_item=item, curator=curator, decision=decision, note=note
        )
        votes = list(Judgment.objects.filter(campaign_item=item).order_by("pk"))
        k = item_k(campaign, item.judgments_needed)
        applied = not item.is_gold and len(votes) >= k
        label = None
        if applied:
            changes = _Changes(campaign)
            label = _aggregate_one(kind, campaign, item, votes, decision, changes).label
            changes.write()
    return AdjudicationResult(
        adjudication=adjudication, applied=applied, label=label, judgments=len(votes), needed=k
    )


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
    #: Labels of the campaign's layer written (new or changed), and of those, the ones on
    #: items an import labelled: these keep the imported label in place.
    labels_changed: int = 0
    labels_over_import: int = 0
    #: Nothing was kept: what aggregating would do (``campaign_aggregate(dry_run=True)``).
    dry_run: bool = False


class _Changes:
    """Collects changed rows and writes them with one bulk_update per model. Labels go to
    the campaign's own layer (``datasets.labels``): an item's fields take them only where
    no import gave that label, and only when the campaign's label changes. Rows made from
    written answers go to ``datasets.services.CampaignRows``, which records their provenance
    (one batch of format campaign)."""

    def __init__(self, campaign: Campaign) -> None:
        self.rows: dict[type[models.Model], dict[int, models.Model]] = defaultdict(dict)
        self.fields: dict[type[models.Model], set[str]] = defaultdict(set)
        self.layers = CampaignLayers(campaign_id=campaign.pk, campaign_name=campaign.name)
        self.written = CampaignRows(campaign_name=campaign.name, task=campaign.task)

    def set(self, obj: models.Model, values: dict[str, Any]) -> bool:
        if type(obj) not in LABEL_FIELDS:
            return self._set_fields(obj, values)
        labels, plain = self.layers.split(obj, values)
        changed = [self.layers.put(obj, name, value) for name, value in labels.items()]
        return self._set_fields(obj, plain) or any(changed)

    def _set_fields(self, obj: models.Model, values: dict[str, Any]) -> bool:
        changed = [name for name, value in values.items() if getattr(obj, name) != value]
        for name in changed:
            setattr(obj, name, values[name])
        if changed:
            self.rows[type(obj)][obj.pk] = obj
            self.fields[type(obj)].update(changed)
        return bool(changed)

    def write(self) -> None:
        for obj, values in self.layers.write():
            self._set_fields(obj, values)
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
        self.written.write()


def _aggregate_one(
    kind: TaskType,
    campaign: Campaign,
    item: CampaignItem,
    votes: list[Judgment],
    decision: str | None,
    changes: _Changes,
) -> _ItemDone:
    """The task's rule on one item with its K votes and its latest decision: the rows to
    change go to ``changes``, the item's aggregate record and review flag too."""
    result = kind.aggregate_item(campaign=campaign, item=item, votes=votes, decision=decision)
    created = changes.written.add(result.written)
    changed = created > 0
    for obj, values in result.updates:
        changed |= changes.set(obj, values)
    counts = dict(sorted(Counter(j.answer for j in votes).items()))
    aggregate: dict[str, Any] = {"votes": counts, "n": len(votes), **result.record}
    if result.label is not None:
        aggregate["outcome"] = result.label  # the label in the summary, for the curator's pages
    if decision:
        aggregate["adjudication"] = decision
    changed |= changes.set(item, {"aggregate": aggregate, "needs_review": result.needs_review})
    return _ItemDone(result=result, changed=changed, created=created)


@dataclass(frozen=True)
class _ItemDone:
    result: ItemAggregate
    changed: bool
    #: Rows made from the item's written answers (reasons, ComVE items).
    created: int

    @property
    def label(self) -> str | None:
        return self.result.label


def campaign_aggregate(
    *, campaign: Campaign, dry_run: bool = False, written_so_far: bool = False
) -> AggregateSummary:
    """Apply the task's rule to every item with K judgments and write the labels into the
    campaign's layer (and onto the items that no import labelled). Idempotent: a second
    run finds nothing to change (``changed == 0``). ``dry_run``: the same work, counted
    and then rolled back, so that a curator sees what it would change before confirming.
    ``written_so_far`` (a writing campaign closed before every item had K answers, as a
    pipeline's forced advance does): the items with at least one written answer are taken
    too, so that nothing anyone wrote is left out; a vote needs its K answers, so for a
    task of choices it changes nothing."""
    summary = AggregateSummary(dry_run=dry_run)
    kind = task_type(campaign.task)
    so_far = written_so_far and kind.spec.free_text
    with transaction.atomic():
        relations = {"schema", "reason", "reason__schema", "comve_item", "explanation__comve_item"}
        items = list(
            CampaignItem.objects.filter(campaign=campaign, is_gold=False)
            .select_related(*sorted(relations | set(kind.item_relations)))
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
        changes = _Changes(campaign)
        aggregated: list[AggregatedItem] = []
        for item in items:
            item_votes = votes.get(item.pk, [])
            # each item's K: its own (ANLI's third vote) over the campaign's
            if len(item_votes) < (1 if so_far else item_k(campaign, item.judgments_needed)):
                summary.pending += 1
                continue
            summary.aggregated += 1
            done = _aggregate_one(kind, campaign, item, item_votes, decisions.get(item.pk), changes)
            result = done.result
            summary.created += done.created
            if result.label is not None:
                summary.labels[result.label] += 1
            summary.changed += int(done.changed)
            aggregated.append(AggregatedItem(item=item, votes=item_votes, result=result))
        finish = kind.aggregate_finish(aggregated)
        for obj, values in finish.updates:
            summary.changed += int(changes.set(obj, values))
        summary.extra.update(finish.extra)
        changes.write()
        # rows made from written answers link back to what they were made from (an
        # adversarial item to its twin pair or ComVE item)
        kind.rows_written(campaign=campaign, made=changes.written.made)
        summary.labels_changed = changes.layers.counts.changed
        summary.labels_over_import = changes.layers.counts.over_import
        if dry_run:
            transaction.set_rollback(True)
    return summary
