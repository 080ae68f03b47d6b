"""The Winograd labels of Trichelair et al. (2019): is a schema switchable, is it associative.
Each is a yes/no label on a schema, yes only if every annotator says so."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from django.db import models

from annotation import aggregation_rules as rules
from annotation.answers import TaskSpec, clause_with_pronoun, yes_no
from annotation.models import Campaign, CampaignItem, Judgment, Task
from annotation.switching import bracketed_sentence, switch_candidates
from annotation.task_types.base import (
    AggregatedItem,
    AggregateFinish,
    ContextLine,
    DataItem,
    ItemAggregate,
    TaskType,
    schema_context,
)
from datasets.models import Schema


class SchemaLabelTask(TaskType):
    """Trichelair et al.: a yes/no label on a schema, yes only if every annotator says so."""

    #: The schema's field the label goes to, and the answer that means yes.
    label_field: ClassVar[str]
    yes: ClassVar[str]

    item_relations = ("schema",)
    plausible_answer = None
    answers_are_knowledge_types = False

    def gold_answer(self, obj: DataItem) -> str:
        value = getattr(obj, self.label_field, None)
        if value is None:
            return ""
        return self.yes if value else f"not_{self.yes}"

    def selectable(self, items: models.QuerySet[Any]) -> models.QuerySet[Any]:
        return items

    def payload_text(self, payload: Any) -> str:
        return ""

    def adjudication_decisions(self) -> tuple[str, ...]:
        return self.spec.choice_values

    def vote_label(self, key: str) -> str:
        return self.spec.label_of(key)

    def label_values(self, schema: Schema, label: bool) -> dict[str, Any]:
        """The values written on the schema for ``label``."""
        return {self.label_field: label}

    def aggregate_item(
        self, *, campaign: Campaign, item: CampaignItem, votes: Sequence[Judgment], decision: str | None
    ) -> ItemAggregate:
        schema = item.schema
        assert schema is not None
        answers = [j.answer for j in votes]
        label = rules.unanimous_yes(answers, self.yes)
        if decision:
            label = decision == self.yes
        return ItemAggregate(
            record={"label": label},
            updates=[(schema, self.label_values(schema, label))],
            needs_review=len(set(answers)) > 1,
            label=self.yes if label else f"not {self.yes}",
        )

    def aggregate_finish(self, aggregated: Sequence[AggregatedItem]) -> AggregateFinish:
        return AggregateFinish()


class SwitchabilityTask(SchemaLabelTask):
    name = Task.SWITCHABILITY
    spec = TaskSpec(
        name,
        "Switchability",
        ("schemas",),
        3,
        yes_no("switchable", "Switchable", "not_switchable", "Not switchable"),
        instructions="""You see a Winograd sentence and the same sentence with its two candidates exchanged.
Answer "switchable" when the switched sentence still reads naturally AND the pronoun now refers to the other candidate for the same reason; answer "not switchable" when the switch makes the sentence odd or changes the reasoning.

Worked examples
- "Paul tried to call George on the phone, but he wasn't successful." -> "George tried to call Paul on the phone, but he wasn't successful." Still natural, "he" is still the caller: switchable.
- "The city councilmen refused the demonstrators a permit because they feared violence." -> "The demonstrators refused the city councilmen a permit ..." Demonstrators do not grant permits: not switchable.""",
    )
    template = "annotation/tasks/switchability.html"
    label_field = "switchable"
    yes = "switchable"

    def present(self, item: CampaignItem) -> dict[str, Any]:
        schema = item.schema
        if schema is None:
            return {}
        # Both with the pronoun in [brackets], as imported switched texts are written.
        original = bracketed_sentence(schema.text_before, schema.pronoun, schema.text_after)
        return {
            "sentence": original,
            "switched": schema.switched_text
            or switch_candidates(original, schema.candidate_a, schema.candidate_b),
        }

    def context(self, item: CampaignItem) -> list[ContextLine]:
        if item.schema is None:
            return []
        view = self.present(item)
        return [*schema_context(item.schema), ContextLine("Switched", view["switched"])]

    def label_values(self, schema: Schema, label: bool) -> dict[str, Any]:
        values: dict[str, Any] = {"switchable": label}
        if not schema.switched_text:
            values["switched_text"] = switch_candidates(
                bracketed_sentence(schema.text_before, schema.pronoun, schema.text_after),
                schema.candidate_a,
                schema.candidate_b,
            )
        return values


class AssociativityTask(SchemaLabelTask):
    name = Task.ASSOCIATIVITY
    spec = TaskSpec(
        name,
        "Associativity",
        ("schemas",),
        3,
        yes_no("associative", "Associative", "not_associative", "Not associative"),
        instructions="""You see only the clause that contains the pronoun and the two candidates.
Answer "associative" when one candidate obviously goes with the clause by itself, without the rest of the sentence (a word association is enough to answer).

Worked examples
- Clause "it was too big", candidates "the trophy" / "the suitcase": either could be big: not associative.
- Clause "they were very good at their job", candidates "the firemen" / "the burglars": not decided by association alone: not associative.
- Clause "he had been drinking", candidates "the drunk" / "the bartender": the drunk goes with drinking by association: associative.""",
    )
    template = "annotation/tasks/associativity.html"
    label_field = "associative"
    yes = "associative"

    def present(self, item: CampaignItem) -> dict[str, Any]:
        schema = item.schema
        if schema is None:
            return {}
        return {
            "clause": clause_with_pronoun(schema.text_before, schema.pronoun, schema.text_after),
            "candidates": [schema.candidate_a, schema.candidate_b],
        }

    def context(self, item: CampaignItem) -> list[ContextLine]:
        if item.schema is None:
            return []
        clause = ContextLine("Clause the annotators saw", self.present(item)["clause"])
        return [*schema_context(item.schema), clause]
