"""The WinoWhy tasks (Zhang et al. 2020): people write the reason a question's answer is
right (2.1), judge each reason's plausibility (2.1, 3.3) and say which kind of commonsense
knowledge it uses (2.2)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from django.db import models

from annotation import aggregation_rules as rules
from annotation.answers import KNOWLEDGE_TYPES, Choice, TaskSpec, yes_no
from annotation.models import Campaign, CampaignItem, Judgment, Task
from annotation.task_types.base import (
    AggregatedItem,
    AggregateFinish,
    ContextLine,
    DataItem,
    ItemAggregate,
    TaskType,
    schema_context,
    source_judgment,
)
from datasets.models import Schema
from datasets.services import NewReason


class OnReasonsTask(TaskType):
    """Tasks on one reason, shown with its question and the question's answer."""

    item_relations = ("reason__schema",)

    def present(self, item: CampaignItem) -> dict[str, Any]:
        reason = item.reason
        if reason is None:
            return {}
        return {
            "sentence": reason.schema.sentence,
            "pronoun": reason.schema.pronoun,
            "answer": reason.schema.correct_candidate,
            "reason": reason.text,
        }

    def selectable(self, items: models.QuerySet[Any]) -> models.QuerySet[Any]:
        return items

    def payload_text(self, payload: Any) -> str:
        return ""

    def context(self, item: CampaignItem) -> list[ContextLine]:
        reason = item.reason
        if reason is None:
            return []
        origin = f" ({reason.get_origin_display()})" if reason.origin else ""
        return [*schema_context(reason.schema), ContextLine(f"Reason{origin}", reason.text)]

    def vote_label(self, key: str) -> str:
        return self.spec.label_of(key)


class ReasonWritingTask(TaskType):
    """WinoWhy 2.1: every written reason is kept, to be validated by a plausibility campaign."""

    name = Task.REASON_WRITING
    spec = TaskSpec(
        name,
        "Reason writing",
        ("schemas",),
        5,
        writes_text=True,
        min_text_length=3,
        instructions="""You see a question and its correct answer. Complete "'X' refers to Y because ..." with the reason a person would give: the commonsense knowledge that decides it. One or two plain sentences; do not repeat the question.

Worked examples
- "The fish ate the worm. It was hungry." 'It' refers to the fish because: the one who eats is the one who is hungry.
- "The trophy doesn't fit into the suitcase because it is too large." 'it' refers to the trophy because: an object that is too large cannot fit into a container.""",
    )
    template = "annotation/tasks/reason_writing.html"
    item_relations = ("schema",)
    plausible_answer = None
    answers_are_knowledge_types = False

    def present(self, item: CampaignItem) -> dict[str, Any]:
        schema = item.schema
        if schema is None:
            return {}
        return {"sentence": schema.sentence, "pronoun": schema.pronoun, "answer": schema.correct_candidate}

    def gold_answer(self, obj: DataItem) -> str:
        return ""

    def selectable(self, items: models.QuerySet[Any]) -> models.QuerySet[Any]:
        return items

    def payload_text(self, payload: Any) -> str:
        return ""

    def adjudication_decisions(self) -> tuple[str, ...]:
        return ("accept", "reject")

    def context(self, item: CampaignItem) -> list[ContextLine]:
        return schema_context(item.schema) if item.schema is not None else []

    def vote_label(self, key: str) -> str:
        return "Written reason"

    def aggregate_item(
        self, *, campaign: Campaign, item: CampaignItem, votes: Sequence[Judgment], decision: str | None
    ) -> ItemAggregate:
        schema = item.schema
        assert schema is not None
        # every written reason becomes a Reason (origin human, no plausibility yet) to be
        # validated by a plausibility campaign; one per judgment, never twice
        return ItemAggregate(
            record={"reasons": len(votes)},
            written=[NewReason(judgment=source_judgment(j), schema_id=schema.pk) for j in votes],
        )

    def aggregate_finish(self, aggregated: Sequence[AggregatedItem]) -> AggregateFinish:
        return AggregateFinish()


