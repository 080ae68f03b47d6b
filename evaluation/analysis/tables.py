"""Tables of figures computed from the frames of :mod:`evaluation.analysis.frames`. No Django.

The run page, the leaderboard and the comparison page show these tables and offer them as
CSV and JSON; a notebook gets the same frames from the same functions. Accuracies carry
Wilson 95% intervals (statsmodels ``proportion_confint``); comparisons McNemar's test
(statsmodels ``mcnemar``); WinoWhy's best threshold is :mod:`evaluation.metrics.winowhy`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evaluation.analysis.frames import AnalysisError, join_runs, run_attrs
from evaluation.metrics.common import KNOWLEDGE_TYPES, knowledge_type_order
from evaluation.metrics.comve import subtask_c_bleu
from evaluation.metrics.significance import McNemarResult, mcnemar, wilson_intervals
from evaluation.metrics.winowhy import accuracy_at_threshold, best_threshold, majority_baseline
from releases.dataset import Dataset

#: The columns of every accuracy table; the index (``key``) names the row for programs.
ACCURACY_COLUMNS = ["subset", "n", "correct", "accuracy", "wilson_low", "wilson_high"]
TYPE_COUNTS = (("single", "single knowledge type"), ("multiple", "multiple knowledge types"))


def _flag(series: pd.Series) -> np.ndarray:
    """A nullable boolean column as a plain mask: NA counts as False."""
    return series.eq(True).fillna(False).to_numpy(dtype=bool)


def accuracy_table(rows: Iterable[tuple[str, str, Any, Any]]) -> pd.DataFrame:
    """An accuracy table from ``(key, subset label, mask, hits)`` rows: ``n`` = the mask's
    size, ``correct`` = hits inside it, ``accuracy`` = their share (NaN on an empty subset),
    and its Wilson 95% interval."""
    keys, labels, n, correct = [], [], [], []
    for key, label, mask, hits in rows:
        m = np.asarray(mask, dtype=bool)
        h = np.asarray(hits, dtype=bool)
        keys.append(key)
        labels.append(label)
        n.append(int(m.sum()))
        correct.append(int((m & h).sum()))
    frame = pd.DataFrame(
        {"subset": labels, "n": n, "correct": correct},
        index=pd.Index(keys, name="key", dtype="str"),
    ).astype({"subset": "str", "n": "int64", "correct": "int64"})
    with np.errstate(invalid="ignore", divide="ignore"):
        frame["accuracy"] = np.where(
            frame["n"] > 0, frame["correct"] / frame["n"].where(frame["n"] > 0), np.nan
        )
    frame["wilson_low"], frame["wilson_high"] = wilson_intervals(frame["correct"], frame["n"])
    return frame[ACCURACY_COLUMNS]


def knowledge_types_of(frame: pd.DataFrame) -> list[str]:
    """The knowledge types present, in the papers' order."""
    seen = {t for types in frame["knowledge_types"] for t in types}
    return sorted(seen, key=knowledge_type_order)


def _has_type(frame: pd.DataFrame, name: str) -> np.ndarray:
    return frame["knowledge_types"].map(lambda types: name in types).to_numpy(dtype=bool)


# --------------------------------------------------------------------------- WSC


