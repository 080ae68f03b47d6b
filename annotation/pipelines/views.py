"""The curator's pipeline pages: the list with the "new pipeline" form, a pipeline's
stages with their progress, what waits for the curator, the preview and Confirm.
Annotators and researchers never see them."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from annotation import selectors
from annotation.errors import AnnotationError, PipelineError
from annotation.models import (
    AdversarialRound,
    AgreementHeadline,
    Pipeline,
    PipelineKind,
    PipelineStage,
    PipelineStatus,
    StageStatus,
)
from annotation.permissions import user_can_curate
from annotation.pipelines import services
from annotation.pipelines.forms import PipelineCreateForm
from annotation.pipelines.registry import PIPELINES
from annotation.task_types import task_spec
from core.roles import role_required
from datasets.models import Reason, ReasonOrigin, Schema

CURATORS_ONLY = "Pipelines are for curators."


@role_required(user_can_curate, CURATORS_ONLY)
def pipeline_list(request: HttpRequest) -> HttpResponse:
    """Every pipeline with its current stage, and the form that starts one."""
    # a link (the import result's next step) may fill the form: ?kind=&collection=
    initial = {key: request.GET[key] for key in ("kind", "collection") if request.GET.get(key)}
    form = PipelineCreateForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            pipeline = services.pipeline_create(curator=request.user, **form.service_kwargs())
        except AnnotationError as exc:  # the pipeline's or its first campaign's refusal
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Pipeline {pipeline.name} started: its first campaign is open.")
            return redirect("annotation:pipeline-detail", name=pipeline.name)
    pipelines = list(Pipeline.objects.all())
    current = {
        s.pipeline_id: s
        for s in PipelineStage.objects.filter(pipeline__in=pipelines, status=StageStatus.ACTIVE).order_by(
            "-position"
        )
    }
    rows = [
        {
            "pipeline": p,
            "title": PIPELINES[p.kind].title,
            "current": current.get(p.pk),
            "stage_title": PIPELINES[p.kind].stage(current[p.pk].key).title if p.pk in current else "",
        }
        for p in pipelines
    ]
    collections = sorted(
        set(Schema.objects.exclude(collection="wsc273").values_list("collection", flat=True))
    )
    status = 400 if request.method == "POST" else 200
    return render(
        request,
        "annotation/pipeline_list.html",
        {
            "rows": rows,
            "form": form,
            "collections": collections,
            "definitions": PIPELINES.values(),
            "winowhy_k": form.k_fields("winowhy"),
            "comve_k": form.k_fields("comve"),
        },
        status=status,
    )


def _stage_rows(pipeline: Pipeline) -> list[dict[str, Any]]:
    defn = PIPELINES[pipeline.kind]
    stages = list(
        PipelineStage.objects.filter(pipeline=pipeline).select_related("campaign").order_by("position")
    )
    headlines = {
        h.campaign_id: h
        for h in AgreementHeadline.objects.filter(
            campaign_id__in=[s.campaign_id for s in stages if s.campaign_id]
        )
    }
    rows = []
    for stage in stages:
        kind = defn.stage(stage.key)
        rows.append(
            {
                "stage": stage,
                "kind": kind,
                "progress": services.stage_progress(stage),
                "headline": headlines.get(stage.campaign_id) if stage.campaign_id else None,
                "k": stage.campaign.judgments_per_item if stage.campaign else None,
                "free_text": bool(kind.task and task_spec(kind.task).free_text),
            }
        )
    return rows


def _left_out(stage: PipelineStage | None) -> str:
    """What advancing a stage by force leaves out (a writing stage keeps every answer)."""
    if stage is not None and stage.campaign is not None and task_spec(stage.campaign.task).free_text:
        return "every answer written so far is kept, and items nobody wrote for are left out"
    return "those items are left out"


def _waiting(pipeline: Pipeline, stage: PipelineStage | None, progress: services.Progress | None) -> str:
    """What waits for the curator, in a sentence."""
    if stage is None:
        return "Nothing: every stage is done."
    title = PIPELINES[pipeline.kind].stage(stage.key).title
    if stage.campaign is None:
        return f"{title}: check the preview below and confirm to build it."
    assert progress is not None
    if progress.complete:
        return f"{title} is complete: check the preview below and confirm to start the next stage."
    return (
        f"The annotators: {progress.pending} of {progress.items} items of {title.lower()} still need "
        f"judgments ({progress.judgments} of {progress.needed} given). You can advance anyway (force): "
        f"{_left_out(stage)}."
    )


def _output(pipeline: Pipeline) -> dict[str, str]:
    """Where a finished pipeline's output went, and the release form's fields for it."""
    if pipeline.kind == PipelineKind.ADVERSARIAL_WINOGRAD:
        fields = {"dataset": "wsc", "collection": pipeline.collection, "split": ""}
        where = (
            f"the kept twin pairs are Winograd schemas of collection {pipeline.collection}, each item's "
            "validation and votes on its written item"
        )
    elif pipeline.kind == PipelineKind.ADVERSARIAL_COMVE:
        fields = {"dataset": "comve", "collection": pipeline.collection, "split": ""}
        where = (
            f"the kept pairs are ComVE items of collection {pipeline.collection}, each item's validation "
            "and votes on its written item"
        )
    elif pipeline.kind == PipelineKind.COMVE:
        fields = {"dataset": "comve", "collection": pipeline.collection, "split": "pilot"}
        where = (
            f"the ComVE items written, checked and rewritten are in collection {pipeline.collection}, "
            "split pilot, of the data set ComVE"
        )
    else:
        fields = {"dataset": "winowhy", "collection": pipeline.collection, "split": ""}
        where = (
            f"the reasons (written, reverse and generated) with their labels and knowledge types are on "
            f"the questions of collection {pipeline.collection}, in the data set WinoWhy"
        )
    return {**fields, "where": where, "query": urlencode({"name": pipeline.name, **fields})}


@role_required(user_can_curate, CURATORS_ONLY)
def pipeline_detail(request: HttpRequest, name: str) -> HttpResponse:
    pipeline = get_object_or_404(Pipeline, name=name)
    stage = services.current_stage(pipeline)
    progress = services.stage_progress(stage) if stage is not None else None
    # The preview runs the advance and rolls it back: worked out when there is something
    # to confirm (a complete stage, a build stage), or when the curator asks for it (to
    # advance by force), not on every look at the annotators' progress.
    asked = request.GET.get("preview") == "1"
    reach = (
        selectors.items_out_of_reach(campaign=stage.campaign)
        if stage is not None and stage.campaign is not None and progress is not None and not progress.complete
        else None
    )
    preview = (
        services.pipeline_advance_preview(pipeline=pipeline)
        if stage is not None and (progress is None or progress.complete or asked)
        else None
    )
    context: dict[str, Any] = {
        "pipeline": pipeline,
        "definition": PIPELINES[pipeline.kind],
        "rows": _stage_rows(pipeline),
        "current": stage,
        "preview": preview,
        "progress": progress,
        "waiting": _waiting(pipeline, stage, progress),
        "out_of_reach": reach,
        "left_out": _left_out(stage),
    }
    if pipeline.status == PipelineStatus.DONE:
        context["output"] = _output(pipeline)
    # a round of adversarial writing: its number in the collection, models, method and rule
    context["round"] = AdversarialRound.objects.filter(pipeline=pipeline).first()
    if pipeline.kind == "winowhy":
        context["generated"] = Reason.objects.filter(
            schema__collection=pipeline.collection, origin=ReasonOrigin.GENERATED
        ).count()
        context["generate_command"] = (
            f"manage.py generate_reasons --collection {pipeline.collection} --model MODEL"
        )
    return render(request, "annotation/pipeline_detail.html", context)


@role_required(user_can_curate, CURATORS_ONLY)
def pipeline_advance(request: HttpRequest, name: str) -> HttpResponse:
    """Confirm: finish the stage the form was shown for and start the next. A second
    click (the stage is done already) does nothing and says so. A GET (the sign-in page
    sends a curator whose session ended here) shows the pipeline, where Confirm is."""
    pipeline = get_object_or_404(Pipeline, name=name)
    if request.method != "POST":
        return redirect("annotation:pipeline-detail", name=pipeline.name)
    try:
        position = int(request.POST.get("stage", ""))
    except ValueError:
        messages.error(request, "stage: missing or not a number; reload the page and confirm again.")
        return redirect("annotation:pipeline-detail", name=pipeline.name)
    if not PipelineStage.objects.filter(pipeline=pipeline, position=position).exists():
        messages.error(request, f"stage: {pipeline.name} has no stage {position}.")
        return redirect("annotation:pipeline-detail", name=pipeline.name)
    try:
        result = services.pipeline_advance(
            pipeline=pipeline, position=position, curator=request.user, force=request.POST.get("force") == "1"
        )
    except PipelineError as exc:
        messages.error(request, str(exc))
    else:
        title = PIPELINES[pipeline.kind].stage(result.stage.key).title
        if not result.advanced:
            messages.info(request, f"{title} was advanced already; nothing was done twice.")
        else:
            started = ", ".join(PIPELINES[pipeline.kind].stage(k).title.lower() for k in result.started)
            messages.success(request, f"{title} done." + (f" Started: {started}." if started else ""))
    return redirect("annotation:pipeline-detail", name=pipeline.name)
