"""Study pages: a participant's entry through a platform's link, the consent, the end with
the completion code; and the curator's page of a campaign's study links."""

from __future__ import annotations

import csv
import io

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation import selectors
from annotation.crowd import selectors as crowd_selectors
from annotation.crowd.forms import DecisionForm, StudyLinkForm
from annotation.crowd.platforms import (
    PLATFORMS,
    StudyEntryError,
    mturk_submit_url,
    platform_spec,
    prolific_completion_url,
)
from annotation.crowd.selectors import participant_code
from annotation.crowd.services import (
    FINISHED,
    StudyLinkRefused,
    StudyLinkReplayed,
    batch_complete,
    entry_allowed,
    participant_consent,
    participant_enter,
    participant_finish,
    participant_of,
    study_link_close,
    study_link_create,
    study_link_get,
    study_link_path,
    study_link_token,
)
from annotation.errors import AnnotationError
from annotation.exports import csv_safe
from annotation.models import Campaign, Participant, ParticipantState, PaymentDecision, Platform, StudyLink
from annotation.permissions import user_can_curate
from core.auth import client_address
from core.errors import Forbidden

BACKEND = "django.contrib.auth.backends.ModelBackend"
#: The browser's secret of a participant (signed, HttpOnly), one cookie per link, sent only
#: to the link's own pages.
BINDING_COOKIE = "winnow_study_{pk}"
BINDING_SALT = "winnow.study-secret"
SECRET_DAYS = 90


def _refused(
    request: HttpRequest, error: AnnotationError, participant: Participant | None = None
) -> HttpResponse:
    context = {
        "title": getattr(error, "title", "This study link cannot be used"),
        "message": error.message,
        "participant": participant,
        **(_completion(participant) if participant else {}),
    }
    return render(request, "annotation/study_refused.html", context, status=error.status)


def _completion(participant: Participant) -> dict[str, object]:
    """How a participant whose part is over goes back to their platform, with the code
    their part earned: the completion code for a finished batch, the partial (or return)
    code for who ended early, the return code for who did not pass the screening."""
    link = participant.link
    ids = participant.platform_ids or {}
    code = participant_code(participant)
    prolific = link.platform == Platform.PROLIFIC and bool(code)
    return {
        "code": code,
        "done": participant.state == ParticipantState.DONE,
        "ended_early": participant.state == ParticipantState.ENDED_EARLY,
        "screened_out": participant.state == ParticipantState.SCREENED_OUT,
        "platform": platform_spec(link.platform),
        "prolific_url": prolific_completion_url(code) if prolific else "",
        "mturk_url": mturk_submit_url(ids.get("turkSubmitTo", "")) if link.platform == Platform.MTURK else "",
        "assignment_id": ids.get("assignmentId", ""),
    }


def _secret(request: HttpRequest, link: StudyLink) -> str:
    """The participant's secret this browser holds for ``link`` ("" for none)."""
    value = request.get_signed_cookie(BINDING_COOKIE.format(pk=link.pk), default="", salt=BINDING_SALT)
    return str(value or "")


def _keep_secret(response: HttpResponse, link: StudyLink, secret: str) -> None:
    response.set_signed_cookie(
        BINDING_COOKIE.format(pk=link.pk),
        secret,
        salt=BINDING_SALT,
        max_age=SECRET_DAYS * 86400,
        path=reverse("study:enter", args=[study_link_token(link)]),
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )


def _signed_in_elsewise(request: HttpRequest) -> str:
    """The name of an account signed in here that is not a study participant ("" for
    none): entering would replace it, which is never done silently."""
    if request.user.is_authenticated and participant_of(request.user) is None:
        return request.user.get_username()
    return ""


