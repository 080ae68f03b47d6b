"""The pipeline kinds (issue 13), each a list of stage definitions in one place.

A stage is one class with every hook (a test checks that each defines each one):

- ``task`` and ``default_k`` / ``min_k``: the campaign the stage runs (None: the stage only
  computes, over the earlier stages' outcome);
- ``select``: which items the stage takes from the earlier stages' outcome, with their
  counts per origin or outcome (read from ``CampaignItem.aggregate``, the campaigns' own
  records, never from the items' fields, which an imported label keeps);
- ``build``: what the stage writes when it starts (the candidate pool copies the twin
  question's valid reasons as reverse candidates); the ids its campaign takes;
- ``summarise``: the stage's outcome once its campaign is aggregated, kept on the stage;
- ``waits``: a stage without a campaign waits for the curator (the pool: generated
  candidates are made first) or is the last one and finishes at once.

The papers' rules are quoted in docs/pipelines.md.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from django.db import models

from annotation import aggregation_rules as rules
from annotation.answers import KNOWLEDGE_TYPES, reason_key
from annotation.models import CampaignItem, Pipeline, PipelineKind, PipelineStage, Task
from annotation.task_types import TASKS
from datasets.models import ComVEItem, Reason, ReasonOrigin, Schema
from datasets.services import campaign_source_file, reasons_copy

ORIGINS = (ReasonOrigin.HUMAN.value, ReasonOrigin.REVERSE.value, ReasonOrigin.GENERATED.value)


@dataclass
class Selection:
    """The items a stage works on: their kind and ids (or empty writing slots), with
    counts per origin or outcome (pairs, in display order) and a few first rows."""

    items: str
    ids: list[int] = field(default_factory=list)
    slots: int = 0
    counts: list[tuple[str, int]] = field(default_factory=list)
    note: str = ""

    @property
    def size(self) -> int:
        return self.slots if self.items == "slots" else len(self.ids)


@dataclass
class Context:
    """A pipeline with its stages by key (their campaigns loaded)."""

    pipeline: Pipeline
    stages: dict[str, PipelineStage]

    @classmethod
    def of(cls, pipeline: Pipeline) -> Context:
        stages = PipelineStage.objects.filter(pipeline=pipeline).select_related("campaign")
        return cls(pipeline=pipeline, stages={s.key: s for s in stages})

    def outcome(self, key: str) -> dict[str, Any]:
        return self.stages[key].outcome or {}

    def items(self, key: str) -> models.QuerySet[CampaignItem]:
        """The (non-gold) items of stage ``key``'s campaign."""
        stage = self.stages[key]
        if stage.campaign_id is None:
            return CampaignItem.objects.none()
        return CampaignItem.objects.filter(campaign_id=stage.campaign_id, is_gold=False).order_by("pk")

    def k(self, stage: StageKind) -> int:
        return int(self.pipeline.k.get(stage.key, stage.default_k or 1))


def _counts(counter: Counter[str], order: Iterable[str]) -> list[tuple[str, int]]:
    order = list(order)
    rest = sorted(k for k in counter if k not in order)
    return [(k, counter[k]) for k in [*order, *rest] if counter[k] or k in order]


class StageKind(ABC):
    """One stage of a pipeline kind. Subclasses set every class attribute and implement
    every abstract method."""

    key: ClassVar[str]
    title: ClassVar[str]
    #: The annotation task of the stage's campaign; None: the stage only computes.
    task: ClassVar[str | None]
    #: K of the stage's campaign (the paper's), the least K the paper allows; None without a campaign.
    default_k: ClassVar[int | None]
    min_k: ClassVar[int | None]
    #: The paper's rule in a line (the pipeline page shows it; docs/pipelines.md quotes it).
    rule: ClassVar[str]
    #: Without a campaign: True waits for the curator's confirmation, False finishes at once.
    waits: ClassVar[bool]

    @abstractmethod
    def select(self, ctx: Context) -> Selection:
        """The items the stage takes from the earlier stages' outcome (writes nothing)."""

    @abstractmethod
    def build(self, ctx: Context, selection: Selection) -> Selection:
        """Writes the stage makes when it starts; the items its campaign takes."""

    @abstractmethod
    def summarise(self, ctx: Context) -> dict[str, Any]:
        """The stage's outcome (after its campaign's aggregation): ``counts`` (pairs in
        display order), ``lines`` (sentences) and the ids the later stages read."""


