"""Annotator and curator pages. Thin: parse, call a selector or service, render."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation import selectors, services
from annotation.exports import csv_lines, jsonl_lines
from annotation.forms import CampaignCreateForm, answer_from_post
from annotation.models import Assignment, CampaignAnnotator, CampaignItem
from annotation.permissions import user_can_annotate, user_can_curate
from annotation.tasks_registry import TASKS, task_spec

ITEMS_PER_PAGE = 200


def _htmx(request: HttpRequest) -> bool:
    return bool(getattr(request, "htmx", False))


def _require(predicate: Any, request: HttpRequest) -> None:
    if not predicate(request.user):
        raise PermissionDenied


@login_required
def campaign_list(request: HttpRequest) -> HttpResponse:
    if not (user_can_annotate(request.user) or user_can_curate(request.user)):
        raise PermissionDenied
    campaigns = list(selectors.campaign_list(user=request.user))
    rows = []
    for c in campaigns:
        row: dict[str, Any] = {"campaign": c, "title": task_spec(c.task).title}
        if user_can_annotate(request.user) and not c.imported:
            row["mine"] = selectors.my_progress(campaign=c, annotator=request.user)
        rows.append(row)
    return render(request, "annotation/campaign_list.html", {"rows": rows})


def _annotate_context(
    request: HttpRequest, campaign: Any, assignment: Assignment | None, **extra: Any
) -> dict:
    spec = task_spec(campaign.task)
    context: dict[str, Any] = {
        "campaign": campaign,
        "spec": spec,
        "assignment": assignment,
        "progress": selectors.my_progress(campaign=campaign, annotator=request.user),
        **extra,
    }
    if assignment is not None:
        assignment = selectors.assignment_for_display(assignment=assignment, campaign=campaign)
        context["assignment"] = assignment
        context["view"] = selectors.item_presentation(item=assignment.campaign_item, task=campaign.task)
    return context


@login_required
def campaign_annotate(request: HttpRequest, name: str) -> HttpResponse:
    """The annotator's page. GET: the current (or next) item. POST: submit an answer,
    then the next item (htmx: the item fragment; without JavaScript: redirect)."""
    _require(user_can_annotate, request)
    template = "annotation/campaign_annotate.html"
    if request.method == "POST":
        # The annotator's own lease decides the campaign: an answer on an item in hand is
        # recorded even if the campaign was closed meanwhile.
        try:
            assignment = selectors.assignment_get(
                user=request.user, pk=int(request.POST.get("assignment", "0"))
            )
        except ValueError:
            raise Http404("No such assignment") from None
        campaign = assignment.campaign_item.campaign
        if campaign.name != name:
            raise Http404("No such assignment in this campaign")
        try:
            services.judgment_submit(
                annotator=request.user, assignment=assignment, **answer_from_post(request.POST)
            )
        except services.LeaseExpired as exc:
            messages.warning(request, str(exc))
        except services.JudgmentRefused as exc:
            context = _annotate_context(request, campaign, assignment, error=str(exc), posted=request.POST)
            if _htmx(request):
                return render(request, template + "#item", context)
            return render(request, template, context, status=400)
        if not _htmx(request):
            return redirect("annotation:campaign-annotate", name=campaign.name)
    else:
        campaign = selectors.campaign_get(user=request.user, name=name)
    refused = ""
    following: Assignment | None = None
    try:
        following = services.assignment_next(campaign=campaign, annotator=request.user)
    except services.AssignmentRefused as exc:
        refused = str(exc)
    context = _annotate_context(request, campaign, following, refused=refused)
    if _htmx(request):
        return render(request, template + "#item", context)
    return render(request, template, context)


# --- curator ---------------------------------------------------------------------------


@login_required
def campaign_create(request: HttpRequest) -> HttpResponse:
    _require(user_can_curate, request)
    form = CampaignCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            campaign = services.campaign_create(created_by=request.user, **form.service_kwargs())
        except services.CampaignError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(
                request, f"Campaign {campaign.name} created with {campaign.items.count()} items."
            )
            return redirect("annotation:campaign-detail", name=campaign.name)
    return render(request, "annotation/campaign_create.html", {"form": form, "tasks": TASKS.values()})


@login_required
def campaign_detail(request: HttpRequest, name: str) -> HttpResponse:
    _require(user_can_curate, request)
    campaign = selectors.campaign_get(user=request.user, name=name)
    flagged_only = request.GET.get("flagged") == "1"
    try:
        page = max(1, int(request.GET.get("page", "1")))
    except ValueError:
        page = 1
    # a page past the last one (however large the number) is not there: 404, not a query
    if page > 1 and (page - 1) * ITEMS_PER_PAGE >= selectors.campaign_item_count(
        campaign=campaign, flagged_only=flagged_only
    ):
        raise Http404(f"The item list of {campaign.name} has no page {page}.")
    context = {
        "campaign": campaign,
        "spec": task_spec(campaign.task),
        "progress": selectors.campaign_progress(campaign=campaign),
        "annotators": selectors.campaign_annotators(campaign=campaign),
        "items": selectors.campaign_items_page(
            campaign=campaign,
            flagged_only=flagged_only,
            limit=ITEMS_PER_PAGE,
            offset=(page - 1) * ITEMS_PER_PAGE,
        ),
        "page": page,
        "per_page": ITEMS_PER_PAGE,
        "flagged_only": flagged_only,
        "decisions": services.adjudication_decisions(campaign.task),
    }
    if _htmx(request) and request.GET.get("part") == "progress":
        return render(request, "annotation/campaign_detail.html#progress", context)
    return render(request, "annotation/campaign_detail.html", context)


@login_required
@require_POST
def annotator_pause(request: HttpRequest, name: str, user_id: int) -> HttpResponse:
    _require(user_can_curate, request)
    campaign = selectors.campaign_get(user=request.user, name=name)
    member = get_object_or_404(CampaignAnnotator, campaign=campaign, annotator_id=user_id)
    paused = request.POST.get("paused") == "1"
    services.campaign_annotator_pause(campaign=campaign, annotator=member.annotator, paused=paused)
    messages.success(request, f"{member.annotator.get_username()} {'paused' if paused else 'can go on'}.")
    return redirect("annotation:campaign-detail", name=campaign.name)


@login_required
@require_POST
def item_adjudicate(request: HttpRequest, name: str, item_id: int) -> HttpResponse:
    _require(user_can_curate, request)
    campaign = selectors.campaign_get(user=request.user, name=name)
    item = get_object_or_404(CampaignItem, campaign=campaign, pk=item_id)
    try:
        services.adjudication_record(
            item=item,
            curator=request.user,
            decision=request.POST.get("decision", ""),
            note=request.POST.get("note", ""),
        )
    except services.AnnotationError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Decision on item {item.pk} recorded beside its votes.")
    return redirect("annotation:campaign-detail", name=campaign.name)


@login_required
@require_POST
def campaign_aggregate(request: HttpRequest, name: str) -> HttpResponse:
    _require(user_can_curate, request)
    campaign = selectors.campaign_get(user=request.user, name=name)
    summary = services.campaign_aggregate(campaign=campaign)
    labels = ", ".join(f"{k}: {v}" for k, v in sorted(summary.labels.items())) or "no labels"
    extra = ""
    if summary.extra.get("human_accuracy") is not None:
        extra = f" Human accuracy {summary.extra['human_accuracy']:.1%}."
    messages.success(
        request,
        f"Aggregated {summary.aggregated} items ({summary.pending} still need judgments); "
        f"{summary.changed} changed, {summary.created} created. {labels}.{extra}",
    )
    return redirect("annotation:campaign-detail", name=campaign.name)


@login_required
def campaign_export(request: HttpRequest, name: str, fmt: str) -> StreamingHttpResponse:
    _require(user_can_curate, request)
    if fmt not in ("csv", "jsonl"):
        raise Http404("Exports are csv or jsonl")
    campaign = selectors.campaign_get(user=request.user, name=name)
    rows = selectors.judgment_export_rows(campaign=campaign)
    if fmt == "csv":
        response = StreamingHttpResponse(csv_lines(rows, selectors.EXPORT_FIELDS), content_type="text/csv")
    else:
        response = StreamingHttpResponse(jsonl_lines(rows), content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="{campaign.name}-judgments.{fmt}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response