def wsc_table(run: pd.DataFrame) -> pd.DataFrame:
    """Every WSC figure of a run (a :func:`load_run` frame), one row per subset.

    Keys: ``all``; ``switchable_before``, ``switchable_after``, ``consistency`` (Trichelair
    et al. table 2: accuracy on the switchable subset before and after switching, and the
    share of those items whose predicted candidate changes with the switch; ``correct`` is
    then the number that changed); ``non_switchable``; ``associative``, ``non_associative``
    (their table 3); ``type:NAME`` per knowledge type (WinoWhy table 4; a question with
    several types counts in each); ``single``, ``multiple``, ``none`` (WinoWhy table 5).
    """
    everything = np.ones(len(run), dtype=bool)
    correct = _flag(run["correct"])
    switchable = _flag(run["switchable"])
    rows: list[tuple[str, str, Any, Any]] = [
        ("all", "all", everything, correct),
        ("switchable_before", "switchable, before switching", switchable, correct),
        ("switchable_after", "switchable, after switching", switchable, _flag(run["switched_correct"])),
        (
            "consistency",
            "consistency (prediction changes with the switch)",
            switchable,
            _flag(run["changed"]),
        ),
        ("non_switchable", "non-switchable", _flag(run["switchable"].eq(False)), correct),
        ("associative", "associative", _flag(run["associative"]), correct),
        ("non_associative", "non-associative", _flag(run["associative"].eq(False)), correct),
    ]
    rows += [
        (f"type:{t}", f"knowledge type {t}", _has_type(run, t), correct) for t in knowledge_types_of(run)
    ]
    counts = run["type_count"]
    rows += [(k, label, (counts == k).to_numpy(dtype=bool), correct) for k, label in TYPE_COUNTS]
    rows.append(("none", "no knowledge type", (counts == "none").to_numpy(dtype=bool), correct))
    return accuracy_table(rows)


def switch_row(run: pd.DataFrame) -> pd.Series:
    """Trichelair et al. table 2's row for a WSC run: accuracy on the full WSC, on the
    switchable subset unswitched and switched, and consistency (shares, not percent)."""
    table = wsc_table(run)["accuracy"]
    return pd.Series(
        {
            "Full WSC": table["all"],
            "Unswitched": table["switchable_before"],
            "Switched": table["switchable_after"],
            "Consistency": table["consistency"],
        },
        name=run.attrs.get("label"),
    )


def knowledge_type_row(run: pd.DataFrame) -> pd.Series:
    """WinoWhy table 4's row for a WSC run: accuracy per knowledge type and overall (shares)."""
    table = wsc_table(run)["accuracy"]
    values = {t: table.get(f"type:{t}", np.nan) for t in KNOWLEDGE_TYPES}
    return pd.Series(values | {"Overall": table["all"]}, name=run.attrs.get("label"))


# --------------------------------------------------------------------------- WinoWhy


WINOWHY_COLUMNS = [
    "subset",
    "n",
    "positives",
    "threshold",
    "correct",
    "accuracy",
    "wilson_low",
    "wilson_high",
    "at_overall_threshold_correct",
    "at_overall_threshold_accuracy",
    "majority_correct",
    "majority_accuracy",
]


def winowhy_table(run: pd.DataFrame) -> pd.DataFrame:
    """WinoWhy figures of a run over its positive and negative reasons (WinoWhy table 6).

    One row for all reasons (``all``) and one per knowledge type of the reason's question
    (``type:NAME``): accuracy at the subset's own best threshold over the scores (a reason
    is predicted plausible when its score is at least the threshold; ``threshold`` NaN =
    +inf, everything negative), at the threshold that is best over all reasons, and of
    always answering the subset's majority label.
    """
    scores = run["score"].to_numpy(dtype=np.float64)
    labels = _flag(run["positive"])
    overall = best_threshold(scores, labels)
    subsets = [("all", "all reasons", np.ones(len(run), dtype=bool))]
    subsets += [(f"type:{t}", f"knowledge type {t}", _has_type(run, t)) for t in knowledge_types_of(run)]
    records = []
    for key, label, mask in subsets:
        best = best_threshold(scores[mask], labels[mask])
        at = accuracy_at_threshold(scores[mask], labels[mask], overall.threshold)
        majority = majority_baseline(labels[mask])
        records.append(
            {
                "key": key,
                "subset": label,
                "n": best.n,
                "positives": int(labels[mask].sum()),
                "threshold": best.threshold if np.isfinite(best.threshold) else np.nan,
                "correct": best.correct,
                "at_overall_threshold_correct": at.correct,
                "majority_correct": majority.correct,
            }
        )
    frame = pd.DataFrame.from_records(records).set_index("key")
    frame.index = frame.index.astype("str")
    n = frame["n"].where(frame["n"] > 0)
    frame["accuracy"] = frame["correct"] / n
    frame["at_overall_threshold_accuracy"] = frame["at_overall_threshold_correct"] / n
    frame["majority_accuracy"] = frame["majority_correct"] / n
    frame["wilson_low"], frame["wilson_high"] = wilson_intervals(frame["correct"], frame["n"])
    return frame.astype({"subset": "str"})[WINOWHY_COLUMNS]


