"""An audit's figures as the commands print them (plain text tables from the page's frames). No Django."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from evaluation.audit.tables import aflite_frame, associativity_frame, baselines_frame, regions_frame


def _text(frame: pd.DataFrame) -> str:
    if frame.empty:
        return "(none)"
    return frame.to_string(index=False, float_format=lambda v: f"{v:.4f}")


def _p_values(frame: pd.DataFrame) -> pd.DataFrame:
    """p-values in scientific notation: four decimals would print 2e-19 as 0.0000."""
    out = frame.copy()
    for column in out.columns:
        if str(column).startswith("binomial p"):
            out[column] = out[column].map(lambda v: "" if pd.isna(v) else f"{v:.2e}")
    return out


def report_lines(results: Mapping[str, Any]) -> list[str]:
    out = [
        f"items: {results.get('items')}  folds: {results.get('folds')} (grouped by {results.get('grouped_by') or 'nothing'})  seed: {results.get('seed')}"
    ]
    out += [
        "",
        "Partial-input baselines (accuracy, 95% Wilson interval, majority, binomial p):",
        _text(_p_values(baselines_frame(results))),
    ]
    if results.get("associativity"):
        out += [
            "",
            "Automatic scores against Trichelair et al.'s associative schemas:",
            _text(associativity_frame(results)),
        ]
    if results.get("by_associativity"):
        frame = pd.DataFrame(results["by_associativity"])[
            ["answer", "subset", "n", "correct", "accuracy", "ci_low", "ci_high"]
        ]
        out += [
            "",
            "Accuracy on the associative and non-associative schemas (Trichelair et al. Table 3):",
            _text(frame),
        ]
    out += ["", "Cartography regions:", _text(regions_frame(results))]
    aflite = results.get("aflite") or {}
    out += [
        "",
        f"AfLite: kept {aflite.get('kept')}, removed {aflite.get('removed')}; parameters {dict(aflite.get('params') or {})}",
        _text(aflite_frame(results)),
    ]
    return out
