"""Annotator and curator pages. Thin: parse, call a selector or service, render."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.views.decorators.http import require_http_methods, require_POST
from django_htmx.http import push_url

from annotation import selectors, services
from annotation.agreement.services import agreement_headline_compute
from annotation.exports import csv_lines, jsonl_lines
from annotation.forms import CampaignCreateForm, answer_from_post
from annotation.models import (
    Assignment,
    AssignmentStatus,
    Campaign,
    CampaignAnnotator,
    CampaignItem,
)
from annotation.participation import participation
from annotation.permissions import user_can_annotate, user_can_annotate_or_curate, user_can_curate
from annotation.task_types import TASKS, task_spec, task_type
from core.roles import role_required

ITEMS_PER_PAGE = 200


def _htmx(request: HttpRequest) -> bool:
    """An htmx request that wants a fragment (a history restore wants the whole page)."""
    details = getattr(request, "htmx", None)
    return bool(details) and not bool(getattr(details, "history_restore_request", False))


CURATORS_ONLY = "Campaigns are curated by curators."
ANNOTATORS_ONLY = "Annotating is for annotators and study participants."
TEAM_ONLY = "Campaigns are for annotators and curators."


@role_required(user_can_annotate_or_curate, TEAM_ONLY)
def campaign_list(request: HttpRequest) -> HttpResponse:
    if user_can_curate(request.user):
        overview = {row.campaign.pk: row for row in selectors.campaign_overview(user=request.user)}
        campaigns = [row.campaign for row in overview.values()]
    else:
        overview, campaigns = {}, list(selectors.campaign_list(user=request.user))
    rows = []
    for c in campaigns:
        row: dict[str, Any] = {
            "campaign": c,
            "title": task_spec(c.task).title,
            "overview": overview.get(c.pk),
        }
        if user_can_annotate(request.user) and not c.imported:
            row["mine"] = selectors.my_progress(campaign=c, annotator=request.user)
        rows.append(row)
    return render(request, "annotation/campaign_list.html", {"rows": rows})


@role_required(user_can_curate, CURATORS_ONLY)
def curator_dashboard(request: HttpRequest) -> HttpResponse:
    """The curator's overview: every campaign with its progress, its headline agreement as
    last computed, and the items awaiting review."""
    rows = selectors.campaign_overview(user=request.user)
    reach = selectors.items_out_of_reach_many(campaigns=[row.campaign for row in rows])
    stuck = [(row.campaign, reach[row.campaign.pk]) for row in rows if reach[row.campaign.pk]]
    return render(
        request,
        "annotation/dashboard.html",
        {
            "stuck": stuck,
            "rows": rows,
            "awaiting": sum(r.progress["awaiting"] for r in rows),
            "active": sum(1 for r in rows if r.campaign.status == "active"),
        },
    )


@role_required(user_can_curate, CURATORS_ONLY)
@require_POST
def campaign_lower_k(request: HttpRequest, name: str) -> HttpResponse:
    """Lower K for the campaign's items that can no longer reach it with the annotators
    left (found again now, not taken from the page), then back to the page that offered it
    (the pipeline's or the dashboard)."""
    campaign = selectors.campaign_get(user=request.user, name=name)
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        back = reverse("annotation:dashboard")
    stranded = selectors.items_out_of_reach(campaign=campaign)
    try:
        k = int(request.POST.get("k", ""))
    except ValueError:
        messages.error(request, "K: give a whole number.")
        return redirect(back)
    if not stranded:
        messages.info(request, f"No item of {campaign.name} is out of reach now: nothing to lower.")
        return redirect(back)
    try:
        changed = services.items_k_lower(campaign=campaign, item_ids=stranded.item_ids, k=k)
    except services.CampaignError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request,
            f"K lowered to {k} for {changed} item{pluralize(changed)} of {campaign.name} "
            f"(item{pluralize(changed)} {', '.join(map(str, stranded.item_ids[:20]))}"
            f"{', …' if len(stranded.item_ids) > 20 else ''}).",
        )
    return redirect(back)