# --------------------------------------------------------------------------- ComVE


COMVE_COLUMNS = [*ACCURACY_COLUMNS, "bleu_percent"]


def comve_table(run: pd.DataFrame) -> pd.DataFrame:
    """ComVE figures of a run: accuracy on subtasks A and B (``a``, ``b``), and with the
    choice by log-likelihood per character (``a_norm``, ``b_norm``, model runs only), and
    subtask C's BLEU as the official scorer computes it (``c``, when explanations exist)."""
    rows: list[tuple[str, str, Any, Any]] = []
    for subtask in ("a", "b"):
        part = run[run["subtask"] == subtask]
        if part.empty:
            continue
        rows.append((subtask, f"subtask {subtask.upper()}", np.ones(len(part), bool), _flag(part["correct"])))
        if "correct_norm" in part and part["correct_norm"].notna().any():
            label = f"subtask {subtask.upper()}, per character (lm-eval's acc_norm)"
            rows.append((f"{subtask}_norm", label, np.ones(len(part), bool), _flag(part["correct_norm"])))
        for column in [c for c in part.columns if c.startswith("correct_rule_")]:
            if part[column].notna().any():
                name = column.removeprefix("correct_rule_")
                label = f"subtask {subtask.upper()} by {name.replace('_', ' ')}"
                rows.append((f"{subtask}_rule_{name}", label, np.ones(len(part), bool), _flag(part[column])))
    frame = (
        accuracy_table(rows)
        if rows
        else pd.DataFrame(columns=ACCURACY_COLUMNS, index=pd.Index([], name="key"))
    )
    frame["bleu_percent"] = np.nan
    c = run[run["subtask"] == "c"]
    if not c.empty:
        bleu = subtask_c_bleu(
            dict(zip(c["id"], c["gold"], strict=True)), dict(zip(c["id"], c["prediction"], strict=True))
        )
        frame.loc["c", ["subset", "n", "bleu_percent"]] = [
            "subtask C (BLEU)",
            len(c),
            bleu.as_dict()["bleu_percent"],
        ]
    return frame.astype({"subset": "str", "n": "int64", "correct": "Int64"})[COMVE_COLUMNS]


def run_table(run: pd.DataFrame) -> pd.DataFrame:
    """The run page's table for the run's data set (WSC, WinoWhy or ComVE)."""
    dataset = run.attrs.get("dataset")
    if dataset == Dataset.WSC:
        return wsc_table(run)
    if dataset == Dataset.WINOWHY:
        return winowhy_table(run)
    if dataset == Dataset.COMVE:
        return comve_table(run)
    raise AnalysisError(f"no table for data set {dataset!r}")


# --------------------------------------------------------------------------- several runs


def _get(metrics: Mapping[str, Any], *path: str) -> Any:
    node: Any = metrics
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else np.nan


def _type_accuracy(block: Mapping[str, Any]) -> float:
    """A knowledge type's accuracy in a run's metrics: WSC's, or WinoWhy's best threshold."""
    return _number(block["accuracy"] if "accuracy" in block else _get(block, "best", "accuracy"))


