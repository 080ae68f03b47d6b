"""Each annotation task's behaviour, on the task's own definition (CONVENTIONS "Variants").

A task is defined in two halves, one class or entry each:

- :data:`annotation.tasks_registry.TASKS` (pure, no Django): what an item is, the answers
  and their keys, K, the instructions. What follows from the answers alone is read from
  there: the order agreement figures show the answers in (``spec.choice_values``), whether
  answers are free text (``spec.free_text``), the key compared with a gold answer
  (``spec.answer_key``).
- a :class:`TaskType` here: what the task does with the database's items. Every hook is
  abstract on the base class and a test checks that every task defines every one, so
  adding a task means a spec and a class, and no ``if task == ...`` anywhere else.

Hooks: ``item_relations`` and ``present`` (what an annotator sees), ``gold_answer``,
``selectable`` (which items a campaign may take), ``payload_text`` (a written answer as
the curator reads it), ``adjudication_decisions``, ``context`` and ``vote_label`` (what the
curator's adjudication page shows of an item and its votes), ``aggregate_item`` and
``aggregate_finish`` (the paper's rule: per item, then over the campaign), and the
agreement page's ``plausible_answer`` and ``answers_are_knowledge_types``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from django.db import models

from annotation import aggregation_rules as rules
from annotation.models import Campaign, CampaignItem, Judgment, Task
from annotation.switching import bracketed_sentence, switch_candidates
from annotation.tasks_registry import COMVE_WRITING_FIELDS, TASKS, TaskSpec, clause_with_pronoun, task_spec
from datasets.models import ComVEDataset, ComVEItem, ComVESplit, Explanation, Reason, ReasonOrigin, Schema

#: A data-set row a campaign works on (the gold answer is read from one).
DataItem = Schema | Reason | ComVEItem | Explanation
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
    #: Rows created from written answers (reasons, ComVE items).
    created: int = 0


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


def comve_has_options(comve: ComVEItem | None) -> bool:
    """The ComVE item has its three reasons and the right one (subtask B's key)."""
    return bool(comve and comve.option_a and comve.option_b and comve.option_c and comve.correct_option)


class TaskType(ABC):
    """One annotation task's behaviour. Subclasses set every class attribute below and
    implement every abstract method; :data:`TASK_TYPES` holds one of each."""

    #: A value of ``annotation.models.Task``.
    name: ClassVar[str]
    #: What :meth:`present` reads of a campaign item, joined in one query.
    item_relations: ClassVar[tuple[str, ...]]
    #: The answer whose share of an item's votes is a reason's plausibility score (the
    #: agreement chart by reason origin, WinoWhy figure 5); None: that chart does not apply.
    plausible_answer: ClassVar[str | None]
    #: The answers are knowledge types: the agreement chart counts reasons per majority
    #: type instead of the knowledge types of the items' questions.
    answers_are_knowledge_types: ClassVar[bool]

    @property
    def spec(self) -> TaskSpec:
        return TASKS[self.name]

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

    @abstractmethod
    def aggregate_finish(self, aggregated: Sequence[AggregatedItem]) -> AggregateFinish:
        """The step over the whole campaign once each item has its result. It reads the
        votes, never the curators' decisions: a decision applied at once to one item
        (``adjudication_record``) leaves what this step writes as it was."""


# --------------------------------------------------------------------------- shared parts


class _SchemaLabel(TaskType):
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


class _OnReasons(TaskType):
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


# --------------------------------------------------------------------------- the tasks


class SwitchabilityTask(_SchemaLabel):
    name = Task.SWITCHABILITY
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


class AssociativityTask(_SchemaLabel):
    name = Task.ASSOCIATIVITY
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


class ReasonWritingTask(TaskType):
    """WinoWhy 2.1: every written reason is kept, to be validated by a plausibility campaign."""

    name = Task.REASON_WRITING
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
        return ItemAggregate(
            record={"reasons": len(votes)}, created=_reasons_from_writing(campaign, schema, votes)
        )

    def aggregate_finish(self, aggregated: Sequence[AggregatedItem]) -> AggregateFinish:
        return AggregateFinish()


def _reasons_from_writing(campaign: Campaign, schema: Schema, judgments: Sequence[Judgment]) -> int:
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


class ReasonPlausibilityTask(_OnReasons):
    """WinoWhy 2.1, 3.3: score = share plausible; >= 4/5 positive, <= 1/5 negative."""

    name = Task.REASON_PLAUSIBILITY
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


class KnowledgeTypeTask(_OnReasons):
    """WinoWhy 2.2: a reason's type is the majority; a question's major type is the type
    with most votes over its valid reasons (ties give several)."""

    name = Task.KNOWLEDGE_TYPE
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


class ComVEWritingTask(TaskType):
    """ComVE 3.1: each written item becomes a ComVE item for curator review."""

    name = Task.COMVE_WRITING
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
        if not isinstance(payload, dict) or not payload:
            return ""
        return (
            f"{payload.get('statement_0', '')} / {payload.get('statement_1', '')} "
            f"(against sense: {int(payload.get('false_index', 0)) + 1}; reasons "
            f"A {payload.get('option_a', '')} B {payload.get('option_b', '')} C {payload.get('option_c', '')}, "
            f"right {payload.get('correct_option', '')}; references {' | '.join(payload.get('references', []))})"
        )

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
        return ItemAggregate(
            record={"written": len(votes)},
            needs_review=not decision,
            created=_comve_from_writing(campaign, votes),
        )

    def aggregate_finish(self, aggregated: Sequence[AggregatedItem]) -> AggregateFinish:
        return AggregateFinish()


def _comve_from_writing(campaign: Campaign, judgments: Sequence[Judgment]) -> int:
    """Each written item becomes a ComVEItem (dataset comve, split pilot) for curator review,
    in the campaign's collection if it names one (a pipeline's campaign does), else in none."""
    created = 0
    collection = str((campaign.selection or {}).get("collection", "") or "")
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
            collection=collection,
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


class ComVECheckTask(TaskType):
    """ComVE 3.1: rewrite an item when more than half of the checkers answer wrong; the
    share of right answers is the human accuracy."""

    name = Task.COMVE_CHECK
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
        comve = item.comve_item
        if comve is None:
            return []
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

    def vote_label(self, key: str) -> str:
        """ "1:C" -> "Statement 2, reason C"; "0" -> "Statement 1"."""
        statement, _, option = key.partition(":")
        words = self.spec.label_of(statement)
        return f"{words}, reason {option}" if option else words

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
    kind = TASK_TYPES[Task.COMVE_CHECK]
    return [
        kind.vote_label(kind.spec.answer_key(j.answer, j.payload))
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
        return TASK_TYPES[Task.COMVE_WRITING].payload_text(payload)

    def adjudication_decisions(self) -> tuple[str, ...]:
        return ("accept", "reject")

    def context(self, item: CampaignItem) -> list[ContextLine]:
        comve = item.comve_item
        if comve is None:
            return []
        lines = TASK_TYPES[Task.COMVE_CHECK].context(item)
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
        p = chosen.payload
        false_index = int(p["false_index"])
        if _written_content(p) == _written_content(previous):
            # submitted as it was: the item is kept, its provenance unchanged
            return ItemAggregate(record={**record, "rewritten_by": None}, label="kept")
        values: dict[str, Any] = {
            "statement_0": p["statement_0"],
            "statement_1": p["statement_1"],
            "false_index": false_index,
            "false_statement": p["statement_1"] if false_index else p["statement_0"],
            "option_a": p["option_a"],
            "option_b": p["option_b"],
            "option_c": p["option_c"],
            "correct_option": p["correct_option"],
            "references": list(p["references"]),
            "needs_rewrite": False,
            "source_file": f"campaign:{campaign.name}",
            "source_row": chosen.pk,
            "file_checksum": "",
        }
        return ItemAggregate(
            record={**record, "rewritten_by": chosen.pk},
            updates=[(comve, values)],
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


TASK_TYPES: dict[str, TaskType] = {
    t.name: t
    for t in (
        SwitchabilityTask(),
        AssociativityTask(),
        ReasonWritingTask(),
        ReasonPlausibilityTask(),
        KnowledgeTypeTask(),
        ComVEWritingTask(),
        ComVECheckTask(),
        ComVERewriteTask(),
        ExplanationPlausibilityTask(),
    )
}


def task_type(name: str) -> TaskType:
    """The definition of the task ``name``; AnswerError (naming the tasks) when unknown."""
    task_spec(name)
    return TASK_TYPES[name]
