"""Sen-Making and Explanation pilot: ``dataset.jsonl``, one item per line
(``id``, ``sentence0``, ``sentence1``, ``false`` 0/1, options ``A``/``B``/``C``, ``reason`` A/B/C)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from datasets.importers.base import (
    DatasetImportError,
    collect_files,
    load_json_lines,
    looks_like_json,
    read_source,
    require,
)
from datasets.importers.comve import B_ANSWER_RE
from datasets.importers.records import ComVEData, ComVERecord, Origin


def parse_senmaking(paths: list[Path], options: dict[str, Any]) -> ComVEData:
    skipped: list[str] = []
    files = collect_files(paths, looks_right=looks_like_json, skipped=skipped)
    if len(files) != 1:
        raise DatasetImportError(
            f"expected one dataset.jsonl file, found {len(files)}", file=", ".join(f.name for f in files)
        )
    source = read_source(files[0], kind="jsonl")
    rows = load_json_lines(source)
    if not rows:
        raise source.error("no items", row=1)
    items: list[ComVERecord] = []
    seen: dict[str, int] = {}
    for row, obj in rows:
        if not isinstance(obj, dict):
            raise source.error(f"expected an object, found {type(obj).__name__}", row=row)
        raw_id = require(source, obj, "id", row=row, kind=(str, int))
        identifier = str(raw_id).strip()
        if not identifier:
            raise source.error("empty id", row=row, field="id")
        if identifier in seen:
            raise source.error(
                f"duplicate id {identifier!r} (also row {seen[identifier]})", row=row, field="id"
            )
        seen[identifier] = row
        # texts as written: a release ships the source's text
        statements = [require(source, obj, k, row=row, kind=str) for k in ("sentence0", "sentence1")]
        false = obj.get("false", None)
        if "false" not in obj:
            raise source.error("missing", row=row, field="false")
        if isinstance(false, bool) or false not in (0, 1, "0", "1"):
            raise source.error(f"unknown answer key {false!r} (expected 0 or 1)", row=row, field="false")
        false_index = int(false)
        options_ = [require(source, obj, k, row=row, kind=str) for k in ("A", "B", "C")]
        for key, text in zip(
            ("sentence0", "sentence1", "A", "B", "C"), (*statements, *options_), strict=True
        ):
            source.formula_check(text, row=row, field=key)
        raw_reason = require(source, obj, "reason", row=row, kind=str)
        match = B_ANSWER_RE.match(raw_reason)
        if match is None:
            raise source.error(
                f"unknown answer key {raw_reason!r} (expected A, B or C)", row=row, field="reason"
            )
        items.append(
            ComVERecord(
                external_id=identifier,
                provenance=Origin(source_file=source.name, source_row=row, file_checksum=source.sha256),
                statement_0=statements[0],
                statement_1=statements[1],
                false_index=false_index,
                false_statement=statements[false_index],
                option_a=options_[0],
                option_b=options_[1],
                option_c=options_[2],
                correct_option=match.group(1).upper(),
                has_a=True,
                has_b=True,
            )
        )
    return ComVEData(
        dataset=str(options.get("dataset") or "senmaking"),
        split=str(options.get("split") or "pilot"),
        items=items,
        files=[source.describe()],
        warnings=skipped,
    )
