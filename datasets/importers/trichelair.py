"""Trichelair et al.: ``WSC_switched_label.json`` and ``WSC_associative_label.json``.

Each is a JSON array of rows with an ``index`` and a ``sentence`` with the pronoun in
[brackets]; the files are told apart by content (``is_switchable`` vs ``is_associative``)
and joined on ``index``. The rows are matched to schemas by text in the import service.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from datasets.importers.base import (
    DatasetImportError,
    SourceFile,
    clean,
    collect_files,
    load_json_array,
    looks_like_json,
    read_source,
    require,
)
from datasets.importers.records import TrichelairData, TrichelairRecord

BRACKET_RE = re.compile(r"^(?P<before>[^\[\]]*)\[(?P<pronoun>[^\[\]]+)\](?P<after>[^\[\]]*)$", re.DOTALL)
KINDS = {"is_switchable": "switched", "is_associative": "associative"}


def split_sentence(source: SourceFile, row: int, sentence: str, field: str) -> tuple[str, str, str]:
    match = BRACKET_RE.match(sentence)
    if not match:
        raise source.error("expected exactly one [pronoun] in brackets in the sentence", row=row, field=field)
    for part in (sentence, match["pronoun"], match["after"]):
        source.formula_check(part, row=row, field=field)
    return clean(match["before"]), clean(match["pronoun"]), clean(match["after"])


def _flag(source: SourceFile, row: int, obj: dict[str, Any], key: str) -> bool:
    if key not in obj:
        raise source.error("missing", row=row, field=key)
    value = obj[key]
    if value in (0, 1) and not isinstance(value, float):
        return bool(value)
    raise source.error(f"expected 0 or 1, found {value!r:.40}", row=row, field=key)


def _read(source: SourceFile) -> tuple[str, dict[int, tuple[int, dict[str, Any]]]]:
    rows = load_json_array(source)
    if not rows:
        raise source.error("the array of rows is empty", row=1)
    kind = None
    first = rows[0][1]
    if isinstance(first, dict):
        for key, name in KINDS.items():
            if key in first:
                kind = name
    if kind is None:
        raise source.error(
            "not a Trichelair label file: the first row has neither 'is_switchable' nor 'is_associative'",
            row=1,
        )
    by_index: dict[int, tuple[int, dict[str, Any]]] = {}
    for row, obj in rows:
        if not isinstance(obj, dict):
            raise source.error(f"expected an object, found {type(obj).__name__}", row=row)
        index = require(source, obj, "index", row=row, kind=int)
        if index in by_index:
            raise source.error(
                f"duplicate index {index} (also row {by_index[index][0]})", row=row, field="index"
            )
        require(source, obj, "sentence", row=row, kind=str)
        by_index[index] = (row, obj)
    return kind, by_index


def parse_trichelair(paths: list[Path], options: dict[str, Any]) -> TrichelairData:
    files: dict[str, tuple[SourceFile, dict[int, tuple[int, dict[str, Any]]]]] = {}
    skipped: list[str] = []
    for path in collect_files(paths, looks_right=looks_like_json, skipped=skipped):
        source = read_source(path, kind="json")
        kind, rows = _read(source)
        if kind in files:
            raise source.error(f"a second {kind} label file (the first was {files[kind][0].name})")
        files[kind] = (source, rows)
    if not files:
        raise DatasetImportError("no Trichelair label files given")
    switched = files.get("switched")
    associative = files.get("associative")
    if switched and associative:
        for this, other in ((switched, associative), (associative, switched)):
            for index, (row, _) in this[1].items():
                if index not in other[1]:
                    raise this[0].error(f"index {index} is not in {other[0].name}", row=row, field="index")
    primary = switched or associative
    assert primary is not None
    records: list[TrichelairRecord] = []
    warnings: list[str] = list(skipped)
    for index in sorted(primary[1]):
        row, obj = primary[1][index]
        source = primary[0]
        before, pronoun, after = split_sentence(source, row, obj["sentence"], "sentence")
        record = TrichelairRecord(
            index=index,
            before=before,
            pronoun=pronoun,
            after=after,
            alternative=None,
            switched_text=None,
            switchable=None,
            associative=None,
            file=source.name,
            row=row,
        )
        for key in ("answer0", "answer1", "correct_answer"):
            source.formula_check(obj.get(key), row=row, field=key)
        if isinstance(obj.get("answer0"), str) and isinstance(obj.get("answer1"), str):
            record.candidates = (clean(obj["answer0"]), clean(obj["answer1"]))
        if isinstance(obj.get("correct_answer"), str):
            record.correct = clean(obj["correct_answer"])
        if switched:
            s_row, s_obj = switched[1][index]
            record.switchable = _flag(switched[0], s_row, s_obj, "is_switchable")
            text = require(switched[0], s_obj, "sentence_switched", row=s_row, kind=str)
            switched[0].formula_check(text, row=s_row, field="sentence_switched")
            if record.switchable:
                split_sentence(switched[0], s_row, text, "sentence_switched")
            record.switched_text = clean(text)
        if associative:
            a_row, a_obj = associative[1][index]
            record.associative = _flag(associative[0], a_row, a_obj, "is_associative")
            if switched:
                sentence = split_sentence(associative[0], a_row, a_obj["sentence"], "sentence")
                if sentence != (before, pronoun, after):
                    record.alternative = sentence
                    warnings.append(
                        f"{source.name} row {row} field 'sentence' differs from {associative[0].name} "
                        f"row {a_row} (index {index}); the schema is matched by either sentence"
                    )
        records.append(record)
    described = [f[0].describe() for f in files.values()]
    return TrichelairData(rows=records, files=described, warnings=warnings)
