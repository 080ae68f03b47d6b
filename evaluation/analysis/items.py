"""Two runs compared on the items themselves: each shared item's text and options beside
the gold answer and each run's choice, and the filters the comparison page offers. No Django.

The texts come from the exported release folder the runs scored (``evaluation.release_data``),
keyed as ``predictions.jsonl`` keys its lines: (id, variant). A WSC variant is the original
or the switched sentence, cut at its pronoun; a WinoWhy variant is a reason; a ComVE
variant is subtask A (two statements, which is against common sense) or B (a false
statement and three reasons).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from evaluation import release_data
from evaluation.analysis.frames import AnalysisError
from evaluation.analysis.tables import Comparison
from releases.dataset import Dataset

#: The comparison page's filters: the value in its address, and what it shows.
FILTERS = {
    "differ": "exactly one right",
    "only_a": "only A right",
    "only_b": "only B right",
    "both_wrong": "both wrong",
    "both_right": "both right",
    "all": "all",
}
DEFAULT_FILTER = "differ"
#: Decimals of the scores (log-probabilities, pseudo-log-likelihoods) the page shows.
SCORE_DECIMALS = 3
#: The columns of the comparison's downloads, in order (the page shows the same rows).
ITEM_COMPARISON_COLUMNS = [
    "id",
    "variant",
    "text",
    "options",
    "gold",
    "gold_text",
    "a_prediction",
    "a_choice",
    "a_correct",
    "a_scores",
    "b_prediction",
    "b_choice",
    "b_correct",
    "b_scores",
    "outcome",
    "differ",
]


@dataclass(frozen=True)
class ItemText:
    """One scored item as a reader sees it.

    ``before``, ``pronoun``, ``after``: a WSC sentence cut at its pronoun; any other text is
    all in ``before``. ``context``: what the text answers (a WinoWhy question with its
    answer, a ComVE B false statement), or "". ``options``: (label as the predictions hold
    it, text), e.g. ("0", "The city councilmen"); ``question``: what choosing means;
    ``listed``: whether a page lists the options under the text (a WinoWhy reason's two
    "options" are its verdicts); ``numbering``: how the list counts them (1 or A);
    ``part``: which part of the item this is (switched, subtask A), "" for the item itself.
    """

    before: str
    pronoun: str = ""
    after: str = ""
    context: str = ""
    options: tuple[tuple[str, str], ...] = ()
    question: str = ""
    listed: bool = True
    numbering: str = "1"
    part: str = ""

    @property
    def text(self) -> str:
        """The text in one line, the pronoun in brackets."""
        sentence = " ".join(
            p for p in (self.before, f"[{self.pronoun}]" if self.pronoun else "", self.after) if p
        )
        return f"{self.context} {sentence}".strip() if self.context else sentence

    def option_text(self, label: Any) -> str:
        """The text of the option a prediction or a gold answer names ("" if none matches)."""
        key = _label(label)
        return next((text for option, text in self.options if option == key), key)


def _label(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def item_texts(folder: str | Path) -> dict[tuple[str, str], ItemText]:
    """Every item variant of an exported release folder, keyed (id, variant)."""
    try:
        release = release_data.open_release_folder(folder)
        if release.dataset == Dataset.WSC:
            return _wsc_texts(release)
        if release.dataset == Dataset.WINOWHY:
            return _winowhy_texts(release)
        return _comve_texts(release)
    except release_data.ReleaseDataError as exc:
        raise AnalysisError(str(exc)) from exc


def _wsc_texts(release: release_data.ReleaseFolder) -> dict[tuple[str, str], ItemText]:
    out: dict[tuple[str, str], ItemText] = {}
    for row in release_data.read_wsc(release):
        item = row.item
        options = tuple((str(i), c) for i, c in enumerate(item.candidates))
        for variant, text, _gold in item.variants():
            out[(item.id, variant)] = ItemText(
                before=text.text_before,
                pronoun=text.pronoun,
                after=text.text_after,
                options=options,
                question=f"Who is '{text.pronoun}'?",
                part="switched" if variant == "switched" else "",
            )
    return out


def _winowhy_texts(release: release_data.ReleaseFolder) -> dict[tuple[str, str], ItemText]:
    return {
        (r.id, "reason"): ItemText(
            before=r.text.strip(),
            context=f"{r.sentence} '{r.pronoun}' refers to {r.answer_text} because",
            options=(("positive", "a right reason"), ("negative", "a wrong reason")),
            question="Is the reason right?",
            listed=False,
        )
        for r in release_data.read_winowhy(release)
    }


def _comve_texts(release: release_data.ReleaseFolder) -> dict[tuple[str, str], ItemText]:
    data = release_data.read_comve(release)
    out = {
        (x.id, "a"): ItemText(
            before="",
            options=tuple((str(i), s) for i, s in enumerate(x.statements)),
            question="Which statement is against common sense?",
            part="subtask A",
        )
        for x in data.a
    }
    for b in data.b:
        out[(b.id, "b")] = ItemText(
            before="",
            context=b.false_sent,
            options=tuple(zip("ABC", b.options, strict=True)),
            question="Why is the statement against common sense?",
            numbering="A",
            part="subtask B",
        )
    return out


def outcome(a_correct: bool, b_correct: bool) -> str:
    """The filter an item falls under: only_a, only_b, both_right or both_wrong."""
    if a_correct and b_correct:
        return "both_right"
    if a_correct:
        return "only_a"
    return "only_b" if b_correct else "both_wrong"


def scores_list(scores: Any) -> list[float] | None:
    """A run's scores of one item as a list (None when the run has none: a baseline's
    upload, ComVE C)."""
    if not isinstance(scores, Sequence) or isinstance(scores, str):
        return None
    return [float(s) for s in scores]


def rounded(scores: list[float] | None, decimals: int = SCORE_DECIMALS) -> list[str]:
    """Scores as the page shows them: ``decimals`` places, whatever the digits."""
    return [f"{s:.{decimals}f}" for s in scores or []]


def item_comparison(comparison: Comparison, texts: Mapping[tuple[str, str], ItemText]) -> pd.DataFrame:
    """Every item both runs scored, with its text: the columns of ``ITEM_COMPARISON_COLUMNS``
    and ``item`` (its :class:`ItemText`, for a page). An item the release lacks is an error:
    the runs were scored on another release."""
    items = comparison.items
    rows: list[dict[str, Any]] = []
    for record in items.to_dict("records"):
        key = (str(record["id"]), str(record["variant"]))
        text = texts.get(key)
        if text is None:
            raise AnalysisError(f"item {key[0]} ({key[1]}) is not in the release the runs scored")
        a_correct, b_correct = bool(record["a_correct"]), bool(record["b_correct"])
        rows.append(
            {
                "id": key[0],
                "variant": key[1],
                "text": text.text,
                "options": " | ".join(f"{label}: {option}" for label, option in text.options),
                "gold": _label(record.get("gold")),
                "gold_text": text.option_text(record.get("gold")),
                "a_prediction": _label(record.get("a_prediction")),
                "a_choice": text.option_text(record.get("a_prediction")),
                "a_correct": a_correct,
                "a_scores": scores_list(record.get("a_scores")),
                "b_prediction": _label(record.get("b_prediction")),
                "b_choice": text.option_text(record.get("b_prediction")),
                "b_correct": b_correct,
                "b_scores": scores_list(record.get("b_scores")),
                "outcome": outcome(a_correct, b_correct),
                "differ": a_correct != b_correct,
                "item": text,
            }
        )
    return pd.DataFrame.from_records(rows, columns=[*ITEM_COMPARISON_COLUMNS, "item"])


def filter_items(frame: pd.DataFrame, show: str) -> pd.DataFrame:
    """The rows of :func:`item_comparison` a filter of ``FILTERS`` keeps."""
    if show not in FILTERS:
        raise AnalysisError(f"unknown filter {show!r}: one of {', '.join(FILTERS)}")
    if show == "all":
        return frame
    if show == "differ":
        return frame[frame["differ"]]
    return frame[frame["outcome"] == show]


def filter_counts(frame: pd.DataFrame) -> dict[str, int]:
    """How many rows each filter keeps."""
    counts = frame["outcome"].value_counts().to_dict() if len(frame) else {}
    return {
        show: len(frame)
        if show == "all"
        else int(frame["differ"].sum())
        if show == "differ"
        else int(counts.get(show, 0))
        for show in FILTERS
    }
