"""The figures of adversarial writing as pandas frames (pure: no Django).

One record per adversarial item that is finished (kept or retracted; items still being
written count nowhere), with: ``item``, ``round`` (its number), ``writer`` (the account's
name), ``study_link`` (True for a crowd participant of a study link), ``status`` (kept or
retracted), ``verdict`` (both, one or none: the kept try's), ``fooled`` (names of the round's
models wrong on at least one twin of the kept try), ``models`` (the round's models),
``tries`` (submissions), ``seconds`` (first try to keep or retract) and ``validation``
(not_sent, pending, validated, rejected, flagged). ``pay``: per study-link writer, what the
payment records give them (the link's reward if recorded, the curator's bonus and the bonus
per validated fooling item).

The figures of a group of records (exactly; docs/adversarial.md says the same):

- ``model_error_rate`` = fooling / kept: *kept* items are those the writer kept; an item is
  *fooling* when it is kept and fooled at least one model (verdict both or one). Per model,
  fooling means that model is among ``fooled``, and the kept items are those of the rounds
  that had the model in the loop.
- ``validated_model_error_rate`` = validated fooling / kept: fooling items whose validation
  is ``validated`` (validators confirmed the writer's answer), over every kept item
  (validated or not), as the DADC shared task ranked writers.
- ``tries_per_fooling_item`` = tries / fooling: every submission of every finished item
  (kept and retracted: the effort) per fooling item.
- ``retraction_rate`` = retracted / (kept + retracted).
- ``rejection_rate`` = rejected / decided: *decided* items are those whose validation has
  an outcome (validated, rejected or flagged); *rejected* ones were validated incorrect.
- ``median_seconds_per_validated_fooling_item``: the median ``seconds`` of the validated
  fooling items.
- ``cost_per_validated_fooling_item`` = pay of the study-link writers of the group / the
  validated fooling items they wrote; only study-link writers count on both sides (accounts
  are not paid through Winnow). Per model: none (pay is not per model).

Re-scores (``rescore_figures``): an earlier round's kept items scored again by a later
round's models, one record per (item, model) with ``model``, ``written_in`` (the item's
round), ``rescored_in`` (the re-scoring round), ``verdict`` and ``validation``; per model
and pair of rounds, ``model_error_rate`` = items it is fooled by / items re-scored and
``validated_model_error_rate`` = validated ones among those / items re-scored.

A figure whose denominator is 0 is missing (NaN, ``null`` in JSON, an empty CSV cell).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

#: The levels a page shows, each grouping the records by this column.
LEVELS = ("writer", "round", "model", "collection")
#: Every table of a collection: the levels and the re-scores of earlier rounds' items.
TABLES = (*LEVELS, "rescore")
RESCORE_COLUMNS = (
    "model",
    "written_in",
    "rescored_in",
    "rescored",
    "fooling",
    "validated_fooling",
    "model_error_rate",
    "validated_model_error_rate",
)

COUNT_COLUMNS = (
    "items",
    "kept",
    "retracted",
    "fooling",
    "validated_fooling",
    "decided",
    "rejected",
    "tries",
    "study_link_writers",
    "study_link_validated_fooling",
    "pay",
)
FIGURE_COLUMNS = (
    "model_error_rate",
    "validated_model_error_rate",
    "tries_per_fooling_item",
    "retraction_rate",
    "rejection_rate",
    "median_seconds_per_validated_fooling_item",
    "cost_per_validated_fooling_item",
)
#: The figures that are shares of 1 (drawn as percentages).
RATES = ("model_error_rate", "validated_model_error_rate", "retraction_rate", "rejection_rate")
RECORD_COLUMNS = (
    "item",
    "round",
    "writer",
    "study_link",
    "status",
    "verdict",
    "fooled",
    "models",
    "tries",
    "seconds",
    "validation",
)
DECIDED = ("validated", "rejected", "flagged")
FOOLING_VERDICTS = ("both", "one")


def items_frame(records: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The finished items as a frame (one row each, ``RECORD_COLUMNS``); items still being
    written are left out."""
    rows = [
        {column: record.get(column) for column in RECORD_COLUMNS}
        for record in records
        if record.get("status") in ("kept", "retracted")
    ]
    frame = pd.DataFrame(rows, columns=list(RECORD_COLUMNS))
    for column in ("fooled", "models"):
        frame[column] = [list(v or []) for v in frame[column]]
    frame["tries"] = frame["tries"].fillna(0).astype(int)
    frame["seconds"] = pd.to_numeric(frame["seconds"], errors="coerce").astype(float)
    frame["study_link"] = frame["study_link"].fillna(False).astype(bool)
    return frame


def _ratio(numerator: float, denominator: float) -> float:
    return float(numerator) / float(denominator) if denominator else float("nan")


