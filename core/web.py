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

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template import loader

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
