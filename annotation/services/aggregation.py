"""Aggregation and adjudication: a curator's decision beside the votes, and the task's
rule applied to every item with K judgments, writing the labels onto the items."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.db import models, transaction

from annotation import aggregation_rules as rules
from annotation.errors import AnnotationError
from annotation.models import Adjudication, Campaign, CampaignItem, Judgment, Task
from annotation.services.campaigns import _has_options
from annotation.switching import bracketed_sentence, switch_candidates
from annotation.tasks_registry import answer_key, task_spec
from datasets.models import ComVEDataset, ComVEItem, ComVESplit, Reason, ReasonOrigin, Schema


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
