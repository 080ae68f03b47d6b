"""core.tables: a DataFrame as CSV and JSON records, missing values and numpy types included."""

import csv
import io
import json

import numpy as np
import pandas as pd

from core.tables import cell, frame_csv, frame_records


def _frame() -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "name": ["a, b", 'c"d'],
            "n": [3, None],
            "share": [0.5, np.nan],
            "flag": [True, None],
            "scores": [(-1.5, 2.0), None],
        },
        index=pd.Index(["x", "y"], name="key"),
    )
    return frame.astype({"name": "str", "n": "Int64", "flag": "boolean"})


def test_records_are_plain_json_with_null_for_every_missing_value():
    records = frame_records(_frame(), index=True)
    assert records == [
        {"key": "x", "name": "a, b", "n": 3, "share": 0.5, "flag": True, "scores": [-1.5, 2.0]},
        {"key": "y", "name": 'c"d', "n": None, "share": None, "flag": None, "scores": None},
    ]
    assert json.loads(json.dumps(records, allow_nan=False)) == records
    assert [type(v) for v in records[0].values()] == [str, str, int, float, bool, list]


def test_csv_has_a_header_empty_cells_for_missing_values_and_json_lists():
    text = frame_csv(_frame(), index=True)
    rows = list(csv.reader(io.StringIO(text)))
    assert rows == [
        ["key", "name", "n", "share", "flag", "scores"],
        ["x", "a, b", "3", "0.5", "True", "[-1.5, 2.0]"],
        ["y", 'c"d', "", "", "", ""],
    ]
    assert frame_csv(_frame()).splitlines()[0] == "name,n,share,flag,scores"  # without the index


def test_cells_of_every_kind():
    assert cell(np.int64(4)) == 4 and type(cell(np.int64(4))) is int
    assert cell(float("inf")) is None and cell(pd.NaT) is None
    assert cell(np.array([1, 2])) == [1, 2]
