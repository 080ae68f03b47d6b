"""The adversarial writer's actions on the ordinary annotate page: check with the models
(a new try), the verdict panel that polls until the models answered, check again (the
same try, after a lost worker), keep and retract. Thin: parse, call a service, render.

The item form of an adversarial writing slot posts here (its task's ``spec.form_action``);
htmx gets the verdict panel (``HX-Retarget``) and each field's problem beside the field
(out-of-band swaps); without JavaScript every action returns to the annotate page.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_POST

from annotation import selectors as annotation_selectors
from annotation.adversarial_content import COMVE_FIELDS, COMVE_OPTION_FIELDS, WINOGRAD_FIELDS, ContentError
from annotation.models import AdversarialStatus, AdversarialTry, Assignment, Campaign, Task, TryStatus
from annotation.participation import participation
from annotation.permissions import user_can_annotate
from annotation.services import AssignmentRefused
from annotation.task_types.adversarial import try_panel
from core.errors import WinnowError
from core.roles import role_required
from evaluation.adversarial import services

ANNOTATORS_ONLY = "Adversarial writing is for annotators and study participants."
PANEL = "annotation/tasks/_adversarial_panel.html"
FIELDS = {
    Task.ADVERSARIAL_WINOGRAD: WINOGRAD_FIELDS,
    Task.ADVERSARIAL_COMVE: (*COMVE_FIELDS, *COMVE_OPTION_FIELDS),
}


def _htmx(request: HttpRequest) -> bool:
    return bool(getattr(request, "htmx", None))


def _own_assignment(request: HttpRequest, name: str) -> Assignment:
    """The writer's own slot named by the POST's ``assignment``, in campaign ``name`` (else 404)."""
    try:
        assignment = annotation_selectors.assignment_get(
            user=request.user, pk=int(request.POST.get("assignment", "0"))
        )
    except ValueError:
        raise Http404("No such assignment") from None
    if assignment.campaign_item.campaign.name != name:
        raise Http404("No such assignment in this campaign")
    return assignment


def _page(campaign: Campaign, item_id: int | None = None) -> str:
    url = reverse("annotation:campaign-annotate", args=[campaign.name])
    return f"{url}?{urlencode({'item': item_id})}" if item_id is not None else url


def _panel(
    request: HttpRequest,
    attempt: AdversarialTry | None,
    *,
    campaign: Campaign,
    assignment_id: int,
    problems: dict[str, str] | None = None,
    note: str = "",
) -> HttpResponse:
    """The verdict panel as a fragment that replaces the page's (and each field's problem,
    out of band, beside its field)."""
    panel = try_panel(attempt, task=campaign.task)
    scored = attempt is not None and attempt.item.try_set.filter(status=TryStatus.SCORED).exists()
    writing = attempt is None or attempt.item.status == AdversarialStatus.WRITING
    problems = problems or {}
    context: dict[str, Any] = {
        "p": {
            **panel,
            "campaign": campaign.name,
            "assignment_id": assignment_id,
            "scored_any": scored,
            "writing": writing,
            "note": note,
        },
        "field_errors": [(name, problems.get(name, "")) for name in FIELDS[Task(campaign.task)]],
        "oob": True,
    }
    response = render(request, PANEL, context)
    response["HX-Retarget"] = "#adversarial-panel"
    response["HX-Reswap"] = "outerHTML"
    return response


@role_required(user_can_annotate, ANNOTATORS_ONLY)
@require_POST
def check(request: HttpRequest, name: str) -> HttpResponse:
    """Check the written item with the round's models: a new try, sent to the models."""
    assignment = _own_assignment(request, name)
    campaign = assignment.campaign_item.campaign
    raw = {field: request.POST.get(field, "") for field in FIELDS.get(Task(campaign.task), ())}
    try:
        attempt = services.adversarial_try_create(writer=request.user, assignment=assignment, raw=raw)
    except services.AdversarialError as exc:
        return _refused(request, assignment, exc)
    except ContentError as exc:
        if not _htmx(request):
            messages.error(request, f"Nothing was sent to the models: {exc}")
            return redirect(_page(campaign, assignment.campaign_item_id))
        latest = AdversarialTry.objects.filter(item__assignment=assignment).order_by("-number").first()
        return _panel(
            request,
            latest,
            campaign=campaign,
            assignment_id=assignment.pk,
            problems=exc.problems,
            note="Nothing was sent to the models: fix the fields marked.",
        )
    if not _htmx(request):
        messages.info(request, f"Try {attempt.number} was sent to the models.")
        return redirect(_page(campaign, assignment.campaign_item_id))
    return _panel(request, attempt, campaign=campaign, assignment_id=assignment.pk)