class _NoBuild:
    def build(self, ctx: Context, selection: Selection) -> Selection:
        return selection


# --------------------------------------------------------------------------- WinoWhy


class ReasonWritingStage(_NoBuild, StageKind):
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


class ValidationStage(_NoBuild, StageKind):
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


class PlausibilityStage(_NoBuild, StageKind):
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
        return Selection(items="reasons", ids=ids, counts=_counts(origins, ORIGINS))

    def summarise(self, ctx: Context) -> dict[str, Any]:
        labels: Counter[str] = Counter()
        for origin, aggregate in (
            ctx.items(self.key).exclude(aggregate={}).values_list("reason__origin", "aggregate")
        ):
            labels[f"{origin} {aggregate.get('label', '')}"] += 1
        order = [f"{o} {lab}" for o in ORIGINS for lab in ("positive", "acceptable", "negative")]
        return {"counts": [(k, n) for k, n in _counts(labels, order) if n]}


class KnowledgeTypeStage(_NoBuild, StageKind):
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
        counts = [(k, n) for k, n in _counts(types, KNOWLEDGE_TYPES) if n]
        return {"counts": [*counts, ("ties (the first type in the list wins)", ties)]}


class MajorTypesStage(_NoBuild, StageKind):
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


# --------------------------------------------------------------------------- ComVE


class ComVEWritingStage(_NoBuild, StageKind):
    key = "writing"
    title = "ComVE writing"
    task = Task.COMVE_WRITING
    default_k = TASKS[Task.COMVE_WRITING].default_k
    min_k = 1
    rule = "Writers write items: two statements, three reasons, three references (ComVE 3.1)."
    waits = False

    def select(self, ctx: Context) -> Selection:
        n = int(ctx.pipeline.slots)
        return Selection(items="slots", slots=n, counts=[("writing slots", n)])

    def summarise(self, ctx: Context) -> dict[str, Any]:
        campaign = ctx.stages[self.key].campaign
        assert campaign is not None
        ids = list(
            ComVEItem.objects.filter(
                source_file=campaign_source_file(campaign.name), collection=ctx.pipeline.collection
            ).values_list("pk", flat=True)
        )
        return {"counts": [("items written", len(ids))], "item_ids": sorted(ids)}


def _check_summary(items: models.QuerySet[CampaignItem]) -> dict[str, Any]:
    """ComVE 3.1: an item more than half of the testees answered wrong is rewritten; the
    human accuracy is the share of right answers (over every item, and over the items
    kept, which is what the paper counts as human performance)."""
    rewrite: list[int] = []
    right = total = kept_right = kept_total = 0
    for comve_id, aggregate in items.exclude(aggregate={}).values_list("comve_item_id", "aggregate"):
        n = int(aggregate.get("n", 0))
        wrong = int(aggregate.get("wrong", 0))
        right += n - wrong
        total += n
        if aggregate.get("needs_rewrite"):
            rewrite.append(comve_id)
        else:
            kept_right += n - wrong
            kept_total += n
    accuracy = right / total if total else None
    return {
        "counts": [("kept", len(items.exclude(aggregate={})) - len(rewrite)), ("to rewrite", len(rewrite))],
        "lines": [f"human accuracy: {_percent(accuracy)} of {total} answers right"],
        "rewrite_ids": sorted(rewrite),
        "accuracy": accuracy,
        "accuracy_kept": kept_right / kept_total if kept_total else None,
        "answers": total,
    }


class ComVECheckStage(_NoBuild, StageKind):
    key = "check"
    title = "Check by testees"
    task = Task.COMVE_CHECK
    default_k = TASKS[Task.COMVE_CHECK].default_k
    min_k = 3
    rule = "Each item is answered by at least three testees; more than half wrong: rewrite (ComVE 3.1)."
    waits = False

    def select(self, ctx: Context) -> Selection:
        ids = list(ctx.outcome("writing").get("item_ids", []))
        return Selection(items="comve", ids=ids, counts=[("written items", len(ids))])

    def summarise(self, ctx: Context) -> dict[str, Any]:
        return _check_summary(ctx.items(self.key))


