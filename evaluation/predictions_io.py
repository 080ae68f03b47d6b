"""Per-item prediction files of a run, and uploaded label files for WinoWhy and ComVE.

Pure Python (no Django). WSC uploads go through ``evaluation.lm.scorers.read_predictions``;
this module reads the simpler ``id -> value`` uploads of the other data sets: JSONL rows
``{"id": ..., "prediction": ...}`` or CSV ``id,prediction`` (with or without a header,
so a SemEval ``subtaskA_answers.csv`` works as is).
"""

import csv
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evaluation.lm.scorers.types import PredictionsFileError, predictions_jsonl, predictions_text


def read_label_predictions(path: str | Path) -> dict[str, str]:
    path = Path(path)
    text = predictions_text(path)
    out: dict[str, str] = {}
    rows: list[tuple[int, Any, Any]] = []
    if text.lstrip()[:1] == "{":
        for n, row in predictions_jsonl(text, path):
            if "prediction" not in row:
                raise PredictionsFileError(f"{path}, row {n}, field 'prediction': missing")
            rows.append((n, row.get("id"), row["prediction"]))
    else:
        for n, values in enumerate(csv.reader(text.splitlines()), start=1):
            if not values:
                continue
            if n == 1 and [v.strip().lower() for v in values[:2]] in (["id", "prediction"], ["id", "label"]):
                continue
            if len(values) < 2:
                raise PredictionsFileError(
                    f"{path}, row {n}, field 'prediction': missing (expected id,prediction)"
                )
            rows.append((n, values[0], values[1]))
    for n, item_id, value in rows:
        if item_id in (None, ""):
            raise PredictionsFileError(f"{path}, row {n}, field 'id': missing")
        key = str(item_id).strip()
        if key in out:
            raise PredictionsFileError(f"{path}, row {n}, field 'id': a second prediction for {key!r}")
        out[key] = str(value).strip()
    if not out:
        raise PredictionsFileError(f"{path}: no predictions")
    return out


def write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> int:
    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
            count += 1
    return count
