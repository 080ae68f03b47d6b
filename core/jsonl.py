"""The one JSON-Lines reader: numbered rows, blank lines skipped, one error type. No Django.

``read_jsonl(path_or_lines, name=...)`` yields ``(row, value)`` with ``row`` the 1-based
line number in the file (blank lines count, so the number is the one an editor shows) and
raises :class:`JsonLinesError`, whose message names the file, the row and the reason:
``wsc.jsonl, row 3: not valid JSON (Expecting ',' delimiter at column 41)``. Callers that
report their own error type convert it (``raise TheirError(str(exc)) from exc``) or read
its parts (``name``, ``row``, ``field``, ``reason``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal, overload

from core.errors import WinnowError

#: What a document nested deeper than the parser's recursion limit (about 1,000 levels;
#: Winnow's formats nest a few) is told. Python's json module raises RecursionError there.
TOO_DEEP = "nested too deeply (more than the parser takes; Winnow's formats nest a few levels)"


def loads(text: str) -> Any:
    """``json.loads`` for text from outside: a document nested too deeply is a
    ``JSONDecodeError`` like any other malformed input (never a RecursionError)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError(TOO_DEEP, text, 0) from None


def raw_decode(decoder: json.JSONDecoder, text: str, index: int) -> tuple[Any, int]:
    """``decoder.raw_decode`` with the same treatment of deep nesting as :func:`loads`."""
    try:
        return decoder.raw_decode(text, index)
    except RecursionError:
        raise json.JSONDecodeError(TOO_DEEP, text, index) from None


_KEY = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:')


def last_key(fragment: str) -> str | None:
    """The last object key written in ``fragment`` of JSON text: the field a row breaks in."""
    keys = _KEY.findall(fragment)
    return keys[-1] if keys else None


class JsonLinesError(WinnowError, ValueError):
    """A JSON-Lines file (or a row of it) that cannot be read.

    ``row`` is None when the problem is not in one row; ``field`` is the key the broken
    JSON was in, when it can be told (it is not part of the message).
    """

    def __init__(self, reason: str, *, name: str, row: int | None = None, field: str | None = None) -> None:
        self.reason = reason
        self.name = name
        self.row = row
        self.field = field
        super().__init__(f"{name}, row {row}: {reason}" if row is not None else f"{name}: {reason}")


def _lines(path: Path, name: str) -> Iterator[str]:
    # bytes split at b"\n" only, each row decoded on its own: a bad byte names its row
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise JsonLinesError(
                    f"not UTF-8 text ({exc.reason} at byte {exc.start} of the row)", name=name, row=number
                ) from None


def _reason(exc: json.JSONDecodeError) -> str:
    if exc.msg == "Extra data":
        return f"more than one JSON value on the line (at column {exc.colno})"
    return f"not valid JSON ({exc.msg} at column {exc.colno})"


@overload
def read_jsonl(
    source: os.PathLike[str] | Iterable[str], *, name: str | None = ..., objects: Literal[True]
) -> Iterator[tuple[int, dict[str, Any]]]: ...


@overload
def read_jsonl(
    source: os.PathLike[str] | Iterable[str], *, name: str | None = ..., objects: bool = ...
) -> Iterator[tuple[int, Any]]: ...


def read_jsonl(
    source: os.PathLike[str] | Iterable[str], *, name: str | None = None, objects: bool = False
) -> Iterator[tuple[int, Any]]:
    """``(row, value)`` for every non-blank line of ``source``, row numbers from 1.

    ``source`` is a path (``pathlib.Path``; read as UTF-8) or the lines themselves (an
    open text file, or ``text.split("\\n")``; not ``splitlines()``, which also splits
    inside JSON strings at U+2028 and the like). A plain ``str`` is refused: say which of
    the two it is. ``name`` is what messages call the file (default: the path as given,
    or ``"input"``). ``objects``: every row must be a JSON object. A UTF-8 byte-order mark
    before the first row is ignored.
    """
    if isinstance(source, str | bytes):
        raise TypeError("read_jsonl takes a Path or an iterable of lines, not a str or bytes")
    if isinstance(source, os.PathLike):
        path = Path(source)
        label = name if name is not None else str(source)
        lines: Iterable[str] = _lines(path, label)
    else:
        label = name if name is not None else "input"
        lines = source
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")  # so that a column is counted within the row
        if number == 1:
            line = line.removeprefix("\ufeff")
        if not line.strip():
            continue
        try:
            value = loads(line)
        except json.JSONDecodeError as exc:
            raise JsonLinesError(
                _reason(exc), name=label, row=number, field=last_key(line[: exc.pos])
            ) from None
        if objects and not isinstance(value, dict):
            raise JsonLinesError(
                f"expected a JSON object, found {type(value).__name__}", name=label, row=number
            )
        yield number, value