def leaderboard(results: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Runs ranked by their summary accuracy (best first; ties and runs without one by id).

    ``results`` are runs' ``results.json`` contents (:func:`load_results`; the pages pass
    the same fields from the database). Columns: ``rank``, ``run``, ``label``, ``dataset``,
    ``method``, ``model``, ``accuracy``, ``n``, ``lucky_draw`` (chance a coin-flipping
    guesser does as well; WSC), ``type:NAME`` per knowledge type, and for WSC runs with
    switchable items ``switchable_n``, ``unswitched``, ``switched``, ``consistency``.
    """
    records = []
    for r in results:
        metrics = r.get("metrics") or {}
        attrs = run_attrs(r)
        record: dict[str, Any] = {
            **{k: attrs[k] for k in ("run", "label", "dataset", "method", "model")},
            "accuracy": _number(_get(metrics, "summary", "accuracy")),
            "n": _get(metrics, "summary", "n"),
            "lucky_draw": _number(_get(metrics, "significance", "all", "lucky_draw")),
        }
        for name, block in (metrics.get("knowledge_types") or {}).items():
            record[f"type:{name}"] = _type_accuracy(block)
        if _get(metrics, "switchable", "n"):
            record["switchable_n"] = metrics["switchable"]["n"]
            record["unswitched"] = _number(metrics["switchable"].get("accuracy_before"))
            record["switched"] = _number(metrics["switchable"].get("accuracy_after"))
            record["consistency"] = _number(metrics["switchable"].get("consistency"))
        records.append(record)
    base = ["run", "label", "dataset", "method", "model", "accuracy", "n", "lucky_draw"]
    frame = pd.DataFrame.from_records(records, columns=None if records else base)
    for column in base:
        if column not in frame:
            frame[column] = np.nan
    types = sorted((c[5:] for c in frame.columns if c.startswith("type:")), key=knowledge_type_order)
    switch = [c for c in ("switchable_n", "unswitched", "switched", "consistency") if c in frame]
    frame = frame[base + [f"type:{t}" for t in types] + switch]
    frame = frame.assign(_order=-frame["accuracy"].fillna(0.0)).sort_values(["_order", "run"], kind="stable")
    frame = frame.drop(columns="_order").reset_index(drop=True)
    frame.insert(0, "rank", range(1, len(frame) + 1))
    return frame.astype({"n": "Int64", "switchable_n": "Int64"} if switch else {"n": "Int64"})


@dataclass(frozen=True)
class Comparison:
    """Two runs item by item: ``items`` holds the items both scored (``a_*`` and ``b_*``
    columns and ``differ``: exactly one of the two is right)."""

    items: pd.DataFrame
    only_in_a: int
    only_in_b: int
    mcnemar: McNemarResult | None


def compare_runs(a: pd.DataFrame, b: pd.DataFrame) -> Comparison:
    """Two runs' :func:`load_predictions` frames joined on (id, variant), and McNemar's test
    on the items both have a verdict for (every WSC sentence, WinoWhy reason, ComVE A/B item)."""
    joined = join_runs({"a": a, "b": b})
    joined = joined[joined["a_correct"].notna() & joined["b_correct"].notna()].reset_index(drop=True)
    joined["a_correct"] = joined["a_correct"].astype(bool)
    joined["b_correct"] = joined["b_correct"].astype(bool)
    joined["differ"] = joined["a_correct"] != joined["b_correct"]
    keys = ["id", "variant"]
    a_keys, b_keys = a.set_index(keys).index, b.set_index(keys).index
    return Comparison(
        items=joined,
        only_in_a=int((~a_keys.isin(b_keys)).sum()),
        only_in_b=int((~b_keys.isin(a_keys)).sum()),
        mcnemar=mcnemar(joined["a_correct"].tolist(), joined["b_correct"].tolist()) if len(joined) else None,
    )


COMPARISON_COLUMNS = [
    "id",
    "variant",
    "gold",
    "a_prediction",
    "a_scores",
    "a_correct",
    "b_prediction",
    "b_scores",
    "b_correct",
    "differ",
]


def comparison_table(comparison: Comparison) -> pd.DataFrame:
    """The comparison page's table (every shared item; the page shows those that differ)."""
    items = comparison.items
    for column in COMPARISON_COLUMNS:
        if column not in items:
            items = items.assign(**{column: None})
    return items[COMPARISON_COLUMNS]