@role_required(user_can_curate, CURATORS_ONLY)
@require_POST
def campaign_agreement_compute(request: HttpRequest, name: str) -> HttpResponse:
    """Compute a campaign's agreement as its page does and keep the headline for the dashboard."""
    campaign = selectors.campaign_get(user=request.user, name=name)
    headline = agreement_headline_compute(campaign=campaign)
    if headline is None:
        messages.warning(
            request, f"{campaign.name} has written answers, not categories: no agreement figure."
        )
    else:
        messages.success(request, f"Agreement of {campaign.name} computed on {headline.judgments} judgments.")
    return redirect("annotation:dashboard")


def _annotate_context(
    request: HttpRequest,
    campaign: Any,
    assignment: Assignment | None,
    progress: selectors.MyProgress | None = None,
    *,
    answered_item: int | None = None,
    lazy_recent: bool = False,
    **extra: Any,
) -> dict:
    """The item page's context. ``answered_item``: the item of the answer just recorded
    (the latest, so the one Previous opens: no query for it). ``lazy_recent``: the list of
    recent answers is fetched when its fold is opened (an htmx answer's response carries
    only what the next item needs)."""
    spec = task_spec(campaign.task)
    judgment = extra.get("review")
    previous_item: int | None
    next_item: int | None
    if answered_item is not None and judgment is None:
        previous_item, next_item = answered_item, None
    else:
        previous_item, next_item = selectors.judgment_neighbours(
            campaign=campaign, annotator=request.user, judgment=judgment
        )
    context: dict[str, Any] = {
        "campaign": campaign,
        "spec": spec,
        "task_template": task_type(campaign.task).template,
        "assignment": assignment,
        "recent": [] if lazy_recent else selectors.judgment_recent(campaign=campaign, annotator=request.user),
        "lazy_recent": lazy_recent,
        "previous_item": previous_item,
        "next_item": next_item,
        **extra,
    }

    # a participation's own progress line (a crowd participant's screening or batch)
    theirs = participation().progress(user=request.user)
    context["progress_of"] = theirs.kind if theirs is not None else ""
    if theirs is not None:
        progress = selectors.MyProgress(
            done=theirs.done, remaining=max(0, theirs.total - theirs.done), paused=False
        )
    context["progress"] = progress or selectors.my_progress(campaign=campaign, annotator=request.user)
    context.update(participation().page_context(user=request.user))
    if not context.get("study"):  # a crowd participant's skips stay final (screening)
        context["skipped"] = selectors.assignments_skipped(campaign=campaign, annotator=request.user)
    if assignment is not None:
        assignment = selectors.assignment_for_display(assignment=assignment, campaign=campaign)
        context["assignment"] = assignment
        context["view"] = selectors.item_presentation(item=assignment.campaign_item, task=campaign.task)
    elif judgment is not None:
        context["view"] = selectors.item_presentation(item=judgment.campaign_item, task=campaign.task)
    return context


def _item_url(campaign: Campaign, item_id: int | None) -> str:
    """The annotator's page of a campaign, at one item when given (an addressable item:
    the browser's Back button returns to the item before)."""
    url = reverse("annotation:campaign-annotate", args=[campaign.name])
    return f"{url}?{urlencode({'item': item_id})}" if item_id is not None else url


def _item_param(request: HttpRequest) -> int | None:
    raw = request.GET.get("item", "")
    if raw == "":
        return None
    try:
        return int(raw)
    except ValueError:
        raise Http404("No such item") from None


def _render_item(request: HttpRequest, context: dict, *, status: int = 200) -> HttpResponse:
    template = "annotation/campaign_annotate.html"
    return render(request, template + "#item" if _htmx(request) else template, context, status=status)


def _current_page(request: HttpRequest, campaign: Campaign, **extra: Any) -> dict:
    """The page as it stands: the item in hand, or Start, or why nothing is handed out."""
    progress = selectors.my_progress(campaign=campaign, annotator=request.user)
    current = selectors.assignment_current(campaign=campaign, annotator=request.user)
    refusal = selectors.assignment_refusal(campaign=campaign, progress=progress)
    return _annotate_context(
        request,
        campaign,
        current,
        progress,
        refused=str(refusal) if refusal is not None and current is None else "",
        start=current is None and refusal is None and progress.remaining > 0,
        **extra,
    )


