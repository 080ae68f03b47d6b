"""Adversarial writing (issue 27, docs/adversarial.md): a writer writes a Winograd twin pair
(WinoGrande's form) or a ComVE pair while the round's models score every try.

A writing slot is an ordinary campaign item (K = 1, like ComVE writing) on the ordinary
annotate page; the item form posts to "check with the models" (``evaluation.adversarial``,
which holds everything that needs a model: the tries, the verdicts, keep and retract). The
judgment is recorded when the writer keeps the item (answer ``kept``, the kept try's
content as payload) or retracts it (``retracted``). The aggregation makes each kept item
into rows of the round's collection, with their provenance (two schemas, each the other's
twin, or one ComVE item) and links the item to them; a retracted item makes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

from annotation.adversarial_content import (
    COMVE_OPTION_FIELDS,
    comve_clean,
    winograd_clean,
    winograd_questions,
)
from annotation.answers import ADVERSARIAL_KEPT, TaskSpec
from annotation.models import (
    AdversarialItem,
    AdversarialRound,
    AdversarialStatus,
    AdversarialTry,
    Assignment,
    Campaign,
    CampaignItem,
    Judgment,
    Task,
    TryStatus,
    ValidationStatus,
    Verdict,
)
from annotation.task_types.base import (
    AggregatedItem,
    AggregateFinish,
    ContextLine,
    DataItem,
    ItemAggregate,
    TaskType,
)
from datasets.services import NewComVEItem, NewTwinPair, SourceJudgment, TwinQuestion, WrittenRow

#: How many earlier validated fooling items the inspiration panel shows.
INSPIRATION_ITEMS = 3
CHECK_ACTION = "adversarial:check"


def adversarial_round_of(campaign_id: int) -> AdversarialRound | None:
    """The round whose writing (or validation) campaign ``campaign_id`` is."""
    return (
        AdversarialRound.objects.filter(pipeline__stages__campaign_id=campaign_id)
        .select_related("pipeline")
        .first()
    )


def latest_assignment_id(item: CampaignItem) -> int | None:
    """The slot's latest lease (a slot skipped by one writer goes to another)."""
    return (
        Assignment.objects.filter(campaign_item_id=item.pk)
        .order_by("-leased_at", "-pk")
        .values_list("pk", flat=True)
        .first()
    )


def adversarial_item_of_slot(item: CampaignItem) -> AdversarialItem | None:
    """The adversarial item of the slot's latest lease (a slot skipped by one writer goes to
    another, who starts afresh)."""
    latest = latest_assignment_id(item)
    return AdversarialItem.objects.filter(assignment_id=latest).first() if latest is not None else None


def try_lost(attempt: AdversarialTry, *, now: Any = None) -> bool:
    """A try waiting for the models longer than WINNOW_ADVERSARIAL_TIMEOUT: its worker is
    lost (or none is running); the writer may check it again."""
    if attempt.status != TryStatus.QUEUED:
        return False
    since = attempt.queued_at or attempt.created_at
    now = now or timezone.now()
    return bool(since and now - since > timedelta(seconds=float(settings.WINNOW_ADVERSARIAL_TIMEOUT)))


#: How soon the waiting panel asks again, by the try's age: often while a warm worker
#: answers in a fraction of a second, then less as the wait grows (a model loading, a
#: busy worker). (age below, seconds; delay, milliseconds)
POLL_DELAYS = ((3.0, 150), (15.0, 500))
POLL_DELAY_LAST = 1500


def poll_delay(attempt: AdversarialTry, *, now: Any = None) -> int:
    """Milliseconds before the verdict panel of a waiting try asks again."""
    since = attempt.queued_at or attempt.created_at
    age = ((now or timezone.now()) - since).total_seconds() if since else 0.0
    return next((delay for below, delay in POLL_DELAYS if age < below), POLL_DELAY_LAST)


def embedded_broker() -> bool:
    """The embedded setup: a filesystem broker and one worker on this machine."""
    return str(settings.CELERY_BROKER_URL).startswith("filesystem://")


