"""ComVE (SemEval-2020 Task 4): one split's data and answer files for subtasks A, B, C.

Files are told apart by content, not name: data files have a header (``id,sent0,sent1``;
``id,FalseSent,OptionA,OptionB,OptionC``; ``id,FalseSent``), answer files have none
(``id,0|1``; ``id,A|B|C``; ``id,ref1,ref2,ref3``). Only the split (train/dev/test/trial),
which no content can tell, comes from the file names (or ``--split``).
Items are joined by ``id`` across all six files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from datasets.importers.base import (
    DatasetImportError,
    SourceFile,
    clean,
    collect_files,
    iter_records,
    looks_like_csv,
    read_csv_rows,
    read_source,
)
from datasets.importers.records import ComVEData, ComVERecord, Origin

HEADERS = {
    "a_data": ["id", "sent0", "sent1"],
    "b_data": ["id", "falsesent", "optiona", "optionb", "optionc"],
    "c_data": ["id", "falsesent"],
}
DISPLAY_HEADERS = {
    "a_data": "id,sent0,sent1",
    "b_data": "id,FalseSent,OptionA,OptionB,OptionC",
    "c_data": "id,FalseSent",
}
KIND_NAMES = {
    "a_data": "subtask A data",
    "b_data": "subtask B data",
    "c_data": "subtask C data",
    "a_answers": "subtask A answers",
    "b_answers": "subtask B answers",
    "c_answers": "subtask C references",
}
ANSWERS_FOR = {"a_data": "a_answers", "b_data": "b_answers", "c_data": "c_answers"}
SPLITS = ("train", "dev", "test", "trial")
A_ANSWER_RE = re.compile(r"^\s*([01])\s*$")
B_ANSWER_RE = re.compile(r"^\s*([ABC])\s*\.?\s*$", re.IGNORECASE)


@dataclass
class CsvFile:
    source: SourceFile
    kind: str
    header: list[str] | None
    records: list[tuple[int, list[str]]]  # (row, cells); row 1-based, header excluded


def _classify(source: SourceFile) -> CsvFile:
    rows = read_csv_rows(source)
    numbered = list(iter_records(rows))
    if not numbered:
        raise source.error("file is empty", row=1)
    first_line, first = numbered[0]
    head = [c.strip().lower() for c in first]
    if head and head[0] == "id":
        kind = _kind_from_header(source, head, first)
        body = [(n - first_line, r) for n, r in numbered[1:]]
        if not body:
            raise source.error("the file has a header but no rows", row=1)
        # errors name rows as a spreadsheet does: the header is row 1
        return CsvFile(source=replace(source, header_rows=1), kind=kind, header=first, records=body)
    body = [(n, r) for n, r in numbered]
    width = len(first)
    if width >= 3:
        kind = "c_answers"
    elif width == 2:
        values = [r[1].strip() for _, r in body if len(r) > 1]
        digits = sum(1 for v in values if v in ("0", "1"))
        letters = sum(1 for v in values if B_ANSWER_RE.match(v))
        if digits == letters:
            raise source.error(
                "cannot tell whether this answers file is for subtask A (0/1) or B (A/B/C)",
                row=1,
                field="column 2",
            )
        kind = "a_answers" if digits > letters else "b_answers"
    else:
        raise source.error(
            "not a ComVE file: no header starting with 'id' and fewer than two columns",
            row=1,
            field="column 2",
        )
    return CsvFile(source=source, kind=kind, header=None, records=body)


def _kind_from_header(source: SourceFile, head: list[str], raw: list[str]) -> str:
    for kind, expected in HEADERS.items():
        if head == expected:
            return kind
    # A known header with columns missing, extra or misspelled: say which.
    if any(c.startswith("sent") for c in head):
        kind = "a_data"
    elif any(c.startswith("option") for c in head):
        kind = "b_data"
    elif "falsesent" in head:
        kind = "c_data"
    else:
        raise source.error(
            f"unknown header {','.join(raw)!r}; expected one of: " + "; ".join(DISPLAY_HEADERS.values()),
            row=0,
        )
    expected = HEADERS[kind]
    missing = [c for c in expected if c not in head]
    extra = [raw[i] for i, c in enumerate(head) if c not in expected]
    display = dict(zip(expected, DISPLAY_HEADERS[kind].split(","), strict=True))
    if missing:
        raise source.error(
            f"missing column in the {KIND_NAMES[kind]} header (expected {DISPLAY_HEADERS[kind]})",
            row=0,
            field=display[missing[0]],
        )
    if extra:
        raise source.error(f"unexpected column (expected {DISPLAY_HEADERS[kind]})", row=0, field=extra[0])
    raise source.error(f"columns out of order (expected {DISPLAY_HEADERS[kind]})", row=0)


def _detect_split(paths: list[Path], files: list[Path], options: dict[str, Any]) -> str:
    if options.get("split"):
        split = str(options["split"])
        if split not in SPLITS:
            raise DatasetImportError(f"unknown split {split!r} (expected one of {', '.join(SPLITS)})")
        return split
    found = set()
    for f in files:
        name = f.name.lower()
        if "_data_all" in name or "_answers_all" in name:
            found.add("train")
        elif "_dev_data" in name:
            found.add("dev")
        elif "_test_data" in name:
            found.add("test")
        elif "trial" in name:
            found.add("trial")
    if not found:
        found = {p.name.lower() for p in paths if Path(p).is_dir() and p.name.lower() in SPLITS}
    if len(found) != 1:
        raise DatasetImportError(
            "cannot tell the split from the file names"
            + (f" (they suggest {', '.join(sorted(found))})" if found else "")
            + "; give it with --split train|dev|test|trial",
            file=", ".join(f.name for f in files),
        )
    return found.pop()


def _ids(csv_file: CsvFile) -> dict[str, tuple[int, list[str]]]:
    width = len(HEADERS[csv_file.kind]) if csv_file.header is not None else None
    out: dict[str, tuple[int, list[str]]] = {}
    for row, cells in csv_file.records:
        if width is not None and len(cells) != width:
            header = DISPLAY_HEADERS[csv_file.kind].split(",")
            if len(cells) < width:
                raise csv_file.source.error(
                    f"missing value: the row has {len(cells)} columns, the header {width}",
                    row=row,
                    field=header[len(cells)],
                )
            raise csv_file.source.error(
                f"the row has {len(cells)} columns, the header {width} (unquoted comma?)", row=row
            )
        identifier = cells[0].strip()
        if not identifier:
            raise csv_file.source.error("empty id", row=row, field="id")
        if identifier in out:
            raise csv_file.source.error(
                f"duplicate id {identifier!r} (also row {csv_file.source.sheet_row(out[identifier][0])})",
                row=row,
                field="id",
            )
        out[identifier] = (row, cells)
    return out


def parse_comve(paths: list[Path], options: dict[str, Any]) -> ComVEData:
    skipped: list[str] = []
    files = collect_files(paths, looks_right=looks_like_csv, skipped=skipped)
    split = _detect_split(paths, files, options)
    dataset = str(options.get("dataset") or "comve")
    by_kind: dict[str, CsvFile] = {}
    for path in files:
        csv_file = _classify(read_source(path, kind="csv"))
        if csv_file.kind in by_kind:
            raise csv_file.source.error(
                f"a second {KIND_NAMES[csv_file.kind]} file (the first was {by_kind[csv_file.kind].source.name})"
            )
        by_kind[csv_file.kind] = csv_file
    if not any(k in by_kind for k in ("a_data", "b_data", "c_data")):
        raise DatasetImportError(
            "no ComVE data file (a CSV with header id,sent0,sent1 or id,FalseSent,...)",
            file=", ".join(f.name for f in files),
        )
    ids = {kind: _ids(f) for kind, f in by_kind.items()}
    # Every answers file must match its data file id for id.
    for data_kind, answers_kind in ANSWERS_FOR.items():
        if answers_kind in by_kind and data_kind not in by_kind:
            raise by_kind[answers_kind].source.error(
                f"{KIND_NAMES[answers_kind]} without the {KIND_NAMES[data_kind]} file", row=1
            )
        if data_kind in by_kind and answers_kind in by_kind:
            data, answers = ids[data_kind], ids[answers_kind]
            for identifier, (row, _) in answers.items():
                if identifier not in data:
                    raise by_kind[answers_kind].source.error(
                        f"id {identifier!r} is not in the data file {by_kind[data_kind].source.name}",
                        row=row,
                        field="id",
                    )
            for identifier, (row, _) in data.items():
                if identifier not in answers:
                    raise by_kind[data_kind].source.error(
                        f"no answer for id {identifier!r} in {by_kind[answers_kind].source.name}",
                        row=row,
                        field="id",
                    )

    items: dict[str, ComVERecord] = {}

    def item(identifier: str, kind: str, row: int) -> ComVERecord:
        if identifier not in items:
            source = by_kind[kind].source
            items[identifier] = ComVERecord(
                external_id=identifier,
                provenance=Origin(source_file=source.name, source_row=row, file_checksum=source.sha256),
            )
        return items[identifier]

    for kind in ("a_data", "b_data", "c_data"):
        for identifier, (row, cells) in ids.get(kind, {}).items():
            record = item(identifier, kind, row)
            csv_file = by_kind[kind]
            for column, cell in enumerate(cells[1:], start=1):
                header = csv_file.header or []
                name = header[column].strip() if column < len(header) else f"column {column + 1}"
                csv_file.source.formula_check(cell, row=row, field=name)
            # Texts are kept as the source's cells, byte for byte: whitespace is normalised
            # (clean) only where two texts are compared, never in what is stored.
            if kind == "a_data":
                record.statement_0, record.statement_1 = cells[1], cells[2]
                record.has_a = True
            elif kind == "b_data":
                record.false_statement = cells[1]
                record.option_a, record.option_b, record.option_c = cells[2:5]
                record.has_b = True
            else:
                if not record.false_statement:
                    record.false_statement = cells[1]
                elif cells[1] != record.false_statement:
                    record.false_statement_c = cells[1]  # each subtask's file keeps its own text
                record.has_c = True
    warnings: list[str] = list(skipped)
    if "a_answers" in by_kind:
        source = by_kind["a_answers"].source
        for identifier, (row, cells) in ids["a_answers"].items():
            match = A_ANSWER_RE.match(cells[1]) if len(cells) == 2 else None
            if match is None:
                raise source.error(
                    f"unknown answer key {cells[1] if len(cells) > 1 else ''!r} (expected 0 or 1)"
                    if len(cells) == 2
                    else f"expected 2 columns (id, answer), found {len(cells)}",
                    row=row,
                    field="answer",
                )
            items[identifier].false_index = int(match.group(1))
    if "b_answers" in by_kind:
        source = by_kind["b_answers"].source
        for identifier, (row, cells) in ids["b_answers"].items():
            match = B_ANSWER_RE.match(cells[1]) if len(cells) == 2 else None
            if match is None:
                raise source.error(
                    f"unknown answer key {cells[1] if len(cells) > 1 else ''!r} (expected A, B or C)"
                    if len(cells) == 2
                    else f"expected 2 columns (id, answer), found {len(cells)}",
                    row=row,
                    field="answer",
                )
            items[identifier].correct_option = match.group(1).upper()
    if "c_answers" in by_kind:
        source = by_kind["c_answers"].source
        for identifier, (row, cells) in ids["c_answers"].items():
            if len(cells) > 4:
                raise source.error(
                    f"expected at most 4 columns (id and three references), found {len(cells)}",
                    row=row,
                    field="ref4",
                )
            for column, cell in enumerate(cells[1:], start=1):
                source.formula_check(cell, row=row, field=f"ref{column}")
            refs = [c for c in cells[1:] if c.strip()]
            if not refs:
                raise source.error("no reference explanation", row=row, field="ref1")
            items[identifier].references = refs
    for record in items.values():
        if not record.false_statement and record.false_index is not None:
            record.false_statement = (record.statement_0, record.statement_1)[record.false_index]
        elif record.has_a and record.false_index is not None and record.false_statement:
            expected = (record.statement_0, record.statement_1)[record.false_index]
            if clean(expected) != clean(record.false_statement):
                warnings.append(
                    f"id {record.external_id}: FalseSent {record.false_statement!r:.60} is not "
                    f"sent{record.false_index} {expected!r:.60}"
                )
        if record.has_b and record.correct_option:
            option = {"A": record.option_a, "B": record.option_b, "C": record.option_c}[record.correct_option]
            if not option:
                warnings.append(f"id {record.external_id}: the right option {record.correct_option} is empty")
    if "b_data" in ids and "c_data" in ids:
        c_source = by_kind["c_data"].source
        for identifier, (row, cells) in ids["c_data"].items():
            if identifier in ids["b_data"] and clean(cells[1]) != clean(items[identifier].false_statement):
                warnings.append(
                    f"{c_source.name} row {row} field 'FalseSent' differs from the subtask B data; "
                    "each subtask keeps its own text"
                )
    return ComVEData(
        dataset=dataset,
        split=split,
        items=list(items.values()),
        files=[f.source.describe() | {"kind": f.kind} for f in by_kind.values()],
        warnings=warnings,
    )