def _review_context(request: HttpRequest, campaign: Campaign, judgment: Any, **extra: Any) -> dict:
    """One of the annotator's own answered items, with the answer in the form to change."""
    return _annotate_context(
        request,
        campaign,
        None,
        review=judgment,
        locked=services.item_aggregated(judgment.campaign_item),
        revisions=selectors.judgment_revisions(judgment=judgment),
        posted=extra.pop("posted", None) or selectors.judgment_form_values(judgment=judgment),
        **extra,
    )


def _elsewhere(request: HttpRequest, url: str) -> HttpResponse:
    """To a page of the participation instead of the item page (a crowd participant's
    consent, or the end with their code): htmx follows it as a whole page."""
    if _htmx(request):
        response = HttpResponse(status=204)
        response["HX-Redirect"] = url
        return response
    return redirect(url)


def _go_on(
    request: HttpRequest, campaign: Campaign, *, lease: bool, answered_item: int | None = None
) -> HttpResponse:
    """After an answer, a skip or a change: the next item (leased when ``lease``, else
    the one in hand), as a fragment whose URL htmx pushes, or without JavaScript a
    redirect to that item's address (so Back returns to the item before, not a new one)."""
    refused = ""
    following: Assignment | None = None
    if lease:
        try:
            step = participation().next_step(user=request.user, campaign=campaign)
            if step is not None and step.redirect:
                return _elsewhere(request, step.redirect)
            if step is not None:
                following = step.assignment
            else:
                following = services.assignment_next(campaign=campaign, annotator=request.user)
        except services.AssignmentRefused as exc:
            refused = str(exc)
    else:
        following = selectors.assignment_current(campaign=campaign, annotator=request.user)
    url = _item_url(campaign, following.campaign_item_id if following is not None else None)
    if not _htmx(request):
        return redirect(url)
    context = (
        _annotate_context(
            request, campaign, following, refused=refused, answered_item=answered_item, lazy_recent=True
        )
        if lease or following is not None
        else _current_page(request, campaign, lazy_recent=True)
    )
    return push_url(_render_item(request, context), url)


@role_required(user_can_annotate, ANNOTATORS_ONLY)
def campaign_annotate(request: HttpRequest, name: str) -> HttpResponse:
    """The annotator's page. GET shows the item in hand, or a Start button: opening the
    page leases nothing (a link preview, a prefetch or a crawler would hold an item).
    ``?item=<id>`` shows one of the annotator's own items: the one in hand, or an answered
    one with its answer to change; another annotator's item is a 404.
    POST leases: ``start`` asks for the next item; an ``assignment`` with an answer submits
    it, then asks for the next one. htmx gets the item fragment (and the item's address
    to push); without JavaScript the answer is a redirect to the next item's address."""
    elsewhere = participation().elsewhere(user=request.user)
    if elsewhere:  # a crowd participant before the consent or after their part
        return _elsewhere(request, elsewhere)
    if request.method != "POST":
        campaign = selectors.campaign_get(user=request.user, name=name)
        item_id = _item_param(request)
        if item_id is None:
            return _render_item(request, _current_page(request, campaign))
        current = selectors.assignment_current(campaign=campaign, annotator=request.user)
        if current is not None and current.campaign_item_id == item_id:
            return _render_item(request, _current_page(request, campaign))
        judgment = selectors.judgment_own(campaign=campaign, annotator=request.user, item_id=item_id)
        if judgment is not None:
            return _render_item(request, _review_context(request, campaign, judgment))
        mine = selectors.assignment_of_item(campaign=campaign, annotator=request.user, item_id=item_id)
        if mine is None:
            raise Http404("No item of yours with this number in this campaign")
        note = (
            f"You skipped item {item_id}; it is not given to you again unless you reopen it (Skipped, below)."
            if mine.status == AssignmentStatus.SKIPPED
            else f"Item {item_id} is no longer held for you."
        )
        return _render_item(request, _current_page(request, campaign, note=note))
    answered_item: int | None = None
    if "assignment" in request.POST:
        # The annotator's own lease decides the campaign: an answer on an item in hand is
        # recorded even if the campaign was closed meanwhile.
        assignment = _own_assignment(request, name)
        campaign = assignment.campaign_item.campaign
        try:
            result = services.judgment_submit(
                annotator=request.user, assignment=assignment, **answer_from_post(request.POST)
            )
        except services.LeaseExpired as exc:
            messages.warning(request, str(exc))
        except services.JudgmentRefused as exc:
            context = _annotate_context(request, campaign, assignment, error=str(exc), posted=request.POST)
            return _render_item(request, context, status=200 if _htmx(request) else 400)
        else:
            if result.created:  # the latest answer now: Previous opens it
                answered_item = assignment.campaign_item_id
            if not result.created and result.judgment.answer != request.POST.get(
                "answer", result.judgment.answer
            ):
                # an old copy of the page (the browser's cache) sent an answer on an item
                # answered already: say that it was not changed, and how to change it
                messages.warning(
                    request,
                    f"You had answered item {assignment.campaign_item_id} already; that answer "
                    "was kept. To change it, open it with Previous (p).",
                )
    else:
        campaign = selectors.campaign_get(user=request.user, name=name)
    return _go_on(request, campaign, lease=True, answered_item=answered_item)


