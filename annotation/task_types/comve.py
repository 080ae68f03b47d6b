"""The ComVE tasks (Wang et al. 2020, 3.1): people write items, check them (answering as a
testee would), rewrite the ones most testees got wrong; and judge the explanations a
language model wrote for subtask C (issue 13)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import models

from annotation import aggregation_rules as rules
from annotation.answers import COMVE_WRITING_FIELDS, Choice, TaskSpec, yes_no
from annotation.models import Campaign, CampaignItem, Judgment, Task
from annotation.task_types.base import (
    AggregatedItem,
    AggregateFinish,
    ContextLine,
    DataItem,
    ItemAggregate,
    TaskType,
    source_judgment,
)
from datasets.models import ComVEItem
from datasets.services import NewComVEItem, RewrittenComVEItem, comve_item_values


def comve_has_options(comve: ComVEItem | None) -> bool:
    """The ComVE item has its three reasons and the right one (subtask B's key)."""
    return bool(comve and comve.option_a and comve.option_b and comve.option_c and comve.correct_option)


def comve_payload_text(payload: Any) -> str:
    """A written ComVE item (a writing's or a rewrite's answer) as one line for the curator."""
    if not isinstance(payload, dict) or not payload:
        return ""
    return (
        f"{payload.get('statement_0', '')} / {payload.get('statement_1', '')} "
        f"(against sense: {int(payload.get('false_index', 0)) + 1}; reasons "
        f"A {payload.get('option_a', '')} B {payload.get('option_b', '')} C {payload.get('option_c', '')}, "
        f"right {payload.get('correct_option', '')}; references {' | '.join(payload.get('references', []))})"
    )


def comve_check_context(comve: ComVEItem) -> list[ContextLine]:
    """A ComVE item as a checker's curator reads it: both statements and the reasons, the
    right ones flagged."""
    lines = [
        ContextLine(f"Statement {n + 1}", text, right=comve.false_index == n)
        for n, text in enumerate((comve.statement_0, comve.statement_1))
    ]
    if comve.false_index is not None:
        lines.append(ContextLine("Answer", f"statement {comve.false_index + 1} is against common sense"))
    if comve_has_options(comve):
        lines += [
            ContextLine(f"Reason {letter}", text, right=comve.correct_option == letter)
            for letter, text in (("A", comve.option_a), ("B", comve.option_b), ("C", comve.option_c))
        ]
    return lines


class ComVEWritingTask(TaskType):
    """ComVE 3.1: each written item becomes a ComVE item for curator review."""

    name = Task.COMVE_WRITING
    spec = TaskSpec(
        name,
        "ComVE writing",
        ("comve", "slots"),
        1,
        writes_comve=True,
        instructions="""Write one ComVE item. Guidelines: two statements that differ in a few words, one makes sense and one is against common sense; three explanations of why the nonsensical one is wrong, exactly one of them correct; and three reference explanations written in your own words. Avoid negation tricks, rare facts and offensive content. The prompt is only for inspiration.

Worked example
- Statements: "He put a turkey into the fridge." / "He put an elephant into the fridge." (against sense: the second)
- Options: A "An elephant is much bigger than a fridge." (right) B "Elephants are usually gray." C "An elephant cannot eat a turkey."
- References: "An elephant is too big to fit in a fridge." / "A fridge is far smaller than an elephant." / "Elephants cannot fit in household appliances.\"""",
    )
    template = "annotation/tasks/comve_writing.html"
    item_relations = ("comve_item",)
    plausible_answer = None
    answers_are_knowledge_types = False

    def present(self, item: CampaignItem) -> dict[str, Any]:
        comve = item.comve_item
        if comve is None:  # an empty writing slot
            return {}
        return {
            "prompt": comve.false_statement
            or (comve.statement_1 if comve.false_index == 1 else comve.statement_0)
        }

    def gold_answer(self, obj: DataItem) -> str:
        return ""

    def selectable(self, items: models.QuerySet[Any]) -> models.QuerySet[Any]:
        return items

    def payload_text(self, payload: Any) -> str:
        return comve_payload_text(payload)

    def adjudication_decisions(self) -> tuple[str, ...]:
        return ("accept", "reject")

    def context(self, item: CampaignItem) -> list[ContextLine]:
        prompt = self.present(item).get("prompt")
        if not prompt:
            return [ContextLine("Prompt", "none: an empty writing slot")]
        return [ContextLine("Prompt (statement against sense)", prompt)]

    def vote_label(self, key: str) -> str:
        return "Written item"

    def aggregate_item(
        self, *, campaign: Campaign, item: CampaignItem, votes: Sequence[Judgment], decision: str | None
    ) -> ItemAggregate:
        collection = str((campaign.selection or {}).get("collection", "") or "")
        return ItemAggregate(
            record={"written": len(votes)},
            needs_review=not decision,
            # each written item becomes a ComVE item (dataset comve, split pilot) for curator
            # review, in the campaign's collection if it names one (a pipeline's does)
            written=[NewComVEItem(judgment=source_judgment(j), collection=collection) for j in votes],
        )

    def aggregate_finish(self, aggregated: Sequence[AggregatedItem]) -> AggregateFinish:
        return AggregateFinish()


def comve_check_vote_label(key: str) -> str:
    """A check's answer key in words: "1:C" -> "Statement 2, reason C"; "0" -> "Statement 1"."""
    statement, _, option = key.partition(":")
    words = ComVECheckTask.spec.label_of(statement)
    return f"{words}, reason {option}" if option else words


class ComVECheckTask(TaskType):
    """ComVE 3.1: rewrite an item when more than half of the checkers answer wrong; the
    share of right answers is the human accuracy."""

    name = Task.COMVE_CHECK
    spec = TaskSpec(
        name,
        "ComVE check",
        ("comve",),
        3,
        (Choice("0", "Statement 1", "1"), Choice("1", "Statement 2", "2")),
        option_choices=(
            Choice("A", "Reason A", "a"),
            Choice("B", "Reason B", "b"),
            Choice("C", "Reason C", "c"),
        ),
        instructions="""You see two statements and three reasons. Choose the statement that is against common sense, then the reason that best explains why.

Worked example
- 1 "He put a turkey into the fridge." 2 "He put an elephant into the fridge." -> statement 2; reason "An elephant is much bigger than a fridge.\"""",
    )
    template = "annotation/tasks/comve_check.html"
    item_relations = ("comve_item",)
    plausible_answer = None
    answers_are_knowledge_types = False

    @staticmethod
    def key(comve: ComVEItem) -> str:
        """The right answer: the statement against sense, and the right reason if any."""
        if comve_has_options(comve):
            return f"{comve.false_index}:{comve.correct_option}"
        return str(comve.false_index)

    def present(self, item: CampaignItem) -> dict[str, Any]:
        comve = item.comve_item
        if comve is None:
            return {}
        view: dict[str, Any] = {"statements": [comve.statement_0, comve.statement_1]}
        if comve_has_options(comve):
            view["options"] = [("A", comve.option_a), ("B", comve.option_b), ("C", comve.option_c)]
        return view

    def gold_answer(self, obj: DataItem) -> str:
        if not isinstance(obj, ComVEItem) or obj.false_index is None:
            return ""
        return self.key(obj)

    def selectable(self, items: models.QuerySet[Any]) -> models.QuerySet[Any]:
        # only items with a key and both statements can be checked
        return items.filter(false_index__isnull=False).exclude(statement_0="")

    def payload_text(self, payload: Any) -> str:
        return ""

    def adjudication_decisions(self) -> tuple[str, ...]:
        return ("rewrite", "keep")

    def context(self, item: CampaignItem) -> list[ContextLine]:
        return comve_check_context(item.comve_item) if item.comve_item is not None else []

    def vote_label(self, key: str) -> str:
        """ "1:C" -> "Statement 2, reason C"; "0" -> "Statement 1"."""
        return comve_check_vote_label(key)

    def aggregate_item(
        self, *, campaign: Campaign, item: CampaignItem, votes: Sequence[Judgment], decision: str | None
    ) -> ItemAggregate:
        comve = item.comve_item
        assert comve is not None
        given = [self.spec.answer_key(j.answer, j.payload) for j in votes]
        check = rules.comve_check(given, self.key(comve))
        rewrite = check.needs_rewrite if not decision else decision == "rewrite"
        return ItemAggregate(
            record={
                "wrong": check.wrong,
                "needs_rewrite": rewrite,
                "accuracy": 1 - check.wrong / check.total,
            },
            updates=[(comve, {"needs_rewrite": rewrite})],
            needs_review=rewrite,
            label="rewrite" if rewrite else "keep",
        )

    def aggregate_finish(self, aggregated: Sequence[AggregatedItem]) -> AggregateFinish:
        total = sum(len(done.votes) for done in aggregated)
        right = total - sum(int(done.result.record["wrong"]) for done in aggregated)
        return AggregateFinish(extra={"human_accuracy": right / total if total else None})


#: A ComVE item's content that a rewrite replaces (and keeps, as it was, in its record).
COMVE_CONTENT = (
    "statement_0",
    "statement_1",
    "false_index",
    "false_statement",
    "option_a",
    "option_b",
    "option_c",
    "correct_option",
    "references",
)


def comve_content(comve: ComVEItem) -> dict[str, Any]:
    return {name: getattr(comve, name) for name in COMVE_CONTENT}


def comve_check_answers(comve: ComVEItem, *, before: int | None = None) -> list[str]:
    """The testees' answers of the last ComVE check of ``comve`` (in words), from a check
    campaign created before campaign ``before`` if given."""
    checks = CampaignItem.objects.filter(comve_item=comve, campaign__task=Task.COMVE_CHECK, is_gold=False)
    if before is not None:
        checks = checks.filter(campaign_id__lt=before)
    last = checks.order_by("-campaign_id").first()
    if last is None:
        return []
    spec = ComVECheckTask.spec
    return [
        comve_check_vote_label(spec.answer_key(j.answer, j.payload))
        for j in Judgment.objects.filter(campaign_item=last).order_by("pk")
    ]


def _written_content(content: dict[str, Any]) -> tuple[Any, ...]:
    """A ComVE item's written content, comparable between a rewrite's payload and the item."""
    return (
        *(str(content.get(name) or "").strip() for name in (*COMVE_WRITING_FIELDS, "correct_option")),
        int(content["false_index"]) if content.get("false_index") is not None else None,
        tuple(str(r).strip() for r in content.get("references") or ()),
    )


class ComVERewriteTask(TaskType):
    """ComVE 3.1 ("If more than half testees do one instance wrong ... we will rewrite or
    abolish the instance"): the writer sees the item and the testees' answers and submits a
    corrected item; the aggregation writes it over the item's content, keeping the old
    content in the campaign item's record and the new one in the judgment."""

    name = Task.COMVE_REWRITE
    spec = TaskSpec(
        name,
        "ComVE rewrite",
        ("comve",),
        1,
        writes_comve=True,
        instructions="""More than half of the testees answered this ComVE item wrong. You see the item as it is and every testee's answer. Rewrite it so that every literate person gives the right answer: keep what works, fix what misled them (an ambiguous statement, a second defensible reason, a wrong key). The same rules as writing apply.

Worked example
- Item: "He drank milk." / "He drank a stone." (against sense: 2), testees answered statement 1 twice because "milk" read as spoiled. Rewrite statement 1 as "He drank a glass of fresh milk.\"""",
    )
    template = "annotation/tasks/comve_rewrite.html"
    item_relations = ("comve_item",)
    plausible_answer = None
    answers_are_knowledge_types = False

    def present(self, item: CampaignItem) -> dict[str, Any]:
        comve = item.comve_item
        if comve is None:
            return {}
        content = comve_content(comve)
        # the item as it was before this campaign wrote over it
        content.update(item.aggregate.get("previous") or {})
        refs = list(content.get("references") or [])
        return {
            "item": content,
            "values": {
                **{name: content.get(name) or "" for name in COMVE_CONTENT if name != "references"},
                "false_index": str(content.get("false_index", "")),
                **{f"reference_{n + 1}": (refs[n] if n < len(refs) else "") for n in range(3)},
            },
            "answers": comve_check_answers(comve, before=item.campaign_id),
        }

    def gold_answer(self, obj: DataItem) -> str:
        return ""

    def selectable(self, items: models.QuerySet[Any]) -> models.QuerySet[Any]:
        return items.filter(false_index__isnull=False)

    def payload_text(self, payload: Any) -> str:
        return comve_payload_text(payload)

    def adjudication_decisions(self) -> tuple[str, ...]:
        return ("accept", "reject")

    def context(self, item: CampaignItem) -> list[ContextLine]:
        comve = item.comve_item
        if comve is None:
            return []
        lines = comve_check_context(comve)
        answers = comve_check_answers(comve, before=item.campaign_id)
        return [*lines, ContextLine("Testees answered", "; ".join(answers) or "no check found")]

    def vote_label(self, key: str) -> str:
        return "Rewritten item"

    def aggregate_item(
        self, *, campaign: Campaign, item: CampaignItem, votes: Sequence[Judgment], decision: str | None
    ) -> ItemAggregate:
        comve = item.comve_item
        assert comve is not None
        previous = item.aggregate.get("previous") or comve_content(comve)
        record: dict[str, Any] = {"previous": previous}
        if decision == "reject" or not votes:
            return ItemAggregate(record={**record, "rewritten_by": None}, label="kept")
        chosen = votes[-1]
        if _written_content(chosen.payload) == _written_content(previous):
            # submitted as it was: the item is kept, its provenance unchanged
            return ItemAggregate(record={**record, "rewritten_by": None}, label="kept")
        return ItemAggregate(
            record={**record, "rewritten_by": chosen.pk},
            updates=[(comve, {**comve_item_values(chosen.payload), "needs_rewrite": False})],
            # the item's provenance becomes the rewrite's (the judgment, in the campaign's batch)
            written=[RewrittenComVEItem(judgment=source_judgment(chosen), item_id=comve.pk)],
            label="rewritten",
        )

    def aggregate_finish(self, aggregated: Sequence[AggregatedItem]) -> AggregateFinish:
        return AggregateFinish()


def explanation_statement(comve: ComVEItem) -> str:
    """The statement a subtask-C explanation explains: C's own FalseSent where its file has
    one, else subtask B's."""
    return comve.false_statement_c or comve.false_statement


class ExplanationPlausibilityTask(TaskType):
    """A model's explanation of a ComVE statement against common sense (subtask C), judged
    plausible or not (issue 13). Plausible when more than half of the K votes say so
    (``aggregation_rules.explanation_plausible``); the run's human score is the share of its
    explanations judged plausible (``evaluation.metrics.human``)."""

    name = Task.EXPLANATION_PLAUSIBILITY
    spec = TaskSpec(
        name,
        "Explanation plausibility",
        ("explanations",),
        3,
        yes_no("plausible", "Plausible", "implausible", "Not plausible"),
        instructions="""You see a statement that is against common sense and an explanation a language model wrote of why it is. Is the explanation plausible: does it correctly say why the statement is against common sense? Judge what it says, not its grammar or style.

Worked examples
- Statement "He put an elephant into the fridge." Explanation "an elephant is much bigger than a fridge." -> plausible.
- Same statement, explanation "elephants are usually gray." -> not plausible (true, but it does not explain anything).
- Same statement, explanation "he put an elephant into the fridge." -> not plausible (it repeats the statement).""",
    )
    template = "annotation/tasks/explanation_plausibility.html"
    item_relations = ("explanation__comve_item",)
    plausible_answer = None
    answers_are_knowledge_types = False

    def present(self, item: CampaignItem) -> dict[str, Any]:
        explanation = item.explanation
        if explanation is None:
            return {}
        return {"statement": explanation_statement(explanation.comve_item), "explanation": explanation.text}

    def gold_answer(self, obj: DataItem) -> str:
        return ""  # a model's explanation has no known answer

    def selectable(self, items: models.QuerySet[Any]) -> models.QuerySet[Any]:
        return items.exclude(text="")

    def payload_text(self, payload: Any) -> str:
        return ""

    def adjudication_decisions(self) -> tuple[str, ...]:
        return self.spec.choice_values

    def context(self, item: CampaignItem) -> list[ContextLine]:
        explanation = item.explanation
        if explanation is None:
            return []
        return [
            ContextLine("Statement against common sense", explanation_statement(explanation.comve_item)),
            ContextLine(
                f"Explanation by {explanation.model_name} (run #{explanation.run_id})", explanation.text
            ),
            *[
                ContextLine(f"Reference {n}", ref)
                for n, ref in enumerate(explanation.comve_item.references, 1)
            ],
        ]

    def vote_label(self, key: str) -> str:
        return self.spec.label_of(key)

    def aggregate_item(
        self, *, campaign: Campaign, item: CampaignItem, votes: Sequence[Judgment], decision: str | None
    ) -> ItemAggregate:
        answers = [j.answer for j in votes]
        plausible = rules.explanation_plausible(answers)
        label = decision or ("plausible" if plausible else "implausible")
        return ItemAggregate(
            record={"plausible_votes": answers.count("plausible"), "label": label},
            label=label,
        )

    def aggregate_finish(self, aggregated: Sequence[AggregatedItem]) -> AggregateFinish:
        judged = len(aggregated)
        plausible = sum(1 for done in aggregated if done.result.label == "plausible")
        return AggregateFinish(extra={"judged": judged, "plausible": plausible})
