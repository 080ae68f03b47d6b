"""Pipelines: create one (its first stage's campaign with it), preview what advancing the
current stage gives, advance (aggregate, close, create the next stage's campaign)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import Sum
from django.utils import timezone
from django.utils.text import slugify

from annotation import services
from annotation.errors import PipelineError
from annotation.models import (
    AdversarialItem,
    Campaign,
    CampaignItem,
    CampaignStatus,
    Pipeline,
    PipelineKind,
    PipelineStage,
    PipelineStatus,
    StageStatus,
)
from annotation.pipelines.registry import PIPELINES, Context, PipelineDefinition, StageKind
from core.roles import Actor, signed_in
from datasets.models import ComVEItem, Schema

MAX_SLOTS = 1000


def definition(kind: str) -> PipelineDefinition:
    try:
        return PIPELINES[kind]
    except KeyError:
        raise PipelineError(f"kind: {kind!r} is not one of {', '.join(PIPELINES)}") from None


def campaign_name(pipeline: Pipeline, stage: StageKind) -> str:
    return f"{pipeline.name}-{stage.key}"


def _clean_k(defn: PipelineDefinition, k: dict[str, Any] | None) -> dict[str, int]:
    out: dict[str, int] = {}
    given = dict(k or {})
    unknown = sorted(set(given) - {s.key for s in defn.stages if s.task})
    if unknown:
        raise PipelineError(f"k: {', '.join(unknown)} is not a stage with a campaign in {defn.title}")
    for stage in defn.stages:
        if stage.task is None:
            continue
        raw = given.get(stage.key)
        if raw in (None, ""):
            out[stage.key] = int(stage.default_k or 1)
            continue
        try:
            value = int(raw)
        except (TypeError, ValueError):
            raise PipelineError(
                f"k of {stage.key} ({stage.title.lower()}): {raw!r} is not a number"
            ) from None
        low = int(stage.min_k or 1)
        if not low <= value <= 100:
            why = " (the paper asks at least that many)" if low > 1 else ""
            raise PipelineError(
                f"k of {stage.key} ({stage.title.lower()}): {value} is not between {low}{why} and 100"
            )
        out[stage.key] = value
    return out


def pipeline_create(
    *,
    curator: Actor,
    kind: str,
    collection: str,
    name: str = "",
    k: dict[str, Any] | None = None,
    slots: int = 0,
) -> Pipeline:
    """Start a pipeline of ``kind`` on a curator's ``collection``: every stage is recorded
    and the first stage's campaign created. K per stage defaults to the paper's. A round of
    adversarial writing is started with its models instead (``adversarial_round_create``)."""
    if definition(kind).is_round:
        raise PipelineError(
            f"kind: a {definition(kind).title} pipeline is started as a round, with the models in the "
            "loop (the adversarial rounds page)"
        )
    return pipeline_start(curator=curator, kind=kind, collection=collection, name=name, k=k, slots=slots)


def pipeline_start(
    *,
    curator: Actor,
    kind: str,
    collection: str,
    name: str = "",
    k: dict[str, Any] | None = None,
    slots: int = 0,
    before_start: Callable[[Pipeline], None] | None = None,
) -> Pipeline:
    """:func:`pipeline_create` for every kind; ``before_start(pipeline)`` writes what the
    stages read (a round's row) after the pipeline and before its first stage, in the same
    transaction."""
    curator = signed_in(curator)
    defn = definition(kind)
    collection = (collection or "").strip()
    if not collection:
        raise PipelineError("collection: required")
    name = (name or "").strip() or slugify(f"{collection}-{kind}")[:60]
    if slugify(name) != name or len(name) > 60:
        raise PipelineError(
            f"name: {name!r} must be a slug (letters, digits, - and _) of at most 60 characters"
        )
    if Pipeline.objects.filter(name=name).exists():
        raise PipelineError(f"name: a pipeline called {name!r} exists already")
    clean_k = _clean_k(defn, k)
    if defn.uses_slots:
        try:
            slots = int(slots)
        except (TypeError, ValueError):
            raise PipelineError(f"slots: {slots!r} is not a number") from None
        if not 1 <= slots <= MAX_SLOTS:
            raise PipelineError(f"slots: {slots} is not between 1 and {MAX_SLOTS}")
    else:
        slots = 0
        if not Schema.objects.filter(collection=collection).exists():
            raise PipelineError(
                f"collection: no questions in {collection!r}; import your schemas into it first"
            )
    taken = [
        campaign_name(Pipeline(name=name), s)
        for s in defn.stages
        if s.task and Campaign.objects.filter(name=campaign_name(Pipeline(name=name), s)).exists()
    ]
    if taken:
        raise PipelineError(f"name: the campaign {taken[0]} exists already; choose another pipeline name")
    with transaction.atomic():
        pipeline = Pipeline.objects.create(
            name=name, kind=kind, collection=collection, k=clean_k, slots=slots, created_by=curator
        )
        PipelineStage.objects.bulk_create(
            PipelineStage(pipeline=pipeline, position=n, key=s.key) for n, s in enumerate(defn.stages)
        )
        if before_start is not None:
            before_start(pipeline)
        _start(pipeline, defn, 0, curator)
    return pipeline


def _start(pipeline: Pipeline, defn: PipelineDefinition, position: int, curator: Actor | None) -> None:
    """Start the stage at ``position`` and, while stages finish at once (nothing to do,
    or the last stage that only computes), the ones after it."""
    ctx = Context.of(pipeline)
    while position < len(defn.stages):
        kind = defn.stages[position]
        stage = ctx.stages[kind.key]
        stage.started_at = timezone.now()
        if kind.task is not None:
            selection = kind.build(ctx, kind.select(ctx))
            if selection.size == 0:
                stage.status = StageStatus.DONE
                stage.finished_at = timezone.now()
                stage.outcome = {"counts": [], "skipped": "no items for this stage", "lines": []}
                stage.save()
                position += 1
                continue
            campaign = services.campaign_create(
                name=campaign_name(pipeline, kind),
                task=kind.task,
                items=selection.items,
                ids=selection.ids if selection.items != "slots" else None,
                slots=selection.slots,
                k=ctx.k(kind),
                created_by=curator,
            )
            campaign.selection = {
                **campaign.selection,
                "collection": pipeline.collection,
                "pipeline": pipeline.name,
            }
            campaign.save(update_fields=["selection"])
            stage.campaign = campaign
            stage.status = StageStatus.ACTIVE
            stage.save()
            return
        if kind.waits:
            stage.status = StageStatus.ACTIVE
            stage.save()
            return
        stage.outcome = kind.summarise(ctx)
        stage.status = StageStatus.DONE
        stage.finished_at = timezone.now()
        stage.save()
        position += 1
    Pipeline.objects.filter(pk=pipeline.pk).update(status=PipelineStatus.DONE)
    pipeline.status = PipelineStatus.DONE


@dataclass(frozen=True)
class Progress:
    items: int
    pending: int
    judgments: int
    needed: int

    @property
    def complete(self) -> bool:
        return self.pending == 0

    @property
    def percent(self) -> int:
        return int(100 * self.judgments / self.needed) if self.needed else 100


def stage_progress(stage: PipelineStage) -> Progress | None:
    """Judgments given / needed over the stage campaign's items (gold left out)."""
    if stage.campaign is None:
        return None
    k = stage.campaign.judgments_per_item
    items = CampaignItem.objects.filter(campaign=stage.campaign, is_gold=False)
    count = given = needed = pending = 0
    # each item's K: its own (ANLI's third vote) over the campaign's
    for n, own in items.values_list("judgment_count", "judgments_needed"):
        item_k = k if own is None else int(own)
        count += 1
        given += min(int(n), item_k)
        needed += item_k
        pending += int(n) < item_k
    return Progress(items=count, pending=pending, judgments=given, needed=needed)


def current_stage(pipeline: Pipeline) -> PipelineStage | None:
    return (
        PipelineStage.objects.filter(pipeline=pipeline, status=StageStatus.ACTIVE)
        .select_related("campaign")
        .order_by("position")
        .first()
    )


@dataclass
class StagePreview:
    key: str
    title: str
    task: str | None
    k: int | None
    counts: list[tuple[str, int]]
    rows: list[str]
    note: str = ""
    skipped: str = ""


@dataclass
class AdvancePreview:
    """What confirming gives: the current stage's outcome and the stages that start."""

    stage: PipelineStage
    progress: Progress | None
    outcome: dict[str, Any]
    next: list[StagePreview] = field(default_factory=list)
    finishes: bool = False


def _describe(item: CampaignItem) -> str:
    if item.adversarial is not None:
        content = item.adversarial.content or {}
        written = " / ".join(
            str(content[f]) for f in ("sentence", "twin", "statement_0", "statement_1") if content.get(f)
        )
        fooled = ", ".join(map(str, item.adversarial.fooled or [])) or "no model"
        return f"written item #{item.adversarial_id} (fooled {fooled}): {written}"
    if item.reason is not None:
        return f"[{item.reason.origin}] {item.reason.schema.external_id}: {item.reason.text}"
    if item.schema is not None:
        return f"{item.schema.external_id}: {item.schema.sentence}"
    if item.comve_item is not None:
        c = item.comve_item
        return f"{c.external_id}: {c.statement_0} / {c.statement_1}"
    return "an empty writing slot"


def pipeline_advance_preview(*, pipeline: Pipeline, rows: int = 5) -> AdvancePreview:
    """What advancing the current stage would give, computed by doing it in a transaction
    that is rolled back (so the preview and the advance are one code)."""
    stage = current_stage(pipeline)
    if stage is None:
        raise PipelineError(f"{pipeline.name} is done: no stage to advance")
    progress = stage_progress(stage)
    preview = AdvancePreview(stage=stage, progress=progress, outcome={})
    with transaction.atomic():
        # a copy: the caller's pipeline must not take the rolled-back status
        pipeline = Pipeline.objects.get(pk=pipeline.pk)
        _advance(pipeline, stage.position, force=True, curator=None)
        defn = definition(pipeline.kind)
        after = list(
            PipelineStage.objects.filter(pipeline=pipeline, position__gte=stage.position)
            .select_related("campaign")
            .order_by("position")
        )
        preview.outcome = dict(after[0].outcome)
        for later in after[1:]:
            if later.started_at is None:
                break
            kind = defn.stage(later.key)
            ctx = Context.of(pipeline)
            if later.campaign is not None:
                items = list(
                    CampaignItem.objects.filter(campaign=later.campaign)
                    .select_related("reason__schema", "schema", "comve_item", "adversarial")
                    .order_by("pk")[:rows]
                )
                sel = kind.select(ctx)
                preview.next.append(
                    StagePreview(
                        key=kind.key,
                        title=kind.title,
                        task=kind.task,
                        k=later.campaign.judgments_per_item,
                        counts=sel.counts,
                        rows=[_describe(i) for i in items],
                        note=sel.note,
                    )
                )
            else:
                sel = kind.select(ctx)
                preview.next.append(
                    StagePreview(
                        key=kind.key,
                        title=kind.title,
                        task=None,
                        k=None,
                        counts=[(str(a), int(b)) for a, b in (later.outcome.get("counts") or sel.counts)],
                        rows=list(later.outcome.get("lines") or [])[:rows],
                        note=sel.note,
                        skipped=str(later.outcome.get("skipped", "")),
                    )
                )
        preview.finishes = Pipeline.objects.get(pk=pipeline.pk).status == PipelineStatus.DONE
        transaction.set_rollback(True)  # a preview: nothing is kept
    return preview


@dataclass(frozen=True)
class AdvanceResult:
    stage: PipelineStage
    #: False when the stage had been advanced already (a second click): nothing was done.
    advanced: bool
    started: list[str]


def pipeline_advance(
    *, pipeline: Pipeline, position: int, curator: Actor, force: bool = False
) -> AdvanceResult:
    """Finish the stage at ``position`` (aggregate its campaign, close it, keep its
    outcome) and start the next. Atomic; a second call for the same stage does nothing
    (``advanced`` False). Refused while items still need judgments unless ``force``."""
    curator = signed_in(curator)
    with transaction.atomic():
        locked = Pipeline.objects.select_for_update().get(pk=pipeline.pk)
        stage = PipelineStage.objects.select_related("campaign").get(pipeline=locked, position=position)
        if stage.status != StageStatus.ACTIVE:
            return AdvanceResult(stage=stage, advanced=False, started=[])
        started = _advance(locked, position, force=force, curator=curator)
    pipeline.status = locked.status
    stage.refresh_from_db()
    return AdvanceResult(stage=stage, advanced=True, started=started)


def _advance(pipeline: Pipeline, position: int, *, force: bool, curator: Actor | None) -> list[str]:
    defn = definition(pipeline.kind)
    stage = PipelineStage.objects.select_related("campaign").get(pipeline=pipeline, position=position)
    if stage.status != StageStatus.ACTIVE:
        raise PipelineError(f"stage {stage.key}: it is {stage.status}, not the current stage")
    kind = defn.stages[position]
    ctx = Context.of(pipeline)
    if stage.campaign is not None:
        progress = stage_progress(stage)
        assert progress is not None
        if not progress.complete and not force:
            raise PipelineError(
                f"{kind.title}: {progress.pending} of {progress.items} items still need judgments "
                f"({progress.needed - progress.judgments} judgments missing); wait for the annotators "
                "or advance anyway (force), leaving those items out"
            )
        # closed now: a forced writing stage keeps every answer written so far
        services.campaign_aggregate(campaign=stage.campaign, written_so_far=force)
        services.campaign_status_set(campaign=stage.campaign, status=CampaignStatus.CLOSED)
    else:
        kind.build(ctx, kind.select(ctx))
    ctx = Context.of(pipeline)
    stage = ctx.stages[kind.key]
    stage.outcome = kind.summarise(ctx)
    stage.status = StageStatus.DONE
    stage.finished_at = timezone.now()
    stage.save()
    _start(pipeline, defn, position + 1, curator)
    return list(
        PipelineStage.objects.filter(pipeline=pipeline, position__gt=position, started_at__isnull=False)
        .order_by("position")
        .values_list("key", flat=True)
    )


def pipeline_collection_counts(pipeline: Pipeline) -> dict[str, int]:
    """How many items the pipeline's collection holds (the list page shows it)."""
    if definition(pipeline.kind).is_round:
        return {
            "items written in its rounds": AdversarialItem.objects.filter(
                round__pipeline__collection=pipeline.collection
            ).count()
        }
    if pipeline.kind == PipelineKind.COMVE:
        return {"ComVE items": ComVEItem.objects.filter(collection=pipeline.collection).count()}
    return {"questions": Schema.objects.filter(collection=pipeline.collection).count()}


def judgments_total(stage: PipelineStage) -> int:
    if stage.campaign is None:
        return 0
    total = CampaignItem.objects.filter(campaign=stage.campaign).aggregate(n=Sum("judgment_count"))["n"]
    return int(total or 0)