def _own_assignment(request: HttpRequest, name: str, field: str = "assignment") -> Assignment:
    """The annotator's own assignment named by a POST field, in this campaign (else 404)."""
    try:
        assignment = selectors.assignment_get(user=request.user, pk=int(request.POST.get(field, "0")))
    except ValueError:
        raise Http404("No such assignment") from None
    if assignment.campaign_item.campaign.name != name:
        raise Http404("No such assignment in this campaign")
    return assignment


@role_required(user_can_annotate, ANNOTATORS_ONLY)
def campaign_recent(request: HttpRequest, name: str) -> HttpResponse:
    """The annotator's own recent answers in a campaign, as the list the item page's fold
    fetches when opened (after an htmx answer the fold is filled on demand)."""
    campaign = selectors.campaign_get(user=request.user, name=name)
    context = {
        "campaign": campaign,
        "recent": selectors.judgment_recent(campaign=campaign, annotator=request.user),
    }
    return render(request, "annotation/campaign_annotate.html#recent-list", context)


@role_required(user_can_annotate, ANNOTATORS_ONLY)
@require_POST
def campaign_skip(request: HttpRequest, name: str) -> HttpResponse:
    """Give the item in hand back unanswered and go on with the next one."""
    assignment = _own_assignment(request, name, field="skip")
    campaign = assignment.campaign_item.campaign
    try:
        services.assignment_skip(annotator=request.user, assignment=assignment)
    except services.SkipRefused as exc:
        messages.warning(request, str(exc))
    else:
        messages.info(
            request,
            f"Item {assignment.campaign_item_id} skipped: it goes back to the others "
            "and is not given to you again in this campaign unless you reopen it (Skipped, below).",
        )
    return _go_on(request, campaign, lease=True)


@role_required(user_can_annotate, ANNOTATORS_ONLY)
@require_POST
def campaign_reopen(request: HttpRequest, name: str) -> HttpResponse:
    """Take back an item the annotator skipped: it becomes the item in hand (the one held
    before goes back to the pool), so a skip never strands an item."""
    assignment = _own_assignment(request, name, field="reopen")
    campaign = assignment.campaign_item.campaign
    try:
        services.assignment_reopen(annotator=request.user, assignment=assignment)
    except services.AssignmentRefused as exc:
        messages.warning(request, str(exc))
    except services.SkipRefused as exc:
        messages.warning(request, str(exc))
    else:
        messages.info(request, f"Item {assignment.campaign_item_id} reopened: it is yours to answer again.")
    return _go_on(request, campaign, lease=False)