class ReasonPlausibilityTask(OnReasonsTask):
    """WinoWhy 2.1, 3.3: score = share plausible; >= 4/5 positive, <= 1/5 negative."""

    name = Task.REASON_PLAUSIBILITY
    spec = TaskSpec(
        name,
        "Reason plausibility",
        ("reasons",),
        5,
        yes_no("plausible", "Plausible", "implausible", "Not plausible"),
        instructions="""You see a question, its correct answer and one reason someone gave. Is the reason plausible: does it correctly explain why the pronoun refers to that answer?

Worked examples
- Question "The city councilmen refused the demonstrators a permit because they feared violence." Answer: the city councilmen. Reason "The ones that fear violence are likely the councilmen" -> plausible.
- Same question, reason "of the city's history of racial discrimination." -> not plausible (it explains nothing about who feared violence).""",
    )
    template = "annotation/tasks/reason_plausibility.html"
    plausible_answer = "plausible"
    answers_are_knowledge_types = False

    def gold_answer(self, obj: DataItem) -> str:
        label = getattr(obj, "label", None)
        if label not in ("positive", "negative"):
            return ""
        return "plausible" if label == "positive" else "implausible"

    def adjudication_decisions(self) -> tuple[str, ...]:
        return ("positive", "acceptable", "negative")

    def aggregate_item(
        self, *, campaign: Campaign, item: CampaignItem, votes: Sequence[Judgment], decision: str | None
    ) -> ItemAggregate:
        reason = item.reason
        assert reason is not None
        result = rules.plausibility([j.answer for j in votes])
        label = decision or result.label
        return ItemAggregate(
            record={"score": result.score, "label": label},
            updates=[(reason, {"plausibility": result.score, "label": label})],
            needs_review=result.label == "acceptable" and not decision,
            label=label,
        )

    def aggregate_finish(self, aggregated: Sequence[AggregatedItem]) -> AggregateFinish:
        return AggregateFinish()


class KnowledgeTypeTask(OnReasonsTask):
    """WinoWhy 2.2: a reason's type is the majority; a question's major type is the type
    with most votes over its valid reasons (ties give several)."""

    name = Task.KNOWLEDGE_TYPE
    spec = TaskSpec(
        name,
        "Knowledge type",
        ("reasons",),
        5,
        tuple(Choice(t, t, str(i + 1)) for i, t in enumerate(KNOWLEDGE_TYPES)),
        instructions="""You see a valid reason for a question. Which kind of commonsense knowledge does it use?
Property (of an object: big, heavy, kind), Object (what an object is or is used for), Eventuality (events, their order, causes and effects), Spatial (where things are), Quantity (numbers, amounts), Others.

Worked examples
- "An object that is too large cannot fit into a container." -> Property.
- "You thank someone after they helped you." -> Eventuality.
- "Something placed above another thing is higher." -> Spatial.""",
    )
    template = "annotation/tasks/knowledge_type.html"
    plausible_answer = None
    answers_are_knowledge_types = True

    def gold_answer(self, obj: DataItem) -> str:
        return getattr(obj, "knowledge_type", "") or ""

    def adjudication_decisions(self) -> tuple[str, ...]:
        return self.spec.choice_values

    def aggregate_item(
        self, *, campaign: Campaign, item: CampaignItem, votes: Sequence[Judgment], decision: str | None
    ) -> ItemAggregate:
        reason = item.reason
        assert reason is not None
        kind, tie = rules.majority([j.answer for j in votes])
        if decision:
            kind, tie = decision, False
        return ItemAggregate(
            record={"label": kind, "tie": tie},
            updates=[(reason, {"knowledge_type": kind})],
            needs_review=tie,
            label=kind,
        )

    def aggregate_finish(self, aggregated: Sequence[AggregatedItem]) -> AggregateFinish:
        type_votes: dict[int, list[list[str]]] = defaultdict(list)
        schemas: dict[int, Schema] = {}
        for done in aggregated:
            reason = done.item.reason
            assert reason is not None
            type_votes[reason.schema_id].append([j.answer for j in done.votes])
            schemas[reason.schema_id] = reason.schema
        return AggregateFinish(
            updates=[
                (schemas[schema_id], {"knowledge_types": rules.major_types(per_reason)})
                for schema_id, per_reason in type_votes.items()
            ],
            extra={"questions": len(type_votes)},
        )