def _own_try(request: HttpRequest, try_id: int) -> AdversarialTry:
    attempt = get_object_or_404(
        AdversarialTry.objects.select_related("item__assignment__campaign_item__campaign"),
        pk=try_id,
        item__writer=request.user,
    )
    if attempt.item.assignment is None:
        raise Http404("No such try")
    return attempt


@role_required(user_can_annotate, ANNOTATORS_ONLY)
@require_GET
def try_detail(request: HttpRequest, try_id: int) -> HttpResponse:
    """The verdict panel of one of the writer's tries (the panel polls it while waiting)."""
    attempt = _own_try(request, try_id)
    assert attempt.item.assignment is not None
    campaign = attempt.item.assignment.campaign_item.campaign
    if not _htmx(request):
        return redirect(_page(campaign, attempt.item.assignment.campaign_item_id))
    response = _panel(request, attempt, campaign=campaign, assignment_id=attempt.item.assignment_id or 0)
    response["Cache-Control"] = "no-store"
    return response


@role_required(user_can_annotate, ANNOTATORS_ONLY)
@require_POST
def try_again(request: HttpRequest, try_id: int) -> HttpResponse:
    """Send a try that failed, or that no worker answered, to the models again."""
    attempt = _own_try(request, try_id)
    assert attempt.item.assignment is not None
    campaign = attempt.item.assignment.campaign_item.campaign
    attempt = services.adversarial_try_again(writer=request.user, attempt=attempt)
    if not _htmx(request):
        messages.info(request, f"Try {attempt.number} was sent to the models again.")
        return redirect(
            _page(campaign, attempt.item.assignment.campaign_item_id if attempt.item.assignment else None)
        )
    return _panel(request, attempt, campaign=campaign, assignment_id=attempt.item.assignment_id or 0)


def _done(request: HttpRequest, campaign: Campaign, message: str) -> HttpResponse:
    """After keep or retract: the annotate page (the next slot starts from there). A study
    participant's study says what comes next, as after any answer: their next slot (leased,
    so the page shows it), or the end of their batch with its code."""
    messages.success(request, message)
    url = _page(campaign)
    try:
        step = participation().next_step(user=request.user, campaign=campaign)
    except AssignmentRefused:
        step = None  # the annotate page says why nothing is handed out
    if step is not None and step.redirect:
        url = step.redirect
    if _htmx(request):
        response = HttpResponse(status=204)
        response["HX-Redirect"] = url
        return response
    return redirect(url)


def _refused(request: HttpRequest, assignment: Assignment, error: WinnowError) -> HttpResponse:
    """A refused action, said in the verdict panel (htmx) or on the page (without JavaScript)."""
    campaign = assignment.campaign_item.campaign
    if campaign.task not in FIELDS:  # not a writing slot: no panel to say it in
        raise error
    if not _htmx(request):
        messages.error(request, str(error))
        return redirect(_page(campaign, assignment.campaign_item_id))
    latest = AdversarialTry.objects.filter(item__assignment=assignment).order_by("-number").first()
    response = _panel(request, latest, campaign=campaign, assignment_id=assignment.pk, note=str(error))
    response["X-Winnow-Status"] = str(error.status)
    return response


@role_required(user_can_annotate, ANNOTATORS_ONLY)
@require_POST
def keep(request: HttpRequest, name: str) -> HttpResponse:
    """Keep the item as its last scored try."""
    assignment = _own_assignment(request, name)
    try:
        done = services.adversarial_keep(writer=request.user, assignment=assignment)
    except WinnowError as exc:
        return _refused(request, assignment, exc)
    fooled = ", ".join(done.item.fooled) or "no model"
    return _done(
        request,
        assignment.campaign_item.campaign,
        f"Item kept after {done.item.tries} {'try' if done.item.tries == 1 else 'tries'}: it fooled {fooled}.",
    )


@role_required(user_can_annotate, ANNOTATORS_ONLY)
@require_POST
def retract(request: HttpRequest, name: str) -> HttpResponse:
    """Retract the item: its tries are kept, it goes no further."""
    assignment = _own_assignment(request, name)
    try:
        services.adversarial_retract(writer=request.user, assignment=assignment)
    except WinnowError as exc:
        return _refused(request, assignment, exc)
    return _done(
        request, assignment.campaign_item.campaign, "Item retracted: its tries are kept, it goes no further."
    )