def _group_figures(
    group: pd.DataFrame, fooling: pd.Series, pay: Mapping[str, float], *, costed: bool
) -> dict[str, Any]:
    kept = group["status"] == "kept"
    retracted = group["status"] == "retracted"
    fooling = fooling & kept
    validated_fooling = fooling & (group["validation"] == "validated")
    decided = kept & group["validation"].isin(DECIDED)
    rejected = kept & (group["validation"] == "rejected")
    paid = group["study_link"]
    seconds = group.loc[validated_fooling, "seconds"].dropna()
    paid_writers = sorted(set(group.loc[paid, "writer"]))
    total_pay = float(sum(pay.get(w, 0.0) for w in paid_writers))
    paid_validated = int((validated_fooling & paid).sum())
    out: dict[str, Any] = {
        "items": int(len(group)),
        "kept": int(kept.sum()),
        "retracted": int(retracted.sum()),
        "fooling": int(fooling.sum()),
        "validated_fooling": int(validated_fooling.sum()),
        "decided": int(decided.sum()),
        "rejected": int(rejected.sum()),
        "tries": int(group["tries"].sum()),
        "study_link_writers": len(paid_writers),
        "study_link_validated_fooling": paid_validated,
        "pay": round(total_pay, 2) if costed and paid_writers else float("nan"),
    }
    out["model_error_rate"] = _ratio(out["fooling"], out["kept"])
    out["validated_model_error_rate"] = _ratio(out["validated_fooling"], out["kept"])
    out["tries_per_fooling_item"] = _ratio(out["tries"], out["fooling"])
    out["retraction_rate"] = _ratio(out["retracted"], out["kept"] + out["retracted"])
    out["rejection_rate"] = _ratio(out["rejected"], out["decided"])
    out["median_seconds_per_validated_fooling_item"] = (
        float(np.median(seconds)) if len(seconds) else float("nan")
    )
    out["cost_per_validated_fooling_item"] = (
        _ratio(total_pay, paid_validated) if costed and paid_writers else float("nan")
    )
    return out


def _is_fooling(frame: pd.DataFrame) -> pd.Series:
    return frame["verdict"].isin(FOOLING_VERDICTS)


def figures_by(
    items: pd.DataFrame, level: str, *, pay: Mapping[str, float] | None = None, collection: str = ""
) -> pd.DataFrame:
    """One row per writer, round, model or the whole collection (``level``): the key column,
    the counts (``COUNT_COLUMNS``) and the figures (``FIGURE_COLUMNS``), rows sorted by key."""
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}: one of {', '.join(LEVELS)}")
    pay = pay or {}
    columns = [level, *COUNT_COLUMNS, *FIGURE_COLUMNS]
    rows: list[dict[str, Any]] = []
    if level == "collection":
        rows.append({"collection": collection, **_group_figures(items, _is_fooling(items), pay, costed=True)})
    elif level == "model":
        names = sorted({name for models in items["models"] for name in models})
        for name in names:
            group = items[[name in models for models in items["models"]]]
            fooled = pd.Series([name in f for f in group["fooled"]], index=group.index, dtype=bool)
            rows.append({"model": name, **_group_figures(group, fooled, pay, costed=False)})
    else:
        for key, group in items.groupby(level, sort=True):
            rows.append({level: key, **_group_figures(group, _is_fooling(group), pay, costed=True)})
    return pd.DataFrame(rows, columns=columns)


def rescore_figures(rescores: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per (model, round the items were written in, round that re-scored them):
    how many it re-scored, how many fool it (verdict both or one), how many of those are
    validated, and the two error rates over the items re-scored."""
    rows = []
    frame = pd.DataFrame(
        list(rescores), columns=["model", "written_in", "rescored_in", "verdict", "validation"]
    )
    for (model, written_in, rescored_in), group in frame.groupby(
        ["model", "written_in", "rescored_in"], sort=True
    ):
        fooling = group["verdict"].isin(FOOLING_VERDICTS)
        validated = fooling & (group["validation"] == "validated")
        rows.append(
            {
                "model": model,
                "written_in": int(written_in),
                "rescored_in": int(rescored_in),
                "rescored": int(len(group)),
                "fooling": int(fooling.sum()),
                "validated_fooling": int(validated.sum()),
                "model_error_rate": _ratio(fooling.sum(), len(group)),
                "validated_model_error_rate": _ratio(validated.sum(), len(group)),
            }
        )
    return pd.DataFrame(rows, columns=list(RESCORE_COLUMNS))


def all_figures(
    records: Iterable[Mapping[str, Any]],
    *,
    pay: Mapping[str, float] | None = None,
    collection: str = "",
    rescores: Iterable[Mapping[str, Any]] = (),
) -> dict[str, pd.DataFrame]:
    """Every table of one collection (``TABLES``): each level's frame of its records, and
    the re-scores of its earlier rounds' items."""
    items = items_frame(records)
    tables = {level: figures_by(items, level, pay=pay, collection=collection) for level in LEVELS}
    tables["rescore"] = rescore_figures(rescores)
    return tables


def chart_series(
    frame: pd.DataFrame, level: str, figures: Sequence[str]
) -> tuple[list[str], list[tuple[str, list[float | None]]]]:
    """(groups, series) for ``core.charts.bar_chart``: one group per row of ``frame`` (its
    key as text), one series per figure; a missing value draws no bar."""
    groups = [str(key) for key in frame[level]]
    series = []
    for figure in figures:
        values = [None if pd.isna(v) else float(v) for v in frame[figure]]
        series.append((figure.replace("_", " "), values))
    return groups, series
