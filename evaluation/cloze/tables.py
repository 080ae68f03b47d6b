"""The cloze run page's tables as pandas DataFrames, from a run's ``results.json``. No Django.

The page shows these frames and offers each as CSV and JSON (``core.tables``), so the page,
the download and a notebook (``cloze_tables(json.load(open("results.json")))``) hold the
same cells. The figures themselves are computed by :mod:`evaluation.cloze.experiments`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from evaluation.cloze.experiments import SCORES

SCORE_LABELS = {
    "accuracy_uniform": "accuracy (uniform)",
    "accuracy_weighted": "accuracy (weighted)",
    "precision_uniform": "precision (uniform)",
    "precision_weighted": "precision (weighted)",
}
#: Qasemi et al.'s figures beside which the page shows a run's.
PAPER_CORRELATIONS = {"uniform": 0.390, "weighted": 0.906}
PAPER_CONFIDENCE = "63 of 83"


def _float(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else np.nan


def _dispersion(results: Mapping[str, Any]) -> Mapping[str, Any]:
    return results.get("dispersion") or {}


def score_table(results: Mapping[str, Any]) -> pd.DataFrame:
    """Experiment 1: each score's mean over the scored statements, over the sensible ones
    and over those against common sense, and its Pearson r with sentence length."""
    d = _dispersion(results)
    figures = ("mean", "mean_sensible", "mean_against_sense", "pearson_with_length")
    return pd.DataFrame(
        {
            "score": pd.Series(SCORES, dtype="str"),
            "label": pd.Series([SCORE_LABELS[s] for s in SCORES], dtype="str"),
            **{
                key: pd.Series([_float((d.get(key) or {}).get(s)) for s in SCORES], dtype="float64")
                for key in figures
            },
        }
    )


def correlation_table(results: Mapping[str, Any]) -> pd.DataFrame:
    """Experiment 1: Pearson r between accuracy and precision, per weighting, beside the paper's."""
    d = _dispersion(results)
    weightings = list(PAPER_CORRELATIONS)
    return pd.DataFrame(
        {
            "weighting": pd.Series(weightings, dtype="str"),
            "pearson_r": pd.Series(
                [_float(d.get(f"pearson_accuracy_precision_{w}")) for w in weightings], dtype="float64"
            ),
            "paper": pd.Series([PAPER_CORRELATIONS[w] for w in weightings], dtype="float64"),
        }
    )


SENTENCE_COLUMNS = ["rank", "id", "text", "sensible", *SCORES, "masked"]


def sentence_table(results: Mapping[str, Any], which: str) -> pd.DataFrame:
    """Experiment 1: the ``best`` or ``worst`` statements by weighted accuracy, with each
    masked word and the model's replacements (``masked``: ``[{"word", "replacements"}]``)."""
    rows = list(_dispersion(results).get(which) or [])
    frame = pd.DataFrame.from_records(rows, columns=[c for c in SENTENCE_COLUMNS if c != "rank"])
    frame.insert(0, "rank", range(1, len(frame) + 1))
    return frame.astype(
        {"id": "str", "text": "str", "sensible": "boolean", **dict.fromkeys(SCORES, "float64")}
    )


CONFIDENCE_FIGURES = {
    "pairs": "pairs read",
    "encoded": "encoded (one differing span at the same position)",
    "correct": "right",
    "accuracy": "accuracy",
    "confidence_predicted_right": "confidence of the predicted choice, right cases",
    "confidence_predicted_wrong": "confidence of the predicted choice, wrong cases",
    "confidence_correct_right": "confidence of the correct choice, right cases",
    "confidence_correct_wrong": "confidence of the correct choice, wrong cases",
}


def confidence_table(results: Mapping[str, Any]) -> pd.DataFrame:
    """Experiment 2 on subtask-A pairs: one row per figure (``figure``, ``label``, ``value``),
    the pairs not encoded counted per reason (``not_encoded:REASON``)."""
    c = results.get("confidence") or {}
    figures = [(key, label, _float(c.get(key))) for key, label in CONFIDENCE_FIGURES.items()]
    not_encoded = sorted((c.get("not_encoded") or {}).items())
    figures[2:2] = [(f"not_encoded:{r}", f"not encoded: {r}", _float(n)) for r, n in not_encoded]
    return pd.DataFrame(
        {
            "figure": pd.Series([f[0] for f in figures], dtype="str"),
            "label": pd.Series([f[1] for f in figures], dtype="str"),
            "value": pd.Series([f[2] for f in figures], dtype="float64"),
        }
    )


PAPER_TABLE_1_COLUMNS = ["text", "paper_printed", "paper_score", *SCORES]
PAPER_TABLE_2_COLUMNS = ["word", "paper_top_5", "paper_score", "top_5", *SCORES]


def paper_table(results: Mapping[str, Any], which: str) -> pd.DataFrame:
    """Qasemi et al.'s Table 1 (``table_1``: sentence, the paper's score, this run's four)
    or Table 2 (``table_2``: each masked word of *Leopards have spots on their bodies*, the
    paper's top 5 and score, this run's top 5 and scores); empty for a run without them."""
    examples = results.get("paper_examples") or {}
    columns = PAPER_TABLE_1_COLUMNS if which == "table_1" else PAPER_TABLE_2_COLUMNS
    frame = pd.DataFrame.from_records(list(examples.get(which) or []), columns=columns)
    return frame.astype({"paper_score": "float64", **dict.fromkeys(SCORES, "float64")})


TABLES: dict[str, tuple[str, Callable[[Mapping[str, Any]], pd.DataFrame]]] = {
    "correlations": ("Pearson r between accuracy and precision", correlation_table),
    "scores": ("Mean scores", score_table),
    "best": ("Best sentences (by weighted accuracy)", lambda r: sentence_table(r, "best")),
    "worst": ("Worst sentences", lambda r: sentence_table(r, "worst")),
    "paper_table_1": ("Qasemi et al. Table 1's sentences", lambda r: paper_table(r, "table_1")),
    "paper_table_2": (
        "Qasemi et al. Table 2: Leopards have spots on their bodies",
        lambda r: paper_table(r, "table_2"),
    ),
    "confidence": ("Confidence on subtask-A pairs", confidence_table),
}


def cloze_table(results: Mapping[str, Any], name: str) -> pd.DataFrame:
    """One of the page's tables (``TABLES``) by name; KeyError for another name."""
    return TABLES[name][1](results)


def cloze_tables(results: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    """Every table of the cloze run page."""
    return {name: cloze_table(results, name) for name in TABLES}
