"""ComVE's pipeline (SemEval-2020 Task 4 proposal, section 3): writing, check by testees,
rewrite, recheck, human accuracy."""

from __future__ import annotations

from typing import Any

from django.db import models

from annotation.models import CampaignItem, Task
from annotation.pipelines.registry.base import Context, NoBuild, Selection, StageKind, percent
from annotation.task_types import TASKS
from datasets.models import ComVEItem
from datasets.services import campaign_source_file


class ComVEWritingStage(NoBuild, StageKind):
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
        "lines": [f"human accuracy: {percent(accuracy)} of {total} answers right"],
        "rewrite_ids": sorted(rewrite),
        "accuracy": accuracy,
        "accuracy_kept": kept_right / kept_total if kept_total else None,
        "answers": total,
    }


class ComVECheckStage(NoBuild, StageKind):
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


class ComVERewriteStage(NoBuild, StageKind):
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


class ComVERecheckStage(NoBuild, StageKind):
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


class HumanAccuracyStage(NoBuild, StageKind):
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
                f"{key}: {percent(o.get('accuracy'))} of {o.get('answers', 0)} answers right; "
                f"{percent(o.get('accuracy_kept'))} on the items kept (the paper's human performance)"
            )
        return {
            "counts": [],
            "lines": lines,
            "accuracy": {k: ctx.outcome(k).get("accuracy") for k in ("check", "recheck")},
        }
