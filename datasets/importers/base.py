"""Reading source files safely: bytes -> checked UTF-8 text -> JSON / JSON Lines / CSV rows.

No Django imports: the parsers are plain functions over files, tested on their own.
A file's type is decided by its content (DESIGN 10: never trust a file's name for its type).
Every problem becomes a :class:`DatasetImportError` naming the file, the row and the field.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import WinnowError
from core.formulas import formula_refusal
from core.jsonl import JsonLinesError, last_key, loads, raw_decode, read_jsonl


class DatasetImportError(WinnowError):
    """A source file could not be imported; nothing was written.

    ``problems`` lists every problem of a file when a parser checks all rows before it
    stops (the formats for a curator's own items do); the message then names the first.
    ``row`` is 1-based over data rows (a CSV header is not counted; for a JSON array the
    n-th element; for JSON Lines the n-th line). ``line`` is a physical line of the file,
    given when the problem is below the level of rows (bad bytes, broken JSON). The message
    counts rows as a spreadsheet shows them (``sheet_row``): a CSV file's header is its row
    1 (``header_rows``), so its first data row is row 2.
    """

    status = 400

    def __init__(
        self,
        reason: str,
        *,
        file: str | None = None,
        row: int | None = None,
        field: str | None = None,
        line: int | None = None,
        problems: list[DatasetImportError] | None = None,
        header_rows: int = 0,
    ) -> None:
        self.header_rows = header_rows
        self.file = file
        self.problems = list(problems or [])
        self.row = row
        self.field = field
        self.line = line
        self.reason = reason
        super().__init__(self.message)

    @property
    def sheet_row(self) -> int | None:
        """The row as a spreadsheet numbers it (a CSV header is row 1)."""
        return None if self.row is None else self.row + self.header_rows

    @property
    def message(self) -> str:
        where = []
        if self.file:
            where.append(self.file)
        if self.row is not None:
            where.append(f"row {self.sheet_row}")
        if self.line is not None:
            where.append(f"(line {self.line})" if self.row is not None else f"line {self.line}")
        if self.field:
            where.append(f"field '{self.field}'")
        return f"{' '.join(where)}: {self.reason}" if where else self.reason

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "row": self.row,
            "sheet_row": self.sheet_row,
            "field": self.field,
            "line": self.line,
            "reason": self.reason,
            **({"problems": [p.as_dict() for p in self.problems]} if self.problems else {}),
        }


# The name the project's conventions and the brief use for the same error.
ImportError_ = DatasetImportError


@dataclass(frozen=True)
class SourceFile:
    """A file read into memory: its name (never a path: that is where it happened to be),
    its SHA-256 and its decoded text."""

    path: Path
    name: str
    sha256: str
    size: int
    text: str
    #: rows above the data (a CSV header: 1), for the spreadsheet row numbers of its errors
    header_rows: int = 0

    def error(
        self, reason: str, *, row: int | None = None, field: str | None = None, line: int | None = None
    ) -> DatasetImportError:
        return DatasetImportError(
            reason, file=self.name, row=row, field=field, line=line, header_rows=self.header_rows
        )

    def sheet_row(self, row: int) -> int:
        """A data row as a spreadsheet numbers it."""
        return row + self.header_rows

    def formula_check(self, text: Any, *, row: int | None, field: str) -> None:
        """Refuse a text cell that a spreadsheet would run as a formula (:func:`formula_error`)."""
        error = formula_error(self, text, row=row, field=field)
        if error is not None:
            raise error

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "path": str(self.path), "sha256": self.sha256, "size": self.size}


def formula_error(source: SourceFile, text: Any, *, row: int | None, field: str) -> DatasetImportError | None:
    """The one check every importer runs on every text cell it reads (``core.formulas``): a
    text starting with = + - @ (or a full-width form, a tab, a carriage return) is refused
    with its file, row and field; None for any other value. No public data set Winnow reads
    has such a text (tests/datasets/test_import_realdata.py), so refusing costs them nothing."""
    if not isinstance(text, str):
        return None
    reason = formula_refusal(text)
    return source.error(reason, row=row, field=field) if reason else None


def read_source(path: Path, *, kind: str = "json") -> SourceFile:
    """Read ``path`` as strict UTF-8 (a BOM is dropped). ``kind`` (json, jsonl, csv) only
    shapes the error for bad bytes, which names the row and field they fall in."""
    path = Path(path)
    name = path.name
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DatasetImportError("file not found", file=name) from None
    except IsADirectoryError:
        raise DatasetImportError("is a folder, expected a file", file=name) from None
    digest = hashlib.sha256(raw).hexdigest()
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if not raw.strip():
        raise DatasetImportError("file is empty", file=name, row=1)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        prefix = raw[: exc.start].decode("utf-8", errors="replace")
        line = prefix.count("\n") + 1
        bad = raw[exc.start : exc.start + 1].hex()
        row, field = _locate(prefix, kind)
        raise DatasetImportError(
            f"not UTF-8 text: byte 0x{bad} at offset {exc.start} (save the file as UTF-8)",
            file=name,
            row=row,
            field=field,
            line=line,
        ) from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise DatasetImportError("binary data (NUL byte), expected text", file=name, line=line)
    return SourceFile(path=path, name=name, sha256=digest, size=len(raw), text=text)


def _locate(prefix: str, kind: str) -> tuple[int | None, str | None]:
    """Where in the rows a position falls, given the text before it."""
    if kind == "csv":
        rows = list(csv.reader(io.StringIO(prefix, newline="")))
        if not rows:
            return None, None
        header = rows[0]
        row = len(rows) - 1  # data rows; the header is not counted
        column = len(rows[-1]) - 1
        field = header[column] if 0 <= column < len(header) else f"column {column + 1}"
        return (row if row > 0 else None), field
    if kind == "csv-noheader":
        rows = list(csv.reader(io.StringIO(prefix, newline="")))
        if not rows:
            return None, None
        return len(rows), f"column {max(len(rows[-1]), 1)}"
    if kind == "jsonl":
        lines = prefix.split("\n")
        return len(lines), last_key(lines[-1])
    # a JSON array: count the complete elements before the position
    element, start = _array_position(prefix)
    return element, (last_key(prefix[start:]) if element else None)


def _array_position(prefix: str) -> tuple[int | None, int]:
    """(1-based element the end of ``prefix`` falls in, where that element starts)."""
    decoder = json.JSONDecoder()
    i = _skip_ws(prefix, 0)
    if i >= len(prefix) or prefix[i] != "[":
        return None, 0
    i += 1
    n = 0
    while True:
        i = _skip_ws(prefix, i)
        start = i
        try:
            _, i = raw_decode(decoder, prefix, i)
        except json.JSONDecodeError:
            return n + 1, start
        n += 1
        i = _skip_ws(prefix, i)
        if i < len(prefix) and prefix[i] == ",":
            i += 1
        else:
            return n + 1, i


_WS = " \t\n\r"


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def sniff(text: str) -> str:
    """'json' if the text starts like JSON (an object or array), else 'text'."""
    stripped = text.lstrip()
    return "json" if stripped[:1] in ("[", "{") else "text"


def load_json_document(source: SourceFile) -> Any:
    """A whole JSON document (used for small objects such as cat_ref.json)."""
    if sniff(source.text) != "json":
        raise source.error("not JSON (expected an object or an array; is this a CSV or text file?)", row=1)
    try:
        return loads(source.text)
    except json.JSONDecodeError as exc:
        raise source.error(f"invalid JSON: {exc.msg} at column {exc.colno}", line=exc.lineno) from None


def load_json_array(source: SourceFile) -> list[tuple[int, Any]]:
    """The elements of a top-level JSON array as (row, value), row 1-based.

    Parsed element by element so that a broken or truncated file names the row it breaks in.
    """
    text = source.text
    if sniff(text) != "json":
        raise source.error("not JSON (expected an array; is this a CSV or text file?)", row=1)
    decoder = json.JSONDecoder()
    i = _skip_ws(text, 0)
    if text[i] != "[":
        raise source.error("expected a JSON array of rows, found an object", row=1)
    i += 1
    out: list[tuple[int, Any]] = []
    while True:
        i = _skip_ws(text, i)
        if i < len(text) and text[i] == "]" and not out:
            i += 1
            break
        start = i
        row = len(out) + 1
        try:
            value, i = raw_decode(decoder, text, i)
        except json.JSONDecodeError as exc:
            field = last_key(text[start : exc.pos])
            truncated = exc.pos >= len(text.rstrip()) or not text.rstrip().endswith("]")
            reason = (
                "invalid JSON: "
                + exc.msg
                + (" (the file ends in the middle of it: truncated?)" if truncated else "")
            )
            raise source.error(reason, row=row, field=field, line=exc.lineno) from None
        out.append((row, value))
        i = _skip_ws(text, i)
        if i < len(text) and text[i] == ",":
            i += 1
            continue
        if i < len(text) and text[i] == "]":
            i += 1
            break
        line = text[:i].count("\n") + 1
        if i >= len(text):
            raise source.error("the JSON array is not closed (truncated file?)", row=row + 1, line=line)
        raise source.error(f"expected ',' or ']' after row {row}", row=row + 1, line=line)
    if text[i:].strip():
        raise source.error("unexpected data after the end of the JSON array", line=text[:i].count("\n") + 1)
    return out


def load_json_lines(source: SourceFile) -> list[tuple[int, Any]]:
    """JSON Lines: one JSON value per non-blank line, as (line number, value)."""
    text = source.text
    if text.lstrip().startswith("["):
        rows = load_json_array(source)
        return rows
    if sniff(text) != "json":
        raise source.error("not JSON Lines (each line should be a JSON object; is this a CSV file?)", row=1)
    try:
        return list(read_jsonl(text.split("\n"), name=source.name))
    except JsonLinesError as exc:
        raise source.error(exc.reason, row=exc.row, field=exc.field) from None


def read_csv_rows(source: SourceFile) -> list[list[str]]:
    """All CSV records (header included if any)."""
    if sniff(source.text) == "json":
        raise source.error("this is JSON, expected a CSV file", row=1)
    try:
        return list(csv.reader(io.StringIO(source.text, newline=""), strict=True))
    except csv.Error as exc:
        raise source.error(f"not valid CSV: {exc}") from None


def iter_records(rows: list[list[str]], start: int = 1) -> Iterator[tuple[int, list[str]]]:
    """Numbered non-blank CSV records."""
    for number, record in enumerate(rows, start=start):
        if not record or (len(record) == 1 and not record[0].strip()):
            continue
        yield number, record


def require(
    source: SourceFile, obj: dict[str, Any], key: str, *, row: int, kind: type | tuple[type, ...]
) -> Any:
    """``obj[key]``, checked to be present and of the expected type."""
    if key not in obj:
        raise source.error("missing", row=row, field=key)
    value = obj[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind in (int, float, (int, float))):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise source.error(
            f"expected {names}, found {type(value).__name__} {value!r:.40}", row=row, field=key
        )
    return value


def clean(text: str) -> str:
    """Collapse runs of whitespace and strip: the form items are stored in."""
    return " ".join(text.split())


def looks_like_json(head: bytes) -> bool:
    return head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"[", b"{")


def looks_like_csv(head: bytes) -> bool:
    first = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]
    return b"," in first and not looks_like_json(head)


def collect_files(
    paths: list[Path], *, looks_right: Callable[[bytes], bool] | None = None, skipped: list[str] | None = None
) -> list[Path]:
    """Files given directly, plus the files directly inside given folders (sorted, hidden
    skipped). A file found in a folder whose first bytes do not look like the format
    (``looks_right``), such as a README beside the data, is left out and named in ``skipped``;
    a file given directly is always read (and fails loudly if it is not the format)."""
    files: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            for f in sorted(p.iterdir()):
                if not f.is_file() or f.name.startswith("."):
                    continue
                if looks_right is not None:
                    with f.open("rb") as handle:
                        head = handle.read(4096)
                    if head.strip() and not looks_right(head):
                        if skipped is not None:
                            skipped.append(f"{f.name}: skipped, not a data file of this format")
                        continue
                files.append(f)
        elif p.exists():
            files.append(p)
        else:
            raise DatasetImportError("no such file or folder", file=str(p))
    if not files:
        reason = "no files of this format to import"
        if skipped:
            reason += " (" + "; ".join(skipped) + ")"
        raise DatasetImportError(reason, file=", ".join(str(p) for p in paths) or None)
    return files
