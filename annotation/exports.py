"""Judgment exports as JSONL and CSV. No Django here.

CSV cells that a spreadsheet would read as a formula (``core.formulas``: starting with = + - @,
their full-width forms, or a tab / carriage return) get a leading apostrophe; JSONL keeps the
text exactly as written."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from core.formulas import formula_start


def csv_safe(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict | list):
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    elif isinstance(value, bool):
        text = "true" if value else "false"
    else:
        text = str(value)
    if formula_start(text):
        return "'" + text
    return text


def csv_lines(rows: Iterable[dict[str, Any]], fields: Sequence[str]) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(fields)
    for row in rows:
        writer.writerow([csv_safe(row.get(f)) for f in fields])
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    rest = buffer.getvalue()
    if rest:
        yield rest


def jsonl_lines(rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    for row in rows:
        yield json.dumps(row, ensure_ascii=False, sort_keys=False) + "\n"