@require_http_methods(["GET", "POST"])
def study_enter(request: HttpRequest, token: str) -> HttpResponse:
    """Where a platform sends a participant. GET: the landing page (the link checked, the
    id read; nobody is created or signed in, so another site linking here changes nothing).
    POST (the landing page's button, with its CSRF token): create or resume the
    participant of this browser and sign them in, then the consent (first time) or their
    work (later). An account that is not a participant is never replaced."""
    if request.method == "POST" and not entry_allowed(client_address(request)):
        return _refused(
            request,
            StudyLinkRefused(
                "too many entries from your address in the last minute: wait a minute, then open the link again",
                status=429,
                title="Too many entries",
            ),
        )
    try:
        link = study_link_get(token)
        spec = platform_spec(link.platform)
        params = request.GET.dict()
        if spec.previewing(params):
            return render(request, "annotation/study_preview.html", {"link": link, "campaign": link.campaign})
        external_id = spec.external_id(params)
    except (StudyLinkRefused, StudyEntryError) as error:
        return _refused(request, error)
    signed_in_as = _signed_in_elsewise(request)
    if request.method == "GET" or signed_in_as:
        context = {
            "link": link,
            "campaign": link.campaign,
            "platform": spec,
            "external_id": external_id,
            "signed_in_as": signed_in_as,
            "back": _secret(request, link) != "",
        }
        return render(
            request, "annotation/study_landing.html", context, status=409 if request.method == "POST" else 200
        )
    try:
        entry = participant_enter(link=link, params=params, secret=_secret(request, link))
    except StudyLinkReplayed as error:
        return _refused(request, error, participant=error.participant)
    except (StudyLinkRefused, StudyEntryError) as error:
        return _refused(request, error)
    if request.user.pk != entry.participant.user_id:
        # (signed in already as this participant, e.g. the link opened in a second tab: a
        # new sign-in would rotate the CSRF token under the first tab's form)
        login(request, entry.participant.user, backend=BACKEND)
    response = _next(entry.participant, token)
    if entry.secret:
        _keep_secret(response, link, entry.secret)
    return response


def _next(participant: Participant, token: str) -> HttpResponse:
    if participant.state == ParticipantState.CONSENT:
        return redirect("study:consent", token=token)
    if participant.state in FINISHED:
        return redirect("study:done", token=token)
    return redirect("annotation:campaign-annotate", name=participant.link.campaign.name)


def _own_participant(request: HttpRequest, token: str) -> tuple[StudyLink, Participant]:
    """The link of ``token`` and the signed-in participant, who must be one of its own."""
    link = study_link_get(token, entered=True)
    participant = participant_of(request.user)
    if participant is None or participant.link_id != link.pk:
        raise Forbidden("open the study from your platform's link: this page belongs to its participants")
    return link, participant


@require_http_methods(["GET", "POST"])
def study_consent(request: HttpRequest, token: str) -> HttpResponse:
    try:
        link, participant = _own_participant(request, token)
    except StudyLinkRefused as error:
        return _refused(request, error)
    if request.method == "POST" and participant.state == ParticipantState.CONSENT:
        if request.POST.get("agree") != "yes":
            return render(
                request,
                "annotation/study_consent.html",
                {
                    "link": link,
                    "campaign": link.campaign,
                    "token": token,
                    "error": "Tick “I agree” to take part, or close this page.",
                },
                status=400,
            )
        participant_consent(participant=participant)
        return redirect("annotation:campaign-annotate", name=link.campaign.name)
    if participant.state != ParticipantState.CONSENT:
        return _next(participant, token)
    return render(
        request, "annotation/study_consent.html", {"link": link, "campaign": link.campaign, "token": token}
    )


@require_http_methods(["GET", "POST"])
def study_finish(request: HttpRequest, token: str) -> HttpResponse:
    """Ending the study. Whatever is posted, the code follows the participant's state:
    the completion code only for a finished batch; before that, ending is a confirmed
    action (``confirm=yes``; GET or a POST without it shows what ending now means) that
    keeps what was answered and gives the partial (or return) code."""
    try:
        link, participant = _own_participant(request, token)
    except StudyLinkRefused as error:
        return _refused(request, error)
    if participant.state in FINISHED or batch_complete(participant):
        participant_finish(participant=participant)
        return redirect("study:done", token=token)
    if request.method == "POST" and request.POST.get("confirm") == "yes":
        participant_finish(participant=participant)
        return redirect("study:done", token=token)
    context = {
        "link": link,
        "campaign": link.campaign,
        "participant": participant,
        "token": token,
        "code": link.partial_code or link.return_code,
        "platform": platform_spec(link.platform),
    }
    return render(
        request, "annotation/study_finish.html", context, status=200 if request.method == "GET" else 400
    )


@require_GET
def study_done(request: HttpRequest, token: str) -> HttpResponse:
    participant = participant_of(request.user)
    if participant is None:
        raise Forbidden("open the study from your platform's link: this page belongs to its participants")
    if participant.state not in FINISHED:
        return _next(participant, token)
    return render(
        request, "annotation/study_done.html", {"participant": participant, **_completion(participant)}
    )