@role_required(user_can_annotate, ANNOTATORS_ONLY)
@require_POST
def campaign_item_change(request: HttpRequest, name: str, item_id: int) -> HttpResponse:
    """Change the annotator's own answer on an item not yet aggregated, then return to
    the item in hand. A bad answer shows the item again with the reason; another
    annotator's item is a 404."""
    campaign = selectors.campaign_get(user=request.user, name=name)
    judgment = selectors.judgment_own(campaign=campaign, annotator=request.user, item_id=item_id)
    if judgment is None:
        raise Http404("No answer of yours on this item")
    fields = answer_from_post(request.POST)
    fields.pop("duration_ms", None)
    try:
        result = services.judgment_change(annotator=request.user, item=judgment.campaign_item, **fields)
    except services.JudgmentRefused as exc:
        context = _review_context(request, campaign, judgment, error=str(exc), posted=request.POST)
        return _render_item(request, context, status=200 if _htmx(request) else exc.status)
    if result.changed:
        messages.success(request, f"Your answer on item {item_id} was changed (the old one is kept).")
    else:
        messages.info(request, f"Your answer on item {item_id} was already this one; nothing changed.")
    return _go_on(request, campaign, lease=False)


# --- curator ---------------------------------------------------------------------------


@role_required(user_can_curate, CURATORS_ONLY)
def campaign_create(request: HttpRequest) -> HttpResponse:
    # a link (the import result's next step) may fill the form: ?items=&filters=
    initial = {key: request.GET[key] for key in ("items", "filters", "task") if request.GET.get(key)}
    form = CampaignCreateForm(request.POST or None, initial=initial, **selectors.campaign_item_choices())
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


@role_required(user_can_curate, CURATORS_ONLY)
def campaign_detail(request: HttpRequest, name: str) -> HttpResponse:
    campaign = selectors.campaign_get(user=request.user, name=name)
    if _adjudication_query(request.GET)[1] > 1:  # one page: any later one is past the last
        raise Http404(f"The page of {campaign.name} has no page {request.GET['page']}.")
    context = {
        "campaign": campaign,
        "spec": task_spec(campaign.task),
        "progress": selectors.campaign_progress(campaign=campaign),
        "annotators": selectors.campaign_annotators(campaign=campaign),
    }
    if _htmx(request) and request.GET.get("part") == "progress":
        return render(request, "annotation/campaign_detail.html#progress", context)
    return render(request, "annotation/campaign_detail.html", context)


def _adjudication_query(data: Any) -> tuple[str, int]:
    """The adjudication page's filter and page from a query (or the decision form's copy
    of it): an unknown filter is the default, a page that is not a number the first."""
    show = data.get("show", "")
    if show not in selectors.ADJUDICATION_FILTERS:
        show = next(iter(selectors.ADJUDICATION_FILTERS))
    try:
        page = max(1, int(data.get("page", "1")))
    except ValueError:
        page = 1
    return show, page


def _adjudication_url(campaign: Campaign, show: str, page: int) -> str:
    query = urlencode({"show": show, "page": str(page)})
    return f"{reverse('annotation:campaign-adjudicate', args=[campaign.name])}?{query}"


@role_required(user_can_curate, CURATORS_ONLY)
def campaign_adjudicate(request: HttpRequest, name: str) -> HttpResponse:
    """The curator's adjudication page: items with their full context and votes in words,
    most disagreement first, filtered (awaiting review by default) and paged."""
    campaign = selectors.campaign_get(user=request.user, name=name)
    show, page = _adjudication_query(request.GET)
    total = selectors.adjudication_count(campaign=campaign, show=show)
    # a page past the last one (however large the number) is not there: 404, not a query
    if page > 1 and (page - 1) * ITEMS_PER_PAGE >= total:
        raise Http404(
            f"The {selectors.ADJUDICATION_FILTERS[show]} list of {campaign.name} has no page {page}."
        )
    listing = selectors.adjudication_page(campaign=campaign, show=show, page=page, per_page=ITEMS_PER_PAGE)
    return render(
        request,
        "annotation/campaign_adjudicate.html",
        {
            "campaign": campaign,
            "spec": task_spec(campaign.task),
            "listing": listing,
            "show": show,
            "filters": selectors.ADJUDICATION_FILTERS,
            "progress": selectors.campaign_progress(campaign=campaign),
        },
    )


