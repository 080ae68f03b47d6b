"""What every annotation task defines, and the pieces the tasks share (CONVENTIONS "Variants").

A task is one class in the module of its family (``winograd``, ``winowhy``, ``comve``)
holding everything that differs per task:

- its :attr:`~TaskType.spec` (``annotation.answers.TaskSpec``, pure): what an item is, the
  answers and their keys, K, the instructions. What follows from the answers alone is read
  from there: the order agreement figures show the answers in (``spec.choice_values``),
  whether answers are free text (``spec.free_text``), the key compared with a gold answer
  (``spec.answer_key``);
- its :attr:`~TaskType.template`: what an annotator sees of an item and the question asked,
  ``templates/annotation/tasks/<task>.html``, included by the annotate page;
- its hooks: what the task does with the database's items.

Every hook is abstract (or annotated) on :class:`TaskType` and a test checks that every
task defines every one, so adding a task means the enum value, one class and one template,
and no ``if task == ...`` anywhere else.

Hooks: ``item_relations`` and ``present`` (what an annotator sees), ``gold_answer``,
``selectable`` (which items a campaign may take), ``payload_text`` (a written answer as
the curator reads it), ``adjudication_decisions``, ``context`` and ``vote_label`` (what the
curator's adjudication page shows of an item and its votes), ``aggregate_item`` and
``aggregate_finish`` (the paper's rule: per item, then over the campaign), and the
agreement page's ``plausible_answer`` and ``answers_are_knowledge_types``. One hook is
optional (the base class does nothing): ``rows_written``, called once an aggregation has
written the rows of the tasks' written answers, with the ids made from each judgment.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from django.db import models

from annotation.answers import TaskSpec
from annotation.models import AdversarialItem, Campaign, CampaignItem, Judgment
from datasets.models import ComVEItem, Explanation, Reason, Schema
from datasets.services import SourceJudgment, WrittenRow

#: A data-set row a campaign works on (the gold answer is read from one).
DataItem = Schema | Reason | ComVEItem | Explanation | AdversarialItem
#: Values to write on one row: (the row, {field: new value}).
Update = tuple[models.Model, dict[str, Any]]


@dataclass
class ItemAggregate:
    """What the task's rule makes of one item with its K votes (and a curator's decision)."""

    #: The task's part of the item's aggregate record (after its votes and their number).
    record: dict[str, Any]
    #: Labels written onto data-set rows (the schema, the reason, the ComVE item).
    updates: list[Update] = field(default_factory=list)
    needs_review: bool = False
    #: Counted in the summary's labels; None for tasks that write rows instead of labels.
    label: str | None = None
    #: Rows made from written answers (reasons, ComVE items, a rewrite's new content),
    #: written with their provenance by ``datasets.services.CampaignRows``.
    written: list[WrittenRow] = field(default_factory=list)


@dataclass(frozen=True)
class AggregatedItem:
    """An item that had its K votes, with what its rule made of them."""

    item: CampaignItem
    votes: Sequence[Judgment]
    result: ItemAggregate


@dataclass
class AggregateFinish:
    """What the task does once every item is aggregated."""

    updates: list[Update] = field(default_factory=list)
    #: Figures added to the summary (e.g. the human accuracy of a ComVE check).
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ContextLine:
    """One line of what a curator reads about an item: a label and its text; a sentence
    with a marked pronoun reads ``before``, ``marked``, then ``text``. ``right`` flags the
    line that is the known answer (the right candidate, statement or reason)."""

    label: str
    text: str
    before: str = ""
    marked: str = ""
    right: bool = False

    @classmethod
    def with_mark(cls, label: str, before: str, marked: str, after: str) -> ContextLine:
        """A sentence with ``marked`` (its pronoun) between ``before`` and ``after``."""
        return cls(label=label, before=before, marked=marked, text=after)


def schema_context(schema: Schema) -> list[ContextLine]:
    """A Winograd question as the curator reads it: the sentence with its pronoun marked,
    both candidates (the right one flagged) and the answer."""
    right = schema.correct_candidate
    return [
        ContextLine.with_mark("Sentence", schema.text_before, schema.pronoun, schema.text_after),
        ContextLine("Candidate A", schema.candidate_a, right=schema.candidate_a == right),
        ContextLine("Candidate B", schema.candidate_b, right=schema.candidate_b == right),
        ContextLine("Answer", f"“{schema.pronoun}” refers to {right}"),
    ]


def source_judgment(judgment: Judgment) -> SourceJudgment:
    """A judgment as the batch of the rows made from it records it."""
    return SourceJudgment(
        id=judgment.pk, answer=judgment.answer, text=judgment.text, payload=judgment.payload
    )


class TaskType(ABC):
    """One annotation task. Subclasses set every class attribute below and implement every
    abstract method; ``annotation.task_types.TASK_TYPES`` holds one of each."""

    #: A value of ``annotation.models.Task``.
    name: ClassVar[str]
    #: The answers, K and the instructions (pure; ``annotation.answers``).
    spec: ClassVar[TaskSpec]
    #: What the annotator sees of an item and the question asked: a template under
    #: ``annotation/tasks/``, included by the annotate page with the item as ``v``.
    template: ClassVar[str]
    #: What :meth:`present` reads of a campaign item, joined in one query.
    item_relations: ClassVar[tuple[str, ...]]
    #: The answer whose share of an item's votes is a reason's plausibility score (the
    #: agreement chart by reason origin, WinoWhy figure 5); None: that chart does not apply.
    plausible_answer: ClassVar[str | None]
    #: The answers are knowledge types: the agreement chart counts reasons per majority
    #: type instead of the knowledge types of the items' questions.
    answers_are_knowledge_types: ClassVar[bool]

    @abstractmethod
    def present(self, item: CampaignItem) -> dict[str, Any]:
        """What the annotator sees of ``item`` (DESIGN section 5). Never the key, never
        other answers, never whether the item is gold."""

    @abstractmethod
    def gold_answer(self, obj: DataItem) -> str:
        """The known answer of a data-set row used as a gold item; "" when it has none."""

    @abstractmethod
    def selectable(self, items: models.QuerySet[Any]) -> models.QuerySet[Any]:
        """The chosen items narrowed to those a campaign of this task can work on."""

    @abstractmethod
    def payload_text(self, payload: Any) -> str:
        """A structured answer as one line for the curator; "" when there is none."""

    @abstractmethod
    def adjudication_decisions(self) -> tuple[str, ...]:
        """What a curator may decide on an item."""

    def decision_label(self, decision: str) -> str:
        """A decision in words: the answer's label where the decision is an answer."""
        label = self.spec.label_of(decision)
        return label if label != decision else decision.replace("_", " ").capitalize()

    @abstractmethod
    def context(self, item: CampaignItem) -> list[ContextLine]:
        """Everything a curator needs to judge ``item`` (with :attr:`item_relations`
        loaded): its text in full, the question and answer it depends on, the key."""

    @abstractmethod
    def vote_label(self, key: str) -> str:
        """An answer key (``spec.answer_key`` of a judgment) in words, as a vote is counted
        on the adjudication page; "written" for a written answer."""

    @abstractmethod
    def aggregate_item(
        self, *, campaign: Campaign, item: CampaignItem, votes: Sequence[Judgment], decision: str | None
    ) -> ItemAggregate:
        """The paper's rule on one item with its K ``votes``; a curator's ``decision``
        (one of :meth:`adjudication_decisions`), if any, overrides the votes."""

    def rows_written(self, *, campaign: Campaign, made: dict[int, list[int]]) -> None:
        """After an aggregation wrote the rows of :attr:`ItemAggregate.written`: ``made``
        maps each source judgment's id to the ids of the rows made from it. Most tasks need
        nothing of it; adversarial writing links its items to their rows."""
        return None

    def answer_check(self, *, item_id: int, answer: str, text: str, payload: dict[str, Any]) -> None:
        """What an answer (cleaned by the spec) must agree with in the item itself, e.g. a
        validator's corrected answer differs from the writer's; raises AnswerError naming
        the field. Most tasks check everything in their spec: nothing to read here."""
        return None

    def judgments_needed(self, *, item_id: int) -> int | None:
        """The item's own K after an answer or a change (inside its transaction, the item
        locked), when the task's rule asks for more answers than the campaign's K (ANLI's
        third validator on disagreement); None leaves it as it is."""
        return None

    @abstractmethod
    def aggregate_finish(self, aggregated: Sequence[AggregatedItem]) -> AggregateFinish:
        """The step over the whole campaign once each item has its result. It reads the
        votes, never the curators' decisions: a decision applied at once to one item
        (``adjudication_record``) leaves what this step writes as it was."""