# --- curator -----------------------------------------------------------------------------


def pasted_url(request: HttpRequest, link: StudyLink) -> str:
    """The link as the curator pastes it: the query as is, so that Prolific's
    ``{{%PROLIFIC_PID%}}`` placeholders stay placeholders (not percent-encoded)."""
    path, _, query = study_link_path(link).partition("?")
    return request.build_absolute_uri(path) + (f"?{query}" if query else "")


@login_required
@require_http_methods(["GET", "POST"])
def study_links(request: HttpRequest, name: str) -> HttpResponse:
    if not user_can_curate(request.user):
        raise Forbidden("Study links are for curators.")
    campaign = selectors.campaign_get(user=request.user, name=name)
    form = StudyLinkForm(request.POST or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                link = study_link_create(campaign=campaign, **form.service_kwargs(), user=request.user)
            except AnnotationError as error:
                form.add_refusal(error)
            else:
                messages.success(
                    request,
                    f"Study link #{link.pk} opened: paste it into {platform_spec(link.platform).title}.",
                )
                return redirect("crowd:links", name=campaign.name)
        status = 400
    links = [
        {
            "link": link,
            "url": pasted_url(request, link),
            "where": PLATFORMS[link.platform].where,
        }
        for link in crowd_selectors.study_links_counted(campaign=campaign)
    ]
    return render(
        request,
        "annotation/study_links.html",
        {"campaign": campaign, "form": form, "links": links},
        status=status,
    )


@login_required
@require_POST
def study_link_close_view(request: HttpRequest, name: str, link_id: int) -> HttpResponse:
    if not user_can_curate(request.user):
        raise Forbidden("Study links are for curators.")
    campaign = selectors.campaign_get(user=request.user, name=name)
    link = get_object_or_404(StudyLink, pk=link_id, campaign=campaign)
    study_link_close(link=link, user=request.user)
    messages.success(request, f"Study link #{link.pk} closed: no new participants.")
    return redirect("crowd:links", name=campaign.name)


@login_required
@require_http_methods(["GET", "POST"])
def study_participants(request: HttpRequest, name: str) -> HttpResponse:
    """The campaign's participants: quality figures, the curator's approve/reject and
    bonus, and the payment report's downloads."""
    if not user_can_curate(request.user):
        raise Forbidden("The participants' page is for curators.")
    campaign = selectors.campaign_get(user=request.user, name=name)
    status = 200
    if request.method == "POST":
        form = DecisionForm(request.POST)
        if form.is_valid():
            participant = get_object_or_404(
                Participant, pk=form.cleaned_data["participant"], link__campaign=campaign
            )
            if form.decide(participant=participant, user=request.user):
                messages.success(request, f"{participant.external_id}: {participant.get_decision_display()}.")
                return redirect("crowd:participants", name=campaign.name)
            status = 400
        if form.errors:
            messages.error(
                request,
                "Decision: "
                + "; ".join(f"{k}: {' '.join(str(e) for e in v)}" for k, v in form.errors.items()),
            )
            status = 400
    rows = crowd_selectors.participant_rows(campaign=campaign)
    context = {
        "campaign": campaign,
        "rows": rows,
        "kinds": crowd_selectors.REPORT_KINDS,
        "decisions": PaymentDecision.choices,
    }
    return render(request, "annotation/study_participants.html", context, status=status)


def payment_report_response(campaign: Campaign, kind: str) -> HttpResponse:
    """A payment report as the CSV (or, for Prolific's approve box, text) download the
    participants' page and the API serve."""
    if kind not in crowd_selectors.REPORT_KINDS:
        raise Http404(f"no report {kind!r}: one of {', '.join(crowd_selectors.REPORT_KINDS)}")
    header, rows = crowd_selectors.payment_report(campaign=campaign, kind=kind)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if header:
        writer.writerow(header)
    writer.writerows([[csv_safe(cell) for cell in row] for row in rows])
    extension = "txt" if kind == "prolific-approve" else "csv"
    response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{campaign.name}-{kind}.{extension}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


@login_required
@require_GET
def study_payment_report(request: HttpRequest, name: str, kind: str) -> HttpResponse:
    if not user_can_curate(request.user):
        raise Forbidden("The payment report is for curators.")
    return payment_report_response(selectors.campaign_get(user=request.user, name=name), kind)
