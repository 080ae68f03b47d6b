"""Your own items: new Winograd schemas, reasons and ComVE items from JSON Lines or CSV.

One file per import; its type (JSON Lines or CSV with a header row) is read from its
content. Unlike the public formats, which stop at the first problem, these parsers check
every row and report every problem (file, row, field, reason) at once, so that a curator
fixes a file in one pass. The fields are described in ``docs/formats.md`` ("Importing your
own items"), and template files are in ``static/import-templates/``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from datasets.importers.base import (
    DatasetImportError,
    SourceFile,
    collect_files,
    formula_error,
    load_json_lines,
    looks_like_json,
    read_csv_rows,
    read_source,
    sniff,
)
from datasets.importers.records import (
    ComVEData,
    ComVERecord,
    Origin,
    ReasonRowRecord,
    ReasonRowsData,
    SchemaRecord,
    WinoWhyData,
)

#: Most problems listed for one file; past that the message says how many more there are.
MAX_PROBLEMS = 200

ORIGINS = ("human", "reverse", "generated")
LABELS = ("positive", "acceptable", "negative")
KNOWLEDGE_TYPES = ("Property", "Object", "Eventuality", "Spatial", "Quantity", "Others")
_BRACKET = re.compile(r"\[([^\[\]]+)\]")


class Problems:
    """Every problem found in one file; raised together at the end."""

    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.found: list[DatasetImportError] = []

    def add(self, reason: str, *, row: int | None = None, field: str | None = None) -> None:
        self.found.append(self.source.error(reason, row=row, field=field))

    def formula(self, text: Any, *, row: int, field: str) -> bool:
        """Record a text that would start a spreadsheet formula (refused); True if it would."""
        error = formula_error(self.source, text, row=row, field=field)
        if error is not None:
            self.found.append(error)
        return error is not None

    def raise_any(self) -> None:
        if not self.found:
            return
        n = len(self.found)
        # in the file's order (a twin is checked after all rows are read)
        shown = sorted(self.found, key=lambda p: p.row or 0)[:MAX_PROBLEMS]
        more = f" ({n - len(shown)} more not listed)" if n > len(shown) else ""
        raise DatasetImportError(
            f"{n} problem{'s' if n != 1 else ''} found{more}; the first: {shown[0].message}",
            file=self.source.name,
            problems=shown,
        )


def read_rows(source: SourceFile) -> list[tuple[int, dict[str, Any]]]:
    """The file's rows as (row, {field: value}): JSON Lines objects, or CSV records keyed by
    the header row (header names stripped; empty cells are absent fields)."""
    if sniff(source.text) == "json":
        rows = load_json_lines(source)
        out: list[tuple[int, dict[str, Any]]] = []
        for row, value in rows:
            if not isinstance(value, dict):
                raise source.error(f"expected an object, found {type(value).__name__}", row=row)
            out.append((row, value))
        return out
    records = read_csv_rows(source)
    if not records:
        raise source.error("no header row", row=1)
    header = [name.strip() for name in records[0]]
    if len(set(header)) != len(header):
        twice = sorted({n for n in header if header.count(n) > 1})
        raise source.error(f"the header names {', '.join(twice)} twice", row=1)
    out = []
    for number, record in enumerate(records[1:], start=1):
        if not record or all(not cell.strip() for cell in record):
            continue
        if len(record) > len(header):
            raise source.error(f"{len(record)} cells, but the header has {len(header)} columns", row=number)
        out.append((number, {name: cell for name, cell in zip(header, record, strict=False) if cell.strip()}))
    return out


def _one_file(paths: list[Path], what: str) -> SourceFile:
    files = collect_files(paths)
    if len(files) != 1:
        raise DatasetImportError(
            f"expected one {what} file (JSON Lines or CSV), found {len(files)}",
            file=", ".join(f.name for f in files),
        )
    with files[0].open("rb") as handle:  # the first bytes tell how bad bytes are reported
        kind = "jsonl" if looks_like_json(handle.read(4096)) else "csv"
    return read_source(files[0], kind=kind)


def _open(paths: list[Path], what: str) -> tuple[SourceFile, list[tuple[int, dict[str, Any]]], Problems]:
    """The one file of an import, its rows, and the list its problems go to."""
    source = _one_file(paths, what)
    rows = read_rows(source)
    if sniff(source.text) != "json":  # errors name rows as a spreadsheet does: the header is row 1
        source = replace(source, header_rows=1)
    problems = Problems(source)
    if not rows:
        problems.add(f"no {what}", row=1)
    return source, rows, problems


def _identifier(problems: Problems, obj: dict[str, Any], row: int, seen: dict[str, int]) -> str:
    """The row's ``id``, '' when missing or already on an earlier row (both reported)."""
    identifier = _text(problems, obj, "id", row, max_length=64).strip()
    if identifier in seen:
        problems.add(
            f"id {identifier!r} is also on row {problems.source.sheet_row(seen[identifier])}",
            row=row,
            field="id",
        )
        return ""
    if identifier:
        seen[identifier] = row
    return identifier