#: How the panel names an item's questions and its answers, per writing task.
PANEL_WORDS: dict[str, dict[str, Any]] = {
    Task.ADVERSARIAL_WINOGRAD: {
        "questions": ("Sentence", "Twin"),
        "heading": "Twin",
        "answer": lambda value: str(value),
        "margin": "log-likelihood",
    },
    Task.ADVERSARIAL_COMVE: {
        "questions": ("Pair",),
        "heading": "Pair",
        "answer": lambda value: f"statement {int(value) + 1}",
        "margin": "log perplexity",
    },
}


def _twin_lines(task: str, model: dict[str, Any]) -> list[dict[str, Any]]:
    words = PANEL_WORDS[task]
    return [
        {
            **twin,
            "label": label,
            "choice_label": words["answer"](twin["choice"]),
            "right_label": words["answer"](twin["right"]),
        }
        for label, twin in zip(words["questions"], model.get("twins") or [], strict=False)
    ]


def try_panel(attempt: AdversarialTry | None, *, task: str) -> dict[str, Any]:
    """What the writer's verdict panel shows of a try: its state (none, waiting, scored,
    lost, failed), each model's choice and margin per twin, and the verdict."""
    words = PANEL_WORDS[task]
    panel: dict[str, Any] = {
        "state": "none",
        "embedded": embedded_broker(),
        "heading": words["heading"],
        "margin_unit": words["margin"],
    }
    if attempt is None:
        return panel
    panel.update(
        {
            "try_id": attempt.pk,
            "number": attempt.number,
            "verdict": attempt.verdict,
            "verdict_label": Verdict(attempt.verdict).label if attempt.verdict else "",
            "error": attempt.error,
        }
    )
    if attempt.status == TryStatus.SCORED:
        panel["state"] = "scored"
        panel["models"] = [
            {
                "name": name,
                "sha256": (m.get("sha256") or "")[:12],
                "verdict": m.get("verdict", ""),
                "verdict_label": Verdict(m["verdict"]).label if m.get("verdict") else "",
                "method": m.get("method", ""),
                "twins": _twin_lines(task, m),
            }
            for name, m in (attempt.verdicts or {}).items()
        ]
    elif attempt.status == TryStatus.FAILED:
        panel["state"] = "failed"
    elif try_lost(attempt):
        panel["state"] = "lost"
    else:
        panel["state"] = "waiting"
        panel["delay"] = poll_delay(attempt)
    return panel


def inspiration(campaign_id: int, *, limit: int = INSPIRATION_ITEMS) -> list[dict[str, Any]]:
    """Earlier validated items of the round's collection that fooled a model (Dynabench's
    Inspiration mode), newest first: their content and the models they fooled."""
    found = adversarial_round_of(campaign_id)
    if found is None:
        return []
    items = (
        AdversarialItem.objects.filter(
            round__pipeline__collection=found.pipeline.collection,
            round__pipeline__kind=found.pipeline.kind,
            status=AdversarialStatus.KEPT,
            validation=ValidationStatus.VALIDATED,
            verdict__in=[Verdict.BOTH, Verdict.ONE],
        )
        .select_related("round")
        .order_by("-validated_at", "-pk")[:limit]
    )
    return [{"content": i.content, "fooled": i.fooled, "round": i.round.number} for i in items]