@role_required(user_can_curate, CURATORS_ONLY)
@require_POST
def annotator_pause(request: HttpRequest, name: str, user_id: int) -> HttpResponse:
    campaign = selectors.campaign_get(user=request.user, name=name)
    member = get_object_or_404(CampaignAnnotator, campaign=campaign, annotator_id=user_id)
    paused = request.POST.get("paused") == "1"
    services.campaign_annotator_pause(campaign=campaign, annotator=member.annotator, paused=paused)
    messages.success(request, f"{member.annotator.get_username()} {'paused' if paused else 'can go on'}.")
    return redirect("annotation:campaign-detail", name=campaign.name)


@role_required(user_can_curate, CURATORS_ONLY)
@require_POST
def item_adjudicate(request: HttpRequest, name: str, item_id: int) -> HttpResponse:
    """Record a decision and go back to the adjudication page with the same filter and page
    (the last page if the item was the only one left on its page)."""
    campaign = selectors.campaign_get(user=request.user, name=name)
    item = get_object_or_404(CampaignItem, campaign=campaign, pk=item_id)
    show, page = _adjudication_query(request.POST)
    try:
        result = services.adjudication_record(
            item=item,
            curator=request.user,
            decision=request.POST.get("decision", ""),
            note=request.POST.get("note", ""),
        )
    except services.AnnotationError as exc:
        messages.error(request, f"Item {item.pk}: {exc}")
    else:
        kind = task_type(campaign.task)
        decided = kind.decision_label(result.adjudication.decision)
        if result.applied:
            messages.success(
                request,
                f"Item {item.pk}: “{decided}” recorded beside its votes and applied now"
                + (f": the item's label is {kind.decision_label(result.label)}." if result.label else "."),
            )
        else:
            messages.success(
                request,
                f"Item {item.pk}: “{decided}” recorded beside its votes. The item has "
                f"{result.judgments} of {result.needed} judgments, so the decision takes effect "
                "when the campaign is aggregated after its last judgment.",
            )
    total = selectors.adjudication_count(campaign=campaign, show=show)
    last = max(1, -(-total // ITEMS_PER_PAGE))
    return redirect(_adjudication_url(campaign, show, min(page, last)))


@role_required(user_can_curate, CURATORS_ONLY)
@require_http_methods(["GET", "POST"])
def campaign_aggregate(request: HttpRequest, name: str) -> HttpResponse:
    """GET (or a POST without ``confirm``): what aggregating would do, counted and rolled
    back, with a Confirm button; POST with ``confirm``: aggregate."""
    campaign = selectors.campaign_get(user=request.user, name=name)
    if request.method == "GET" or not request.POST.get("confirm"):
        preview = services.campaign_aggregate(campaign=campaign, dry_run=True)
        return render(
            request,
            "annotation/campaign_aggregate.html",
            {
                "campaign": campaign,
                "spec": task_spec(campaign.task),
                "preview": preview,
                "outcomes": sorted(preview.labels.items()),
            },
        )
    summary = services.campaign_aggregate(campaign=campaign)
    labels = ", ".join(f"{k}: {v}" for k, v in sorted(summary.labels.items())) or "no labels"
    extra = ""
    if summary.extra.get("human_accuracy") is not None:
        extra = f" Human accuracy {summary.extra['human_accuracy']:.1%}."
    kept = ""
    if summary.labels_over_import:
        kept = (
            f" {summary.labels_over_import} of the {summary.labels_changed} labels written are on items "
            "an import labelled: the imported labels stay in place, the campaign's are kept beside them."
        )
    messages.success(
        request,
        f"Aggregated {summary.aggregated} items ({summary.pending} still need judgments); "
        f"{summary.changed} changed, {summary.created} created. {labels}.{extra}{kept}",
    )
    return redirect("annotation:campaign-detail", name=campaign.name)


@role_required(user_can_curate, CURATORS_ONLY)
def campaign_export(request: HttpRequest, name: str, fmt: str) -> StreamingHttpResponse:
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