def _text(
    problems: Problems, obj: dict[str, Any], key: str, row: int, *, required: bool = True, max_length: int = 0
) -> str:
    """A text field: a string (a JSON number is taken as its digits), '' when absent."""
    value = obj.get(key)
    if value is None or value == "":
        if required:
            problems.add("missing", row=row, field=key)
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int):
        problems.add(f"expected text, found {type(value).__name__} {value!r:.40}", row=row, field=key)
        return ""
    text = str(value)
    if not text.strip():
        if required:
            problems.add("empty", row=row, field=key)
        return ""
    if max_length and len(text) > max_length:
        problems.add(f"longer than {max_length} characters ({len(text)})", row=row, field=key)
    if problems.formula(text, row=row, field=key):
        return ""
    return text


def _unknown_fields(rows: list[tuple[int, dict[str, Any]]], known: set[str], name: str) -> list[str]:
    extra = sorted({k for _, obj in rows for k in obj} - known)
    return [f"{name}: fields not read: {', '.join(extra)}"] if extra else []


def _origin(source: SourceFile, row: int) -> Origin:
    return Origin(source_file=source.name, source_row=row, file_checksum=source.sha256)


SCHEMA_FIELDS = {
    "id",
    "sentence",
    "text_before",
    "pronoun",
    "text_after",
    "candidate_a",
    "candidate_b",
    "candidates",
    "answer",
    "twin",
    "source",
}


def _sentence(problems: Problems, obj: dict[str, Any], row: int) -> tuple[str, str, str] | None:
    """(text before, pronoun, text after) from ``sentence`` with the pronoun in [brackets],
    or from the three fields of a release's ``wsc.jsonl``."""
    if "sentence" in obj and not {"text_before", "pronoun", "text_after"} & set(obj):
        sentence = _text(problems, obj, "sentence", row)
        if not sentence:
            return None
        marks = _BRACKET.findall(sentence)
        if len(marks) != 1 or sentence.count("[") != 1 or sentence.count("]") != 1:
            problems.add(
                f"mark the pronoun with [brackets] exactly once (found {len(marks)} marked words): "
                f"{sentence!r:.80}",
                row=row,
                field="sentence",
            )
            return None
        before, pronoun, after = _BRACKET.split(sentence)
        # each part is a field of its own in a release's files
        if any([problems.formula(part.strip(), row=row, field="sentence") for part in (pronoun, after)]):
            return None
        return before.strip(), pronoun.strip(), after.strip()
    if "pronoun" in obj or "text_before" in obj:
        pronoun = _text(problems, obj, "pronoun", row, max_length=50)
        before = _text(problems, obj, "text_before", row, required=False)
        after = _text(problems, obj, "text_after", row, required=False)
        if pronoun and not (before.strip() or after.strip()):
            problems.add("text_before and text_after are both empty", row=row, field="text_before")
            return None
        return (before.strip(), pronoun.strip(), after.strip()) if pronoun else None
    problems.add("missing (the sentence with the pronoun in [brackets])", row=row, field="sentence")
    return None


def _candidates(problems: Problems, obj: dict[str, Any], row: int) -> tuple[str, str] | None:
    if "candidates" in obj and "candidate_a" not in obj:
        value = obj["candidates"]
        if not (
            isinstance(value, list)
            and len(value) == 2
            and all(isinstance(v, str) and v.strip() for v in value)
        ):
            problems.add("expected a list of two texts", row=row, field="candidates")
            return None
        if any([problems.formula(v, row=row, field="candidates") for v in value]):
            return None
        a, b = value
    else:
        a = _text(problems, obj, "candidate_a", row, max_length=255)
        b = _text(problems, obj, "candidate_b", row, max_length=255)
        if not (a and b):
            return None
    a, b = a.strip(), b.strip()
    if a.lower() == b.lower():
        problems.add(f"the two candidates are the same ({a!r})", row=row, field="candidate_b")
        return None
    return a, b


def _answer(problems: Problems, obj: dict[str, Any], row: int, candidates: tuple[str, str] | None) -> str:
    raw = _text(problems, obj, "answer", row)
    if not raw:
        return ""
    value = raw.strip()
    if value.upper() in ("A", "B"):
        return value.upper()
    if candidates:
        for letter, candidate in zip("AB", candidates, strict=True):
            if value.lower() == candidate.lower():
                return letter
    problems.add(f"expected A, B or one candidate's text, found {value!r:.40}", row=row, field="answer")
    return ""