class _AdversarialWriting(TaskType):
    """What both writing tasks share: slots, K = 1, the models' verdict panel, the
    inspiration panel, keep or retract, and rows made from kept items only."""

    item_relations = ()
    plausible_answer = None
    answers_are_knowledge_types = False

    def content_lines(self, content: dict[str, Any]) -> list[ContextLine]:
        raise NotImplementedError

    def rows(self, judgment: Judgment, collection: str, content: dict[str, Any]) -> list[WrittenRow]:
        raise NotImplementedError

    def link_field(self, made: list[int]) -> dict[str, Any]:
        raise NotImplementedError

    def present(self, item: CampaignItem) -> dict[str, Any]:
        assignment_id = latest_assignment_id(item)
        written = (
            AdversarialItem.objects.filter(assignment_id=assignment_id).first() if assignment_id else None
        )
        attempts = list(written.try_set.order_by("number")) if written is not None else []
        latest = attempts[-1] if attempts else None
        values: dict[str, Any] = dict(latest.content) if latest is not None else {}
        if written is not None and written.status == AdversarialStatus.KEPT:
            values = dict(written.content)
        status = written.status if written is not None else AdversarialStatus.WRITING
        panel = try_panel(latest, task=self.name)
        panel.update(
            {
                "campaign": item.campaign.name,
                "assignment_id": assignment_id,
                "scored_any": any(t.status == TryStatus.SCORED for t in attempts),
                "writing": status == AdversarialStatus.WRITING,
            }
        )
        return {
            "values": {k: str(v) for k, v in values.items()},
            "status": status,
            "tries": [{"number": t.number, "status": t.status, "verdict": t.verdict} for t in attempts],
            "panel": panel,
            "inspiration": inspiration(item.campaign_id),
        }

    def gold_answer(self, obj: DataItem) -> str:
        return ""  # a written item has no known answer

    def selectable(self, items: models.QuerySet[Any]) -> models.QuerySet[Any]:
        return items

    def adjudication_decisions(self) -> tuple[str, ...]:
        return ()  # the validation stage judges the kept items

    def context(self, item: CampaignItem) -> list[ContextLine]:
        written = adversarial_item_of_slot(item)
        if written is None:
            return [ContextLine("Slot", "nothing written yet")]
        lines = [
            ContextLine("Status", f"{written.get_status_display()} after {written.tries} tries"),
            ContextLine("Verdict", written.get_verdict_display() or "none yet"),
        ]
        if written.content:
            lines += self.content_lines(written.content)
        return lines

    def vote_label(self, key: str) -> str:
        return "Kept item" if key == ADVERSARIAL_KEPT else "Retracted"

    def aggregate_item(
        self, *, campaign: Campaign, item: CampaignItem, votes: Sequence[Judgment], decision: str | None
    ) -> ItemAggregate:
        written: list[WrittenRow] = []
        record: dict[str, Any] = {}
        label = "retracted"
        found = adversarial_round_of(campaign.pk)
        collection = str((campaign.selection or {}).get("collection") or "") or (
            found.pipeline.collection if found is not None else ""
        )
        for judgment in votes:
            adversarial = AdversarialItem.objects.filter(
                assignment__campaign_item_id=item.pk, writer_id=judgment.annotator_id
            ).first()
            if adversarial is None:
                continue
            record.update(
                {
                    "adversarial_item": adversarial.pk,
                    "status": adversarial.status,
                    "verdict": adversarial.verdict,
                }
            )
            # only an item kept through its tries becomes rows, with the content it was kept with
            if judgment.answer == ADVERSARIAL_KEPT and adversarial.status == AdversarialStatus.KEPT:
                label = "kept"
                written += self.rows(judgment, collection, adversarial.content)
        return ItemAggregate(record=record, label=label, written=written)

    def aggregate_finish(self, aggregated: Sequence[AggregatedItem]) -> AggregateFinish:
        return AggregateFinish()

    def rows_written(self, *, campaign: Campaign, made: dict[int, list[int]]) -> None:
        if not made:
            return
        judgments = Judgment.objects.filter(pk__in=list(made), campaign_item__campaign=campaign)
        for judgment in judgments.select_related("campaign_item"):
            AdversarialItem.objects.filter(
                assignment__campaign_item_id=judgment.campaign_item_id, writer_id=judgment.annotator_id
            ).update(**self.link_field(made[judgment.pk]))


