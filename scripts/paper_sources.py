"""What the generated tables are made of (scripts/paper_tables.py): the papers' own text
(``WINNOW_PAPERS_DIR``, default ``../shared/papers``) and the stored runs under ``docs/``,
with the helpers that read a paper's rows and format a table."""

from __future__ import annotations

import json
import os
import re
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# The papers sit beside the data sets in ../shared (WINNOW_DATA_DIR's parent).
PAPERS = Path(
    os.environ.get("WINNOW_PAPERS_DIR")
    or Path(os.environ.get("WINNOW_DATA_DIR") or ROOT.parent / "shared" / "data").parent / "papers"
)
TRICHELAIR = "000_2f521d83e8cb839b.txt"
WINOWHY_PAPER = "001_4c551c598241e083.txt"
WANG = "002_83d6cce00e48605f.txt"
PROPOSAL = "003_d1f3e3587aa20e70.txt"
QASEMI = "004_70b2ddc7d97628a1.txt"

RUNS = "docs/smollm2-runs"
WSC_PARTIAL = f"{RUNS}/wsc273-1.0.0-partial.json"
WSC_FULL = f"{RUNS}/wsc273-1.0.0-full.json"
WSC_PARTIAL_EOT = f"{RUNS}/wsc273-1.0.0-partial-endoftext.json"
WSC_FULL_EOT = f"{RUNS}/wsc273-1.0.0-full-endoftext.json"
CLOZE_21NOV = "docs/cloze-smollm2/results.json"  # 1,000 statements, renormalised equations, <|im_start|>
CLOZE_EOT_200 = "docs/cloze-smollm2/results-endoftext-first200.json"  # the same, <|endoftext|>, first 200
WINOWHY = f"{RUNS}/winowhy-1.0.0.json"
COMVE = f"{RUNS}/comve-test-1.0.0.json"
SENMAKING = f"{RUNS}/senmaking-1.0.0.json"
CLOZE = "docs/cloze-smollm2/results-paper-equations-1000.json"
TYPES = ("Property", "Object", "Eventuality", "Spatial", "Quantity", "Others")
PERCENT = re.compile(r"\d+\.\d+%")


class PaperError(Exception):
    pass


@cache
def paper(name: str) -> str:
    path = PAPERS / name
    if not path.is_file():
        raise PaperError(f"{path}: missing (the papers are in ../shared/papers; set WINNOW_PAPERS_DIR)")
    return path.read_text(encoding="utf-8")


@cache
def run(path: str) -> dict[str, Any]:
    return json.loads((ROOT / path).read_text(encoding="utf-8"))


def row(name: str, label: str, count: int, *, after: str = "") -> list[str]:
    """The first ``count`` percentages of the paper's line that starts with ``label``
    (after the line holding ``after``, when given): the figures exactly as printed."""
    text = paper(name)
    if after:
        start = text.find(after)
        if start < 0:
            raise PaperError(f"{name}: {after!r} not found")
        text = text[start:]
    for line in text.splitlines():
        if line.startswith(label + " "):
            figures = PERCENT.findall(line[len(label) :])
            if len(figures) < count:
                raise PaperError(f"{name}: {label!r} has {len(figures)} figures, expected {count}")
            return figures[:count]
    raise PaperError(f"{name}: no line starts with {label!r}")


def quote(name: str, passage: str) -> str:
    """``passage`` as it stands in the paper (whitespace aside), else an error."""
    if " ".join(passage.split()) not in " ".join(paper(name).split()):
        raise PaperError(f"{name}: {passage!r} not found")
    return passage


def pct(x: float | None, places: int = 2) -> str:
    return "n/a" if x is None else f"{100 * x:.{places}f}%"


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return out + ["| " + " | ".join(r) + " |" for r in rows]


def _smol(name: str) -> str:
    return f"**SmolLM2-135M-Instruct, {name} (Winnow)**"


def _right_of_encoded() -> str:
    quote(QASEMI, "we were able to encode 83 examples")
    quote(QASEMI, "find the correct answer in 63 of the 83 examples")
    return "63 of 83"
