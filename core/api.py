"""Domain errors as API responses: DRF's exception handler, extended by ``WinnowError``.

Set as ``REST_FRAMEWORK["EXCEPTION_HANDLER"]``. A ``WinnowError`` raised in an API view
answers ``{"detail": message}`` with the error's status, the shape DRF gives its own
errors (validation aside); everything else goes to DRF's handler unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django import forms
from django.core.exceptions import NON_FIELD_ERRORS
from django.db import transaction
from django.http import QueryDict
from rest_framework import parsers, serializers, status
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


Created = TypeVar("Created")


def form_create(
    request: Any,
    form: forms.Form,
    *,
    create: Callable[[], Created],
    refused: type[WinnowError],
    output: type[serializers.BaseSerializer],
    after_commit: Callable[[Created], object] | None = None,
) -> Response:
    """The API's side of a page's create form: the form validates (400 with its errors by
    field, 413 for a file over the upload limit), ``create`` calls the page's service,
    whose refusal goes on the form as the page shows it (the form's ``add_refusal``, else
    above the fields), ``after_commit`` sends the job once the row is committed; 201 with
    the new object (``output``, which has its page's ``url``) and that page as Location."""
    if form.is_valid():
        try:
            created = create()
        except refused as exc:
            add_refusal = getattr(form, "add_refusal", None)
            if add_refusal is not None:
                add_refusal(exc)
            else:
                form.add_error(None, exc.message)
        else:
            if after_commit is not None:
                transaction.on_commit(lambda: after_commit(created))
            body = output(created, context={"request": request}).data
            return Response(body, status=status.HTTP_201_CREATED, headers={"Location": body["url"]})
    too_large = bool(getattr(form, "too_large", False))
    code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE if too_large else status.HTTP_400_BAD_REQUEST
    return Response(form_errors(form), status=code)
