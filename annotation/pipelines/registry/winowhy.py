"""WinoWhy's pipeline (Zhang et al. 2020, section 2): reason writing, validation, the
candidate pool, plausibility voting, knowledge types, major types."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from annotation import aggregation_rules as rules
from annotation.answers import KNOWLEDGE_TYPES, reason_key
from annotation.models import Task
from annotation.pipelines.registry.base import Context, NoBuild, Selection, StageKind, counts_in_order
from annotation.task_types import TASKS
from datasets.models import Reason, ReasonOrigin, Schema
from datasets.services import campaign_source_file, reasons_copy

ORIGINS = (ReasonOrigin.HUMAN.value, ReasonOrigin.REVERSE.value, ReasonOrigin.GENERATED.value)


class ReasonWritingStage(NoBuild, StageKind):
    key = "writing"
    title = "Reason writing"
    task = Task.REASON_WRITING
    default_k = TASKS[Task.REASON_WRITING].default_k
    min_k = 1
    rule = "Five annotators write a reason for each question (WinoWhy 2.1)."
    waits = False

    def select(self, ctx: Context) -> Selection:
        ids = list(
            Schema.objects.filter(collection=ctx.pipeline.collection)
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        return Selection(items="schemas", ids=ids, counts=[("questions", len(ids))])

    def summarise(self, ctx: Context) -> dict[str, Any]:
        campaign = ctx.stages[self.key].campaign
        assert campaign is not None
        ids: list[int] = []
        # identical reasons for one question go to validation once: the first is kept, the
        # others are recorded with it (their writers' judgments stay on the writing campaign)
        first: dict[tuple[int, str], int] = {}
        merged: dict[str, list[int]] = {}
        for pk, schema_id, text in (
            Reason.objects.filter(source_file=campaign_source_file(campaign.name))
            .order_by("pk")
            .values_list("pk", "schema_id", "text")
        ):
            key = (schema_id, reason_key(text))
            if key in first:
                merged.setdefault(str(first[key]), []).append(pk)
            else:
                first[key] = pk
                ids.append(pk)
        done = ctx.items(self.key).exclude(aggregate={}).count()
        twins = sum(len(v) for v in merged.values())
        counts = [("questions written for", done), ("reasons written", len(ids) + twins)]
        if twins:
            counts.append(("identical reasons merged", twins))
        return {"counts": counts, "reason_ids": ids, "merged": merged}


class ValidationStage(NoBuild, StageKind):
    key = "validation"
    title = "Validation of the written reasons"
    task = Task.REASON_PLAUSIBILITY
    default_k = 5
    min_k = 1
    rule = "Five annotators judge each written reason; it is valid if at least four find it plausible (WinoWhy 2.1)."
    waits = False

    def select(self, ctx: Context) -> Selection:
        ids = list(ctx.outcome("writing").get("reason_ids", []))
        return Selection(items="reasons", ids=ids, counts=[(ReasonOrigin.HUMAN.value, len(ids))])

    def summarise(self, ctx: Context) -> dict[str, Any]:
        valid: list[int] = []
        invalid = 0
        for reason_id, aggregate in (
            ctx.items(self.key).exclude(aggregate={}).values_list("reason_id", "aggregate")
        ):
            if aggregate.get("label") == "positive":  # >= 4 of 5 plausible, or a curator's decision
                valid.append(reason_id)
            else:
                invalid += 1
        return {"counts": [("valid", len(valid)), ("not valid", invalid)], "valid_ids": sorted(valid)}


def _twins(schemas: Iterable[Schema]) -> dict[int, int]:
    """Each question's reverse question (its twin), both ways."""
    twin: dict[int, int] = {}
    for s in schemas:
        if s.twin_id:
            twin[s.pk] = s.twin_id
            twin.setdefault(s.twin_id, s.pk)
    return twin