def parse_schemas(paths: list[Path], options: dict[str, Any]) -> WinoWhyData:
    """New Winograd schemas: ``id``, ``sentence`` (pronoun in [brackets]), ``candidate_a``,
    ``candidate_b``, ``answer`` (A, B or a candidate's text), optional ``twin`` and ``source``."""
    source, rows, problems = _open(paths, "schemas")
    records: list[SchemaRecord] = []
    seen: dict[str, int] = {}
    twins: dict[str, tuple[str, int]] = {}
    for row, obj in rows:
        identifier = _identifier(problems, obj, row, seen)
        parts = _sentence(problems, obj, row)
        candidates = _candidates(problems, obj, row)
        answer = _answer(problems, obj, row, candidates)
        twin = _text(problems, obj, "twin", row, required=False, max_length=64).strip()
        if twin and twin == identifier:
            problems.add("a schema cannot be its own twin", row=row, field="twin")
        elif twin and identifier:
            twins[identifier] = (twin, row)
        src = _text(problems, obj, "source", row, required=False, max_length=255).strip()
        if identifier and parts and candidates and answer:
            records.append(
                SchemaRecord(
                    external_id=identifier,
                    text_before=parts[0],
                    pronoun=parts[1],
                    text_after=parts[2],
                    candidate_a=candidates[0],
                    candidate_b=candidates[1],
                    answer=answer,
                    source=src,
                    provenance=_origin(source, row),
                )
            )
    pairs: list[tuple[str, str]] = []
    for identifier, (twin, row) in twins.items():
        if twin not in seen:
            problems.add(f"names {twin!r}, which is not an id in this file", row=row, field="twin")
            continue
        back = twins.get(twin)
        if back is not None and back[0] != identifier:
            problems.add(
                f"names {twin!r}, whose own twin is {back[0]!r} (row {problems.source.sheet_row(back[1])})",
                row=row,
                field="twin",
            )
        elif identifier < twin or back is None:
            pairs.append((identifier, twin))
    named: dict[str, str] = {}
    for a, b in pairs:
        for one, other in ((a, b), (b, a)):
            if one in named:
                problems.add(
                    f"{one!r} would be the twin of both {named[one]!r} and {other!r}",
                    row=seen.get(other),
                    field="twin",
                )
            named[one] = other
    problems.raise_any()
    partner = named
    for record in records:
        record.twin_external_id = partner.get(record.external_id)
    files = [source.describe()]
    return WinoWhyData(
        schemas=records,
        twin_pairs=sorted(pairs),
        categories_given=False,
        files=files,
        warnings=_unknown_fields(rows, SCHEMA_FIELDS, source.name),
    )


REASON_FIELDS = {"schema", "text", "origin", "plausibility", "label", "knowledge_type"}


def reason_label(plausibility: float) -> str:
    """WinoWhy's rule (section 3): positive at >= 4 of 5 plausible votes, negative at <= 1."""
    if plausibility >= 0.8 - 1e-9:
        return "positive"
    if plausibility <= 0.2 + 1e-9:
        return "negative"
    return "acceptable"


def _choice(
    problems: Problems, obj: dict[str, Any], key: str, row: int, choices: tuple[str, ...], default: str = ""
) -> str:
    raw = _text(problems, obj, key, row, required=False).strip()
    if not raw:
        return default
    for choice in choices:
        if raw.lower() == choice.lower():
            return choice
    problems.add(f"expected one of {', '.join(choices)}, found {raw!r:.40}", row=row, field=key)
    return default


def _number(problems: Problems, obj: dict[str, Any], key: str, row: int) -> float | None:
    value = obj.get(key)
    if value is None or value == "":
        return None
    try:
        number = float(value) if not isinstance(value, bool) else None
    except (TypeError, ValueError):
        number = None
    if number is None or not 0.0 <= number <= 1.0:
        problems.add(f"expected a number from 0 to 1, found {value!r:.40}", row=row, field=key)
        return None
    return number


def parse_reasons(paths: list[Path], options: dict[str, Any]) -> ReasonRowsData:
    """Reasons for schemas already in the collection: ``schema`` (its id), ``text``, optional
    ``origin`` (human, reverse, generated; default human), ``plausibility`` (0..1),
    ``label`` (else from the plausibility by WinoWhy's rule) and ``knowledge_type``."""
    source, rows, problems = _open(paths, "reasons")
    records: list[ReasonRowRecord] = []
    seen: dict[tuple[str, str], int] = {}
    for row, obj in rows:
        schema = _text(problems, obj, "schema", row, max_length=64).strip()
        text = _text(problems, obj, "text", row)
        origin = _choice(problems, obj, "origin", row, ORIGINS, default="human")
        plausibility = _number(problems, obj, "plausibility", row)
        label = _choice(problems, obj, "label", row, LABELS)
        if not label and plausibility is not None:
            label = reason_label(plausibility)
        knowledge = _choice(problems, obj, "knowledge_type", row, KNOWLEDGE_TYPES)
        if schema and text:
            key = (schema, text)
            if key in seen:
                problems.add(
                    f"the same reason for schema {schema!r} is on row {problems.source.sheet_row(seen[key])}",
                    row=row,
                    field="text",
                )
                continue
            seen[key] = row
            records.append(
                ReasonRowRecord(
                    schema_external_id=schema,
                    text=text,
                    origin=origin,
                    plausibility=plausibility,
                    label=label,
                    knowledge_type=knowledge,
                    provenance=_origin(source, row),
                )
            )
    problems.raise_any()
    return ReasonRowsData(
        reasons=records,
        files=[source.describe()],
        warnings=_unknown_fields(rows, REASON_FIELDS, source.name),
    )