class AdversarialWinogradTask(_AdversarialWriting):
    """A Winograd twin pair in WinoGrande's form, models in the loop."""

    name = Task.ADVERSARIAL_WINOGRAD
    spec = TaskSpec(
        name,
        "Adversarial twin writing",
        ("slots",),
        1,
        content_clean=winograd_clean,
        form_action=CHECK_ACTION,
        submit_label="Check with the models",
        instructions="""Write a Winograd twin pair that fools the language models in the loop while any person answers it at once. Mark the pronoun in square brackets, as [it], or leave a blank as _ (WinoGrande). Both candidates must appear in each sentence. The twin changes a trigger word or phrase so that the pronoun refers to the other candidate. Check with the models, revise until they are fooled, then keep the item (or retract it). Avoid questions that word associations answer alone, rare facts and offensive content.

Worked example
- Sentence: "The trophy doesn't fit into the brown suitcase because [it] is too large." Candidates: A "the trophy", B "the suitcase". Answer: A.
- Twin: "The trophy doesn't fit into the brown suitcase because [it] is too small." Answer: B.""",
    )
    template = "annotation/tasks/adversarial_winograd.html"

    def payload_text(self, payload: Any) -> str:
        if not isinstance(payload, dict) or not payload.get("sentence"):
            return ""
        return (
            f"{payload.get('sentence')} ({payload.get('answer')}) / {payload.get('twin')} "
            f"({payload.get('twin_answer')}); A {payload.get('candidate_a')}, B {payload.get('candidate_b')}"
        )

    def content_lines(self, content: dict[str, Any]) -> list[ContextLine]:
        lines = []
        for label, (marked, answer) in zip(("Sentence", "Twin"), winograd_questions(content), strict=True):
            lines.append(ContextLine.with_mark(label, marked.before, marked.pronoun, marked.after))
            lines.append(ContextLine(f"{label}: answer", content["candidate_" + "ab"[answer]], right=True))
        return lines

    def rows(self, judgment: Judgment, collection: str, content: dict[str, Any]) -> list[WrittenRow]:
        source = SourceJudgment(id=judgment.pk, answer=judgment.answer, payload=dict(content))
        questions = [
            TwinQuestion(marked.before, marked.pronoun, marked.after, "AB"[answer])
            for marked, answer in winograd_questions(content)
        ]
        return [
            NewTwinPair(
                judgment=source,
                collection=collection,
                candidate_a=content["candidate_a"],
                candidate_b=content["candidate_b"],
                questions=(questions[0], questions[1]),
            )
        ]

    def link_field(self, made: list[int]) -> dict[str, Any]:
        return {"schema_id": made[0], "twin_id": made[1]}


class AdversarialComVETask(_AdversarialWriting):
    """A ComVE pair (two statements, one against common sense; subtask B's reasons
    optional), models in the loop."""

    name = Task.ADVERSARIAL_COMVE
    spec = TaskSpec(
        name,
        "Adversarial ComVE pair writing",
        ("slots",),
        1,
        content_clean=comve_clean,
        form_action=CHECK_ACTION,
        submit_label="Check with the models",
        instructions="""Write two statements that differ in a few words, one that makes sense and one against common sense, so that the language models in the loop pick the wrong one while any person answers at once. Optionally add three reasons why the false one is wrong, exactly one of them right (subtask B). Check with the models, revise until they are fooled, then keep the item (or retract it).

Worked example
- "He put a turkey into the fridge." / "He put an elephant into the fridge." (against sense: the second)""",
    )
    template = "annotation/tasks/adversarial_comve.html"

    def payload_text(self, payload: Any) -> str:
        if not isinstance(payload, dict) or not payload.get("statement_0"):
            return ""
        text = (
            f"{payload.get('statement_0')} / {payload.get('statement_1')} "
            f"(against sense: {int(payload.get('false_index', 0)) + 1})"
        )
        if all(payload.get(name) for name in COMVE_OPTION_FIELDS):
            text += (
                f"; reasons A {payload['option_a']} B {payload['option_b']} C {payload['option_c']}, "
                f"right {payload['correct_option']}"
            )
        return text

    def content_lines(self, content: dict[str, Any]) -> list[ContextLine]:
        lines = [
            ContextLine(
                f"Statement {n + 1}",
                str(content.get(f"statement_{n}", "")),
                right=content.get("false_index") == n,
            )
            for n in (0, 1)
        ]
        if all(content.get(name) for name in COMVE_OPTION_FIELDS):
            lines += [
                ContextLine(
                    f"Reason {x}", content[f"option_{x.lower()}"], right=content["correct_option"] == x
                )
                for x in "ABC"
            ]
        return lines

    def rows(self, judgment: Judgment, collection: str, content: dict[str, Any]) -> list[WrittenRow]:
        # the content the item was kept with (the judgment's payload, unless changed since)
        source = SourceJudgment(id=judgment.pk, answer=judgment.answer, payload=dict(content))
        return [NewComVEItem(judgment=source, collection=collection)]

    def link_field(self, made: list[int]) -> dict[str, Any]:
        return {"comve_item_id": made[0]}
