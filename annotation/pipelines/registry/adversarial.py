"""Adversarial writing's pipelines (issue 27, docs/adversarial.md): one pipeline is one
round on one collection. Writers write with the round's models in the loop (Winograd
twins or ComVE pairs); the kept items that fooled a model, and a seeded share of the
others, go to validation (never to their writer); the last stage counts the round."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from annotation.models import (
    AdversarialItem,
    AdversarialRound,
    AdversarialStatus,
    Task,
    ValidationStatus,
)
from annotation.pipelines.registry.base import Context, NoBuild, Selection, StageKind


def round_of(ctx: Context) -> AdversarialRound:
    return AdversarialRound.objects.select_related("pipeline").get(pipeline=ctx.pipeline)


def _fooling(fooled: Any) -> bool:
    """The item fooled at least one of the round's models (``AdversarialItem.fooled``)."""
    return bool(fooled)


class AdversarialWriteStage(NoBuild, StageKind):
    """Writing with the models in the loop (the writer's page: advwrite's task classes)."""

    key = "write"
    title = "Writing with models in the loop"
    default_k = 1
    min_k = 1
    waits = False

    def select(self, ctx: Context) -> Selection:
        n = int(ctx.pipeline.slots)
        return Selection(items="slots", slots=n, counts=[("writing slots", n)])

    def summarise(self, ctx: Context) -> dict[str, Any]:
        rows = list(
            AdversarialItem.objects.filter(round=round_of(ctx))
            .order_by("pk")
            .values_list("pk", "status", "fooled")
        )
        kept = [pk for pk, status, _ in rows if status == AdversarialStatus.KEPT]
        fooling = [pk for pk, status, fooled in rows if status == AdversarialStatus.KEPT and _fooling(fooled)]
        retracted = sum(1 for _, status, _ in rows if status == AdversarialStatus.RETRACTED)
        counts = [
            ("written", len(rows)),
            ("kept", len(kept)),
            ("retracted", retracted),
            ("fooling (kept, fooled a model)", len(fooling)),
        ]
        unfinished = len(rows) - len(kept) - retracted
        if unfinished:
            counts.append(("left unfinished", unfinished))
        return {"counts": counts, "kept_ids": kept, "fooling_ids": fooling}


class AdversarialWinogradWriteStage(AdversarialWriteStage):
    task = Task.ADVERSARIAL_WINOGRAD
    rule = (
        "Writers write Winograd twins; each try is scored at once by the round's models, with "
        "the scorers manage.py evaluate uses; the writer revises, keeps or retracts (ANLI, Dynabench)."
    )


class AdversarialComVEWriteStage(AdversarialWriteStage):
    task = Task.ADVERSARIAL_COMVE
    rule = (
        "Writers write ComVE pairs; each try is scored at once by the round's models (the papers' "
        "perplexity rule); the writer revises, keeps or retracts (ANLI, Dynabench)."
    )


class AdversarialValidateStage(StageKind):
    key = "validate"
    title = "Validation"
    task = Task.ADVERSARIAL_VALIDATION
    default_k = 3
    min_k = 1
    rule = (
        "Validators, never the writer, answer correct, incorrect (with the right answer) or flag "
        "(with a reason) on every kept item that fooled a model and a seeded share of the others: "
        "K matching answers, or ANLI's two and a third on disagreement."
    )
    waits = False

    def _plan(self, ctx: Context) -> tuple[list[int], list[int], int]:
        """(the kept items that fooled a model, the seeded share of the other kept items,
        how many other kept items there are). Retracted items never go."""
        this = round_of(ctx)
        kept = list(
            AdversarialItem.objects.filter(round=this, status=AdversarialStatus.KEPT)
            .order_by("pk")
            .values_list("pk", "fooled")
        )
        fooling = [pk for pk, fooled in kept if _fooling(fooled)]
        others = [pk for pk, fooled in kept if not _fooling(fooled)]
        share = min(max(float(this.share_unfooled), 0.0), 1.0)
        # the same draw every time (the preview and the advance agree): seeded by the round
        rng = random.Random(f"{ctx.pipeline.collection}:round-{this.number}")  # noqa: S311 - a sample, not a secret
        sample = sorted(rng.sample(others, round(share * len(others))))
        return fooling, sample, len(others)

    def select(self, ctx: Context) -> Selection:
        fooling, sample, others = self._plan(ctx)
        share = round_of(ctx).share_unfooled
        return Selection(
            items="adversarial",
            ids=sorted(fooling + sample),
            counts=[
                ("fooling items", len(fooling)),
                (f"items that fooled no model ({share:.0%} of {others})", len(sample)),
            ],
        )

    def build(self, ctx: Context, selection: Selection) -> Selection:
        """The items sent wait for their validators; the other kept items are not sent."""
        AdversarialItem.objects.filter(pk__in=selection.ids).update(validation=ValidationStatus.PENDING)
        return selection

    def summarise(self, ctx: Context) -> dict[str, Any]:
        outcomes = Counter(
            str(aggregate.get("validation", ""))
            for aggregate in ctx.items(self.key).exclude(aggregate={}).values_list("aggregate", flat=True)
        )
        validated = outcomes[ValidationStatus.VALIDATED]
        return {
            "counts": [
                ("validated", validated),
                ("rejected", outcomes[ValidationStatus.REJECTED]),
                ("flagged", outcomes[ValidationStatus.FLAGGED]),
            ]
        }


class AdversarialSummaryStage(NoBuild, StageKind):
    key = "summary"
    title = "The round's counts"
    task = None
    default_k = None
    min_k = None
    rule = "Written, kept, retracted, fooling; of those validated: validated, rejected, flagged."
    waits = False

    def select(self, ctx: Context) -> Selection:
        ids = list(
            AdversarialItem.objects.filter(round=round_of(ctx)).order_by("pk").values_list("pk", flat=True)
        )
        return Selection(items="adversarial", ids=ids, counts=[("items written", len(ids))])

    def summarise(self, ctx: Context) -> dict[str, Any]:
        rows = list(
            AdversarialItem.objects.filter(round=round_of(ctx)).values_list("status", "fooled", "validation")
        )
        status = Counter(s for s, _, _ in rows)
        validation = Counter(v for _, _, v in rows)
        fooling = sum(1 for s, fooled, _ in rows if s == AdversarialStatus.KEPT and _fooling(fooled))
        counts = {
            "written": len(rows),
            "kept": status[AdversarialStatus.KEPT],
            "retracted": status[AdversarialStatus.RETRACTED],
            "fooling": fooling,
            "validated": validation[ValidationStatus.VALIDATED],
            "rejected": validation[ValidationStatus.REJECTED],
            "flagged": validation[ValidationStatus.FLAGGED],
        }
        lines = []
        if rows:
            lines.append(f"model error rate: {fooling / len(rows):.1%} of the items written fooled a model")
        return {"counts": list(counts.items()), "lines": lines, "round": counts}