COMVE_FIELDS = {
    "id",
    "sent0",
    "sent1",
    "false_index",
    "false_sent",
    "option_a",
    "option_b",
    "option_c",
    "correct_option",
    "references",
    "ref1",
    "ref2",
    "ref3",
}


def _references(problems: Problems, obj: dict[str, Any], row: int) -> list[str]:
    if "references" in obj:
        value = obj["references"]
        if not (isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)):
            problems.add("expected a list of texts", row=row, field="references")
            return []
        if any([problems.formula(v, row=row, field="references") for v in value]):
            return []
        return list(value)
    return [
        text for key in ("ref1", "ref2", "ref3") if (text := _text(problems, obj, key, row, required=False))
    ]


def _comve_row(
    problems: Problems, obj: dict[str, Any], row: int, identifier: str, origin: Origin
) -> ComVERecord | None:
    given: Callable[[str], bool] = lambda key: obj.get(key) not in (None, "")  # noqa: E731
    record = ComVERecord(external_id=identifier, provenance=origin)
    before = len(problems.found)
    if any(given(k) for k in ("sent0", "sent1", "false_index")):
        record.statement_0 = _text(problems, obj, "sent0", row)
        record.statement_1 = _text(problems, obj, "sent1", row)
        raw = obj.get("false_index")
        if raw is None or raw == "":
            problems.add("missing (0 or 1: the statement against common sense)", row=row, field="false_index")
        elif str(raw).strip() not in ("0", "1") or isinstance(raw, bool):
            problems.add(f"expected 0 or 1, found {raw!r:.40}", row=row, field="false_index")
        else:
            record.false_index = int(str(raw).strip())
            record.has_a = True
    record.false_statement = _text(problems, obj, "false_sent", row, required=False)
    if not record.false_statement and record.false_index is not None:
        record.false_statement = (record.statement_0, record.statement_1)[record.false_index]
    if any(given(k) for k in ("option_a", "option_b", "option_c", "correct_option")):
        record.option_a = _text(problems, obj, "option_a", row)
        record.option_b = _text(problems, obj, "option_b", row)
        record.option_c = _text(problems, obj, "option_c", row)
        correct = _text(problems, obj, "correct_option", row).strip().upper()
        if correct and correct not in ("A", "B", "C"):
            problems.add(f"expected A, B or C, found {correct!r:.40}", row=row, field="correct_option")
        record.correct_option = correct if correct in ("A", "B", "C") else ""
        record.has_b = True
    record.references = _references(problems, obj, row)
    record.has_c = bool(record.references)
    if (record.has_b or record.has_c) and not record.false_statement:
        problems.add("missing (or give sent0, sent1 and false_index)", row=row, field="false_sent")
    if not any(given(k) for k in COMVE_FIELDS - {"id"}):
        problems.add(
            "no subtask's fields: give sent0/sent1/false_index (A), option_a..c/correct_option (B) "
            "or references (C)",
            row=row,
        )
    return record if len(problems.found) == before else None


def parse_comve_items(paths: list[Path], options: dict[str, Any]) -> ComVEData:
    """New ComVE items: ``id``; subtask A ``sent0``, ``sent1``, ``false_index`` (0/1, the
    statement against common sense); subtask B ``false_sent`` (default: that statement),
    ``option_a``..``option_c``, ``correct_option``; subtask C ``references`` (or ``ref1``..``ref3``)."""
    source, rows, problems = _open(paths, "ComVE items")
    items: list[ComVERecord] = []
    seen: dict[str, int] = {}
    for row, obj in rows:
        identifier = _identifier(problems, obj, row, seen)
        record = _comve_row(problems, obj, row, identifier, _origin(source, row))
        if record is not None and identifier:
            items.append(record)
    problems.raise_any()
    return ComVEData(
        dataset="comve",
        split=str(options.get("split") or "test"),
        items=items,
        files=[source.describe()],
        warnings=_unknown_fields(rows, COMVE_FIELDS, source.name),
        collection=str(options.get("collection") or ""),
    )