class CandidatePoolStage(StageKind):
    key = "pool"
    title = "Candidate pool"
    task = None
    default_k = None
    min_k = None
    rule = (
        "Candidates = the valid human reasons + the reverse question's human reasons + "
        "generated reasons (WinoWhy 3.2)."
    )
    waits = True

    def _reverse_source(self, ctx: Context) -> str:
        return f"pipeline:{ctx.pipeline.name}:reverse"

    def _plan(self, ctx: Context) -> tuple[list[Reason], list[tuple[int, Reason]], list[int]]:
        """(valid human reasons, (question, twin's reason) pairs to copy, generated ids)."""
        schemas = list(Schema.objects.filter(collection=ctx.pipeline.collection))
        twin = _twins(schemas)
        valid = list(
            Reason.objects.filter(pk__in=ctx.outcome("validation").get("valid_ids", [])).order_by("pk")
        )
        reverse = [(twin[r.schema_id], r) for r in valid if r.schema_id in twin]
        generated = list(
            Reason.objects.filter(
                schema__collection=ctx.pipeline.collection, origin=ReasonOrigin.GENERATED
            ).values_list("pk", flat=True)
        )
        return valid, reverse, sorted(generated)

    def select(self, ctx: Context) -> Selection:
        valid, reverse, generated = self._plan(ctx)
        existing = dict(
            Reason.objects.filter(source_file=self._reverse_source(ctx)).values_list("source_row", "pk")
        )
        ids = [r.pk for r in valid] + [existing[r.pk] for _, r in reverse if r.pk in existing] + generated
        return Selection(
            items="reasons",
            ids=ids,
            counts=[
                (ReasonOrigin.HUMAN.value, len(valid)),
                (ReasonOrigin.REVERSE.value, len(reverse)),
                (ReasonOrigin.GENERATED.value, len(generated)),
            ],
        )

    def build(self, ctx: Context, selection: Selection) -> Selection:
        """Copies each valid human reason of a question onto its reverse question, origin
        ``reverse``, once (a second build finds the copies)."""
        valid, reverse, generated = self._plan(ctx)
        copies = reasons_copy(source=self._reverse_source(ctx), copies=reverse, origin=ReasonOrigin.REVERSE)
        reverse_ids = [copies[original.pk] for _, original in reverse]
        return Selection(
            items="reasons",
            ids=[r.pk for r in valid] + reverse_ids + generated,
            counts=selection.counts,
            note=selection.note,
        )

    def summarise(self, ctx: Context) -> dict[str, Any]:
        selection = self.select(ctx)
        return {"counts": selection.counts, "pool_ids": selection.ids}


class PlausibilityStage(NoBuild, StageKind):
    key = "plausibility"
    title = "Plausibility voting"
    task = Task.REASON_PLAUSIBILITY
    default_k = TASKS[Task.REASON_PLAUSIBILITY].default_k
    min_k = 1
    rule = "Five votes per candidate: positive if at least 4 of 5 say plausible, negative if at most 1 (WinoWhy 3.3, 3.4)."
    waits = False

    def select(self, ctx: Context) -> Selection:
        ids = list(ctx.outcome("pool").get("pool_ids", []))
        origins = Counter(Reason.objects.filter(pk__in=ids).values_list("origin", flat=True))
        return Selection(items="reasons", ids=ids, counts=counts_in_order(origins, ORIGINS))

    def summarise(self, ctx: Context) -> dict[str, Any]:
        labels: Counter[str] = Counter()
        for origin, aggregate in (
            ctx.items(self.key).exclude(aggregate={}).values_list("reason__origin", "aggregate")
        ):
            labels[f"{origin} {aggregate.get('label', '')}"] += 1
        order = [f"{o} {lab}" for o in ORIGINS for lab in ("positive", "acceptable", "negative")]
        return {"counts": [(k, n) for k, n in counts_in_order(labels, order) if n]}


class KnowledgeTypeStage(NoBuild, StageKind):
    key = "knowledge"
    title = "Knowledge types"
    task = Task.KNOWLEDGE_TYPE
    default_k = TASKS[Task.KNOWLEDGE_TYPE].default_k
    min_k = 1
    rule = "Five annotators choose the knowledge type of each valid reason (WinoWhy 2.2.2)."
    waits = False

    def select(self, ctx: Context) -> Selection:
        # "For each collected valid reason" (2.2): the reasons the validation found valid.
        ids = list(ctx.outcome("validation").get("valid_ids", []))
        return Selection(items="reasons", ids=ids, counts=[("valid human reasons", len(ids))])

    def summarise(self, ctx: Context) -> dict[str, Any]:
        types: Counter[str] = Counter()
        ties = 0
        for aggregate in ctx.items(self.key).exclude(aggregate={}).values_list("aggregate", flat=True):
            types[str(aggregate.get("label", ""))] += 1
            ties += int(bool(aggregate.get("tie")))
        counts = [(k, n) for k, n in counts_in_order(types, KNOWLEDGE_TYPES) if n]
        return {"counts": [*counts, ("ties (the first type in the list wins)", ties)]}


class MajorTypesStage(NoBuild, StageKind):
    key = "major"
    title = "Major knowledge types"
    task = None
    default_k = None
    min_k = None
    rule = (
        "A question's major type is the type with most votes over its valid reasons; a tie "
        "gives several (WinoWhy 2.2.2)."
    )
    waits = False

    def select(self, ctx: Context) -> Selection:
        ids = sorted(set(ctx.items("knowledge").values_list("reason__schema_id", flat=True)))
        return Selection(items="schemas", ids=ids, counts=[("questions", len(ids))])

    def summarise(self, ctx: Context) -> dict[str, Any]:
        per_question: dict[str, list[list[str]]] = defaultdict(list)
        for external_id, aggregate in (
            ctx.items("knowledge")
            .exclude(aggregate={})
            .values_list("reason__schema__external_id", "aggregate")
        ):
            votes = aggregate.get("votes") or {}
            per_question[external_id].append([t for t, n in votes.items() for _ in range(int(n))])
        majors = {q: rules.major_types(v) for q, v in sorted(per_question.items())}
        single = sum(1 for t in majors.values() if len(t) == 1)
        return {
            "counts": [("single type", single), ("several types", len(majors) - single)],
            "lines": [f"{q}: {', '.join(t)}" for q, t in majors.items()],
            "major_types": majors,
        }
