"""WscItems straight from the public WinoWhy file, for benchmarks and model tests.

Releases are the normal source of items (the `evaluate` command builds WscItems from a
release's wsc.jsonl); this reader lets bench/ and the parity tests use the 273 WSC
questions of ../shared/data/winowhy/winowhy.json without a database.
"""

from __future__ import annotations

import json
from pathlib import Path

from evaluation.lm.scorers.types import ScoringError, WscItem


def wsc_items_from_winowhy(path: str | Path) -> list[WscItem]:
    """The 273 WSC questions of winowhy.json as WscItems (id = the question's index)."""
    path = Path(path)
    rows = json.loads(path.read_text(encoding="utf-8"))
    items = []
    for n, row in enumerate(rows):
        try:
            text = row["text"]
            key = str(row["correctAnswer"]).strip().rstrip(".").upper()
            if key not in ("A", "B"):
                raise ScoringError(f"{path}, question {n}, field 'correctAnswer': {row['correctAnswer']!r}")
            a, b = (str(x).strip() for x in row["answers"])
            items.append(
                WscItem(
                    id=str(n),
                    text_before=text["txt1"],
                    pronoun=text["pron"],
                    text_after=text["txt2"],
                    candidates=(a, b),
                    answer="AB".index(key),
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ScoringError):
                raise
            raise ScoringError(f"{path}, question {n}: cannot read it ({exc!r})") from None
    return items
