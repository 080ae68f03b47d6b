"""Downloads of the tables pages show: one DataFrame as CSV or JSON (``core.tables``).

A page's table and its download come from the same frame. CSV: a header row and one row
per table row. JSON: ``{**meta, "columns": [...], "rows": [{column: value}, ...]}`` with
``null`` for missing values. Both are attachments named ``<stem>.<fmt>``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from django.http import Http404, HttpResponse, JsonResponse

from core.tables import frame_csv, frame_records

FORMATS = ("csv", "json")


def json_download(filename: str, data: Any) -> HttpResponse:
    response = JsonResponse(data, safe=False, json_dumps_params={"indent": 2, "allow_nan": False})
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def csv_download(filename: str, text: str) -> HttpResponse:
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def table_download(
    frame: pd.DataFrame, *, stem: str, fmt: str, meta: dict[str, Any] | None = None, index: bool = False
) -> HttpResponse:
    """``frame`` as ``<stem>.csv`` or ``<stem>.json``; another format is a 404."""
    if fmt not in FORMATS:
        raise Http404("unknown format: csv or json")
    if fmt == "csv":
        return csv_download(f"{stem}.csv", frame_csv(frame, index=index))
    table = frame.reset_index() if index else frame
    body = {**(meta or {}), "columns": [str(c) for c in table.columns], "rows": frame_records(table)}
    return json_download(f"{stem}.json", body)
