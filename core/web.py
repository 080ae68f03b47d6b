"""Domain errors as pages: the one place a ``WinnowError`` raised in a view becomes a response.

A view calls a service and lets its refusal propagate; ``DomainErrorMiddleware`` answers
with the error page (``templates/error.html``) at the error's status, its message in
place of the page's content. An htmx request gets the message alone (the page's
``message`` partial) with status 200: htmx swaps only 2xx responses, so a 4xx fragment
would never reach the screen (the import page's error fragment does the same). The
error's status travels in the ``X-Winnow-Status`` header. Views that do something else
with an error (redisplay a form, flash a message and redirect) still catch it themselves.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from http import HTTPStatus

from django.conf import settings
from django.contrib import messages
from django.db import InterfaceError, OperationalError, transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template import loader
from django.views import defaults

from core.errors import WinnowError

ERROR_TEMPLATE = "error.html"
# The page titles beside the 403/404 pages' own ("Not allowed", "Not found").
TITLES = {400: "Cannot do that", 403: "Not allowed", 404: "Not found", 409: "Cannot do that now"}


def error_title(status: int) -> str:
    """A short title for an error page of this status."""
    if status in TITLES:
        return TITLES[status]
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


class DomainErrorMiddleware:
    """Renders a ``WinnowError`` from a view as a page (or an htmx fragment) with its message."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, WinnowError):
            return None  # Django's own handling: 403/404 pages, 500 with the traceback logged
        context = {
            "message": exception.message,
            "status": exception.status,
            "title": error_title(exception.status),
        }
        if getattr(request, "htmx", False):  # set by django_htmx's middleware
            response = render(request, ERROR_TEMPLATE + "#message", context)
        else:
            response = render(request, ERROR_TEMPLATE, context, status=exception.status)
        response["X-Winnow-Status"] = str(exception.status)
        return response


#: Winnow's Content-Security-Policy: everything from Winnow's own origin, no inline script
#: or style and no eval (htmx runs with allowEval and allowScriptTags off: base.html's
#: htmx-config), images also as data: URIs (Swagger UI's icons), no plugins, no framing.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
)


def content_security_policy() -> tuple[str, str]:
    """The header's name and value: report-only while ``WINNOW_CSP_REPORT_ONLY`` is on
    (browsers then report violations, to ``WINNOW_CSP_REPORT_URI`` if set, and block
    nothing)."""
    directives = list(CONTENT_SECURITY_POLICY)
    if settings.WINNOW_CSP_REPORT_URI:
        directives.append(f"report-uri {settings.WINNOW_CSP_REPORT_URI}")
    name = (
        "Content-Security-Policy-Report-Only"
        if settings.WINNOW_CSP_REPORT_ONLY
        else "Content-Security-Policy"
    )
    return name, "; ".join(directives)


class ContentSecurityPolicyMiddleware:
    """Sets the Content-Security-Policy on every response (pages, fragments, errors,
    static files), unless a view set its own."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        name, value = content_security_policy()
        if name not in response.headers:
            response.headers[name] = value
        return response


def server_error(request: HttpRequest) -> HttpResponse:
    """``handler500``: an unhandled error. When it is the database that cannot be reached
    (down, restarting, out of connections) the answer is a 503 page that says so and asks
    to retry, instead of a plain 500. Neither page touches the database."""
    error = sys.exc_info()[1]
    if isinstance(error, OperationalError | InterfaceError):
        response = HttpResponse(loader.get_template("503.html").render(), status=503)
        response["Retry-After"] = "30"
        return response
    return HttpResponse(loader.get_template("500.html").render(), status=500)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """``handler404``: under ``/api/`` a URL that names nothing is answered as the API
    answers a missing object, ``{"detail": "Not found."}`` in JSON (the schema documents
    it); elsewhere Django's 404 page."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)


def enqueue_after_commit(request: HttpRequest, label: str, send: Callable[[], bool]) -> None:
    """Send a job once its row is committed (at once outside a transaction) and tell the
    user: "LABEL queued.", or, when the broker refused it (``send`` returned False and
    marked the job failed), that it could not be queued and its page says why."""
    sent: list[bool] = []
    transaction.on_commit(lambda: sent.append(send()))
    if sent == [False]:
        messages.error(request, f"{label} could not be queued: see below.")
    else:
        messages.success(request, f"{label} queued.")


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """``CSRF_FAILURE_VIEW``: the form was sent without a valid CSRF token (an expired
    session, a page open since before a log-in elsewhere, cookies blocked). A page in
    Winnow's layout that says what happened and what to do, with status 403. Two headers
    tell static/js/htmx-errors.js what it was: ``X-Winnow-Failure: csrf``, and
    ``X-Winnow-Sign-In: required`` when the user is signed out (the page then goes to
    the sign-in page instead of saying to reload)."""
    context = {"title": "This form has expired", "reason": reason}
    response = HttpResponse(loader.get_template("csrf_failure.html").render(context, request), status=403)
    response["X-Winnow-Failure"] = "csrf"
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        response["X-Winnow-Sign-In"] = "required"
    return response
