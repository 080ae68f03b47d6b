"""Validation of items written with models in the loop (issue 27, ANLI's validation): a
validator reads the written item (both Winograd twins with their candidates and the
writer's answers, or the ComVE pair and the statement the writer says is against common
sense) and answers correct; incorrect, with the corrected answer; or flagged, with a
reason. The round's rule decides (``AdversarialRound.rule``): K matching "correct"
answers (default 3), or ANLI's two answers and a third on disagreement."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from django.db import models
from django.utils import timezone

from annotation import aggregation_rules as rules
from annotation.adversarial_content import mark_split
from annotation.answers import AnswerError, Choice, TaskSpec, validation_details
from annotation.models import (
    AdversarialItem,
    AdversarialStatus,
    Campaign,
    CampaignItem,
    Judgment,
    PipelineKind,
    Task,
    ValidationRule,
    ValidationStatus,
)
from annotation.task_types.base import (
    AggregatedItem,
    AggregateFinish,
    ContextLine,
    DataItem,
    ItemAggregate,
    TaskType,
)

LETTERS = ("A", "B")


def marked(sentence: str) -> tuple[str, str, str]:
    """(before, the mark, after) of a written sentence, cut as the writer's checks cut it
    (``annotation.adversarial_content.mark_split``); the whole sentence when unmarked."""
    try:
        cut = mark_split(sentence)
    except ValueError:
        return sentence, "", ""
    return cut.before, cut.pronoun, cut.after


def is_comve(item: AdversarialItem) -> bool:
    """The item is a ComVE pair (its round's pipeline kind), else Winograd twins."""
    return bool(item.round.pipeline.kind == PipelineKind.ADVERSARIAL_COMVE)


def _candidate(content: dict[str, Any], letter: str) -> str:
    return str(content.get(f"candidate_{letter.lower()}", ""))


def _statements(content: dict[str, Any]) -> list[str]:
    return [str(content.get("statement_0", "")), str(content.get("statement_1", ""))]


def _false_index(content: dict[str, Any]) -> int | None:
    raw = content.get("false_index")
    return int(raw) if raw in (0, 1, "0", "1") else None


class AdversarialValidationTask(TaskType):
    """ANLI's validation of the items that fooled the models (and a share of the others)."""

    name = Task.ADVERSARIAL_VALIDATION
    spec = TaskSpec(
        name,
        "Adversarial validation",
        ("adversarial",),
        3,
        (
            Choice(rules.CORRECT, "Correct", "c"),
            Choice(rules.INCORRECT, "Incorrect", "i"),
            Choice(rules.FLAGGED, "Flag", "f"),
        ),
        details=validation_details,
        instructions="""Another person wrote this item to fool a language model. Read it as a reader of the benchmark would: is the writer's answer the one every careful reader gives?

- Correct: the answer is right and unambiguous (for twins: on both sentences).
- Incorrect: the answer is wrong; give the right one (for twins: the right candidate in each sentence).
- Flag: the item cannot be answered as it stands (ambiguous, both or neither candidate fit, offensive, a fact few people know); say why.

Worked example
- "The trophy doesn't fit into the suitcase because [it] is too large." / "... because [it] is too small.", candidates A the trophy, B the suitcase, the writer's answers A then B -> correct.""",
    )
    template = "annotation/tasks/adversarial_validation.html"
    item_relations = ("adversarial__round__pipeline",)
    plausible_answer = None
    answers_are_knowledge_types = False

    def present(self, item: CampaignItem) -> dict[str, Any]:
        adversarial = item.adversarial
        if adversarial is None:
            return {}
        content = adversarial.content or {}
        if is_comve(adversarial):
            false_index = _false_index(content)
            return {
                "comve": True,
                "statements": _statements(content),
                "false_number": None if false_index is None else false_index + 1,
            }
        twins = []
        for label, field, answer in (("Sentence", "sentence", "answer"), ("Twin", "twin", "twin_answer")):
            before, mark, after = marked(str(content.get(field, "")))
            letter = str(content.get(answer, ""))
            twins.append(
                {
                    "label": label,
                    "before": before,
                    "mark": mark,
                    "after": after,
                    "answer": letter,
                    "answer_text": _candidate(content, letter) if letter in LETTERS else "",
                    "field": f"corrected_{answer}",
                }
            )
        return {
            "comve": False,
            "candidates": [(letter, _candidate(content, letter)) for letter in LETTERS],
            "twins": twins,
        }

    def gold_answer(self, obj: DataItem) -> str:
        return ""  # a written item has no known validation

    def selectable(self, items: models.QuerySet[Any]) -> models.QuerySet[Any]:
        # only kept items: a retracted item (or one being written) never reaches validation
        return items.filter(status=AdversarialStatus.KEPT)

    def payload_text(self, payload: Any) -> str:
        if not isinstance(payload, dict) or not payload:
            return ""
        if "corrected_false_index" in payload:
            return f"corrected: statement {int(payload['corrected_false_index']) + 1} is against common sense"
        return (
            f"corrected: sentence {payload.get('corrected_answer', '')}, "
            f"twin {payload.get('corrected_twin_answer', '')}"
        )

    def adjudication_decisions(self) -> tuple[str, ...]:
        return self.spec.choice_values

    def context(self, item: CampaignItem) -> list[ContextLine]:
        adversarial = item.adversarial
        if adversarial is None:
            return []
        content = adversarial.content or {}
        fooled = ", ".join(str(m) for m in adversarial.fooled or []) or "no model"
        if is_comve(adversarial):
            false_index = _false_index(content)
            lines = [
                ContextLine(f"Statement {n + 1}", text, right=false_index == n)
                for n, text in enumerate(_statements(content))
            ]
            if false_index is not None:
                lines.append(
                    ContextLine("Writer's answer", f"statement {false_index + 1} is against common sense")
                )
            return [*lines, ContextLine("Fooled", fooled)]
        lines = []
        answers = []
        for label, field, answer in (("Sentence", "sentence", "answer"), ("Twin", "twin", "twin_answer")):
            lines.append(ContextLine.with_mark(label, *marked(str(content.get(field, "")))))
            letter = str(content.get(answer, ""))
            answers.append(f"{label.lower()}: {letter} ({_candidate(content, letter)})")
        lines += [ContextLine(f"Candidate {letter}", _candidate(content, letter)) for letter in LETTERS]
        return [*lines, ContextLine("Writer's answers", "; ".join(answers)), ContextLine("Fooled", fooled)]

    def vote_label(self, key: str) -> str:
        return self.spec.label_of(key)

    def answer_check(self, *, item_id: int, answer: str, text: str, payload: dict[str, Any]) -> None:
        """A corrected answer fits the item (twins or a ComVE pair) and differs from the
        writer's."""
        if answer != rules.INCORRECT:
            return
        adversarial = (
            AdversarialItem.objects.select_related("round__pipeline")
            .filter(pk=CampaignItem.objects.filter(pk=item_id).values("adversarial_id")[:1])
            .first()
        )
        if adversarial is None:
            raise AnswerError("answer: this item has no written item to correct")
        content = adversarial.content or {}
        if is_comve(adversarial):
            if "corrected_false_index" not in payload:
                raise AnswerError(
                    "corrected_false_index: say which statement is against common sense (a ComVE pair)"
                )
            if payload["corrected_false_index"] == _false_index(content):
                raise AnswerError(
                    "corrected_false_index: that is the writer's answer; choose Correct if you agree with it"
                )
            return
        if "corrected_answer" not in payload:
            raise AnswerError(
                "corrected_answer: say which candidate is right in the sentence and in its twin"
            )
        written = (str(content.get("answer", "")), str(content.get("twin_answer", "")))
        if (payload["corrected_answer"], payload["corrected_twin_answer"]) == written:
            raise AnswerError(
                "corrected_answer: those are the writer's answers; choose Correct if you agree with them"
            )

    def judgments_needed(self, *, item_id: int) -> int | None:
        """ANLI's rule: when the second answer disagrees with the first, a third one."""
        rule = (
            CampaignItem.objects.filter(pk=item_id).values_list("adversarial__round__rule", flat=True).first()
        )
        if rule != ValidationRule.ANLI:
            return None
        answers = list(
            Judgment.objects.filter(campaign_item_id=item_id)
            .order_by("pk")
            .values_list("answer", flat=True)[:2]
        )
        return 3 if rules.anli_needs_third(answers) else None

    def aggregate_item(
        self, *, campaign: Campaign, item: CampaignItem, votes: Sequence[Judgment], decision: str | None
    ) -> ItemAggregate:
        adversarial = item.adversarial
        assert adversarial is not None
        answers = [j.answer for j in votes]
        k = campaign.judgments_per_item if item.judgments_needed is None else item.judgments_needed
        if decision:
            outcome = {rules.CORRECT: rules.VALIDATED, rules.INCORRECT: rules.REJECTED}.get(
                decision, rules.FLAGGED
            )
        elif adversarial.round.rule == ValidationRule.ANLI:
            outcome = rules.validation_anli(answers)
        else:
            outcome = rules.validation_unanimous(answers, k)
        counts = Counter(answers)
        tally = {key: counts[key] for key in self.spec.choice_values}
        same = adversarial.validation == outcome and adversarial.validated_at is not None
        return ItemAggregate(
            record={
                "validation": outcome,
                "rule": adversarial.round.rule,
                "corrections": [j.payload for j in votes if j.answer == rules.INCORRECT],
                "reasons": [j.text for j in votes if j.answer == rules.FLAGGED],
            },
            updates=[
                (
                    adversarial,
                    {
                        "validation": outcome,
                        "votes": tally,
                        "validated_at": adversarial.validated_at if same else timezone.now(),
                    },
                )
            ],
            needs_review=outcome == ValidationStatus.FLAGGED,
            label=outcome,
        )

    def aggregate_finish(self, aggregated: Sequence[AggregatedItem]) -> AggregateFinish:
        outcomes = Counter(done.result.label for done in aggregated)
        return AggregateFinish(
            extra={status: outcomes[status] for status in (rules.VALIDATED, rules.REJECTED, rules.FLAGGED)}
        )
