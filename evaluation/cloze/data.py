"""ComVE subtask-A pairs from a release's ``comve_a.jsonl`` or from a raw ComVE split folder.

A release file has one JSON object per line with the two statements (``sent0``/``sent1``,
or a two-element ``statements`` list) and the index of the statement against common
sense (``false_index``, ``label`` or ``answer``). A raw split folder holds
``subtaskA_*data*.csv`` (``id,sent0,sent1``) and ``subtaskA_*answer*.csv`` (``id,index``,
no header), as in SemEval-2020 Task 4.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from core.errors import WinnowError
from core.jsonl import JsonLinesError, read_jsonl
from evaluation.cloze.experiments import Pair, Statement


class PairFileError(WinnowError, ValueError):
    """A pair file that cannot be read; the message names file, row and field."""

    status = 400


def _false_index(value: Any, where: str) -> int:
    text = str(value).strip()
    if text not in {"0", "1"}:
        raise PairFileError(f"{where}: the false-statement index must be 0 or 1, got {value!r}")
    return int(text)


def read_release_pairs(path: Path) -> list[Pair]:
    pairs: list[Pair] = []
    try:
        rows = list(read_jsonl(path, objects=True))
    except JsonLinesError as exc:
        raise PairFileError(str(exc)) from exc
    for line_no, row in rows:
        where = f"{path}, row {line_no}"
        if "sent0" in row and "sent1" in row:
            sents = [row["sent0"], row["sent1"]]
        elif isinstance(row.get("statements"), list) and len(row["statements"]) == 2:
            sents = row["statements"]
        else:
            raise PairFileError(f"{where}: field sent0/sent1 (or statements) missing")
        if not all(isinstance(s, str) and s.strip() for s in sents):
            raise PairFileError(f"{where}: field sent0/sent1: empty or not text")
        key = next((name for name in ("false_index", "label", "answer") if name in row), None)
        if key is None:
            raise PairFileError(f"{where}: field false_index (or label/answer) missing")
        pairs.append(
            Pair(
                str(row.get("id", line_no)),
                sents[0],
                sents[1],
                _false_index(row[key], f"{where}, field {key}"),
            )
        )
    return pairs


def read_split_folder(folder: Path) -> list[Pair]:
    data_files = sorted(p for p in folder.glob("*A*data*.csv"))
    answer_files = sorted(p for p in folder.glob("*A*answer*.csv"))
    if len(data_files) != 1 or len(answer_files) != 1:
        raise PairFileError(
            f"{folder}: expected one subtask-A data file and one answer file "
            f"(found {len(data_files)} and {len(answer_files)})"
        )
    answers: dict[str, int] = {}
    with answer_files[0].open(encoding="utf-8", newline="") as handle:
        for row_no, row in enumerate(csv.reader(handle), start=1):
            if not row:
                continue
            if len(row) < 2:
                raise PairFileError(f"{answer_files[0]}, row {row_no}: id and answer expected")
            answers[row[0].strip()] = _false_index(row[1], f"{answer_files[0]}, row {row_no}, answer")
    pairs = []
    with data_files[0].open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = {"id", "sent0", "sent1"} - set(reader.fieldnames or [])
        if missing:
            raise PairFileError(f"{data_files[0]}: header lacks {', '.join(sorted(missing))}")
        for row_no, fields in enumerate(reader, start=2):
            record: dict[str, str] = dict(fields)
            key = (record["id"] or "").strip()
            if key not in answers:
                raise PairFileError(f"{data_files[0]}, row {row_no}: id {key!r} has no answer")
            if not (record["sent0"] or "").strip() or not (record["sent1"] or "").strip():
                raise PairFileError(f"{data_files[0]}, row {row_no}: field sent0/sent1 is empty")
            pairs.append(Pair(key, record["sent0"], record["sent1"], answers[key]))
    return pairs


def read_pairs(path: str | Path) -> list[Pair]:
    """Pairs from a ``comve_a.jsonl`` file, a folder holding one, or a raw split folder."""
    path = Path(path)
    if path.is_file():
        return read_release_pairs(path)
    if path.is_dir():
        if (path / "comve_a.jsonl").is_file():
            return read_release_pairs(path / "comve_a.jsonl")
        return read_split_folder(path)
    raise PairFileError(f"{path}: no such file or folder")


def statements_of(pairs: list[Pair]) -> list[Statement]:
    """Both statements of every pair, in order, each marked sensible or not."""
    result = []
    for pair in pairs:
        result.append(Statement(f"{pair.id}/0", pair.sent0, pair.false_index != 0))
        result.append(Statement(f"{pair.id}/1", pair.sent1, pair.false_index != 1))
    return result
