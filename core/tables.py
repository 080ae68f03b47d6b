"""Tables as files: a pandas DataFrame written as CSV or as JSON-ready records. No Django.

Every table Winnow shows is a DataFrame (``evaluation.analysis``, the agreement tables);
its downloads come from these two functions, so the CSV, the JSON and the page hold the
same cells. Missing values (NaN, ``pd.NA``, None) become an empty CSV cell and JSON
``null`` (never ``NaN``, which is not JSON); numpy numbers become Python numbers; lists and
tuples in a cell (e.g. a run's scores) become JSON lists, written as JSON text in a CSV cell.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd


def cell(value: Any) -> Any:
    """One cell as a plain JSON value (None for every kind of missing)."""
    if isinstance(value, list | tuple | np.ndarray):
        return [cell(v) for v in value]
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def frame_records(frame: pd.DataFrame, *, index: bool = False) -> list[dict[str, Any]]:
    """The rows as JSON-ready dicts, columns in order (the index first when ``index``)."""
    table = frame.reset_index() if index else frame
    columns = [str(c) for c in table.columns]
    return [
        dict(zip(columns, (cell(v) for v in row), strict=True))
        for row in table.itertuples(index=False, name=None)
    ]


def frame_csv(frame: pd.DataFrame, *, index: bool = False) -> str:
    """The table as CSV text with a header row (``\\n`` line ends)."""
    records = frame_records(frame, index=index)
    columns = [str(c) for c in (frame.reset_index() if index else frame).columns]
    return records_csv(columns, records)


def records_csv(columns: Sequence[str], records: Sequence[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for record in records:
        writer.writerow({k: _csv_cell(v) for k, v in record.items()})
    return buffer.getvalue()


def _csv_cell(value: Any) -> Any:
    value = cell(value)
    if value is None:
        return ""
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    return value
