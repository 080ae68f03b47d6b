"""Domain errors as API responses: DRF's exception handler, extended by ``WinnowError``.

Set as ``REST_FRAMEWORK["EXCEPTION_HANDLER"]``. A ``WinnowError`` raised in an API view
answers ``{"detail": message}`` with the error's status, the shape DRF gives its own
errors (validation aside); everything else goes to DRF's handler unchanged.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import NON_FIELD_ERRORS
from django.http import QueryDict
from rest_framework import parsers
from rest_framework.exceptions import ParseError
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from core.errors import WinnowError
from core.jsonl import TOO_DEEP


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, WinnowError):
        set_rollback()  # as DRF does for the errors it handles (ATOMIC_REQUESTS)
        return Response({"detail": exc.message}, status=exc.status)
    return drf_exception_handler(exc, context)


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, with a body nested deeper than the parser's recursion limit
    answered as a 400 like any malformed JSON (DRF lets the RecursionError through: a 500)."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(f"JSON parse error - {TOO_DEEP}") from None


def form_errors(form: forms.BaseForm) -> dict[str, list[str]]:
    """A page's form errors as an API's 400 body: the same words, keyed by the field they
    concern (DRF's ``non_field_errors`` for the form's own), as DRF's serializers answer."""
    return {
        api_settings.NON_FIELD_ERRORS_KEY if field == NON_FIELD_ERRORS else field: [str(m) for m in messages]
        for field, messages in form.errors.items()
    }


def form_input(form_class: type[forms.Form], data: Any) -> Any:
    """A request's fields for a page's form, over the values the form starts with: a field
    the caller leaves out takes the value the page shows in it (the campaign form's lease
    of 600 s, a run's seed 0), as a browser would send it. Sent empty, it stays empty."""
    merged: Any
    if isinstance(data, QueryDict):
        merged = QueryDict(mutable=True)
        for key in data:
            merged.setlist(key, data.getlist(key))
    else:
        merged = dict(data)
    for name, field in form_class.base_fields.items():
        if name not in merged and field.initial is not None and not callable(field.initial):
            merged[name] = field.initial
    return merged