class ComVERewriteStage(_NoBuild, StageKind):
    key = "rewrite"
    title = "Rewrite"
    task = Task.COMVE_REWRITE
    default_k = TASKS[Task.COMVE_REWRITE].default_k
    min_k = 1
    rule = "Items more than half of the testees answered wrong are rewritten, shown with the answers (ComVE 3.1)."
    waits = False

    def select(self, ctx: Context) -> Selection:
        ids = list(ctx.outcome("check").get("rewrite_ids", []))
        return Selection(items="comve", ids=ids, counts=[("items to rewrite", len(ids))])

    def summarise(self, ctx: Context) -> dict[str, Any]:
        ids = [
            comve_id
            for comve_id, aggregate in ctx.items(self.key)
            .exclude(aggregate={})
            .values_list("comve_item_id", "aggregate")
            if aggregate.get("rewritten_by")
        ]
        return {"counts": [("rewritten", len(ids))], "item_ids": sorted(ids)}


class ComVERecheckStage(_NoBuild, StageKind):
    key = "recheck"
    title = "Check of the rewritten items"
    task = Task.COMVE_CHECK
    default_k = TASKS[Task.COMVE_CHECK].default_k
    min_k = 3
    rule = "The rewritten items are checked again by at least three testees (ComVE 3.1)."
    waits = False

    def select(self, ctx: Context) -> Selection:
        ids = list(ctx.outcome("rewrite").get("item_ids", []))
        return Selection(items="comve", ids=ids, counts=[("rewritten items", len(ids))])

    def summarise(self, ctx: Context) -> dict[str, Any]:
        return _check_summary(ctx.items(self.key))


def _percent(value: Any) -> str:
    return "no answers" if value is None else f"{float(value):.1%}"


class HumanAccuracyStage(_NoBuild, StageKind):
    key = "accuracy"
    title = "Human accuracy"
    task = None
    default_k = None
    min_k = None
    rule = "Human accuracy = the share of the testees' right answers (ComVE 3.1, 4)."
    waits = False

    def select(self, ctx: Context) -> Selection:
        ids = list(ctx.outcome("writing").get("item_ids", []))
        return Selection(items="comve", ids=ids, counts=[("items", len(ids))])

    def summarise(self, ctx: Context) -> dict[str, Any]:
        lines = []
        for key in ("check", "recheck"):
            o = ctx.outcome(key)
            if o.get("skipped"):
                lines.append(f"{ctx.stages[key].key}: skipped ({o['skipped']})")
                continue
            lines.append(
                f"{key}: {_percent(o.get('accuracy'))} of {o.get('answers', 0)} answers right; "
                f"{_percent(o.get('accuracy_kept'))} on the items kept (the paper's human performance)"
            )
        return {
            "counts": [],
            "lines": lines,
            "accuracy": {k: ctx.outcome(k).get("accuracy") for k in ("check", "recheck")},
        }


@dataclass(frozen=True)
class PipelineDefinition:
    kind: str
    title: str
    stages: tuple[StageKind, ...]
    #: The item kind a collection holds for this pipeline (a collection of schemas or of ComVE items).
    collection_items: str
    #: Whether the pipeline starts from empty writing slots (how many: the form asks).
    uses_slots: bool

    def stage(self, key: str) -> StageKind:
        for s in self.stages:
            if s.key == key:
                return s
        raise KeyError(key)


PIPELINES: dict[str, PipelineDefinition] = {
    PipelineKind.WINOWHY: PipelineDefinition(
        kind=PipelineKind.WINOWHY,
        title="WinoWhy",
        stages=(
            ReasonWritingStage(),
            ValidationStage(),
            CandidatePoolStage(),
            PlausibilityStage(),
            KnowledgeTypeStage(),
            MajorTypesStage(),
        ),
        collection_items="schemas",
        uses_slots=False,
    ),
    PipelineKind.COMVE: PipelineDefinition(
        kind=PipelineKind.COMVE,
        title="ComVE",
        stages=(
            ComVEWritingStage(),
            ComVECheckStage(),
            ComVERewriteStage(),
            ComVERecheckStage(),
            HumanAccuracyStage(),
        ),
        collection_items="comve",
        uses_slots=True,
    ),
}
