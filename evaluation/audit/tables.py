"""An audit's tables as pandas frames (page and downloads alike) and its cartography map's
geometry. No Django.

The map follows Swayamdipta et al. (2020), Figure 1: confidence (the mean probability
of the gold label over the epochs) up, variability (its standard deviation) across, each
item a dot coloured by correctness (the share of epochs that got it right), with the
paper's three regions named where it draws them: easy-to-learn at the top left (high
confidence, low variability), hard-to-learn at the bottom left, ambiguous to the right.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from core.charts import Tick, format_number, nice_step, tick_values

BASELINE_COLUMNS = {
    "view": "baseline",
    "title": "input",
    "n": "items",
    "correct": "right",
    "accuracy": "accuracy",
    "ci_low": "95% CI low",
    "ci_high": "95% CI high",
    "majority": "majority baseline",
    "p_value": "binomial p (vs majority)",
    "pair_pairs": "twin pairs",
    "pair_correct": "pairs both right",
    "pair_accuracy": "pair accuracy",
    "pair_ci_low": "pair 95% CI low",
    "pair_ci_high": "pair 95% CI high",
}


def baselines_frame(results: Mapping[str, Any]) -> pd.DataFrame:
    """One row per partial-input baseline, then the language model's own answer."""
    rows = [dict(r) for r in results.get("baselines") or []]
    lm = results.get("lm")
    if lm:
        rows.append(
            {"title": "the model's own answer (per-option log-probabilities)", **lm, "view": "lm zero-shot"}
        )
    frame = pd.DataFrame(rows)
    keep = [c for c in BASELINE_COLUMNS if c in frame.columns]
    return frame[keep].rename(columns=BASELINE_COLUMNS) if keep else frame


def aflite_frame(results: Mapping[str, Any]) -> pd.DataFrame:
    """AfLite's counts per iteration, as the algorithm reported them."""
    iterations = (results.get("aflite") or {}).get("iterations") or []
    rows = [it if isinstance(it, Mapping) else {"value": it} for it in iterations]
    frame = pd.DataFrame(rows)
    if not frame.empty and "iteration" not in frame.columns:
        frame.insert(0, "iteration", range(1, len(frame) + 1))
    return frame


def associativity_frame(results: Mapping[str, Any]) -> pd.DataFrame:
    return pd.DataFrame(results.get("associativity") or [])


def subsets_frame(results: Mapping[str, Any]) -> pd.DataFrame:
    return pd.DataFrame(results.get("by_associativity") or [])


def items_frame(per_item: Mapping[str, Sequence[Any]]) -> pd.DataFrame:
    """One row per item: key, label, each baseline's per-item result, the map's values,
    AfLite's iteration of removal (empty: kept) and score."""
    return pd.DataFrame({k: list(v) for k, v in per_item.items()})


def regions_frame(results: Mapping[str, Any]) -> pd.DataFrame:
    regions = (results.get("cartography") or {}).get("regions") or {}
    return pd.DataFrame([{"region": k, "items": v} for k, v in sorted(regions.items())])


# --- the map ------------------------------------------------------------------------------

#: Correctness bins and their colours (dark red: never right; dark blue: always).
CORRECTNESS_COLOURS = ("#b2182b", "#ef8a62", "#d9b25f", "#67a9cf", "#2166ac")
MAP_POINTS = 3000  # the page draws at most this many dots (a seeded sample); the CSV has all


@dataclass(frozen=True)
class Dot:
    x: float
    y: float
    colour: str
    key: str
    text: str


@dataclass(frozen=True)
class RegionLabel:
    text: str
    x: float
    y: float
    anchor: str


@dataclass(frozen=True)
class CartographyMap:
    width: int
    height: int
    left: float
    right: float
    top: float
    baseline: float
    y_ticks: tuple[Tick, ...]
    x_ticks: tuple[Tick, ...]  # Tick.y holds the x position here
    dots: tuple[Dot, ...]
    regions: tuple[RegionLabel, ...]
    legend: tuple[tuple[str, str], ...]
    shown: int
    total: int

    @property
    def x_label_x(self) -> float:
        return _r((self.left + self.right) / 2)

    @property
    def y_label_y(self) -> float:
        return _r((self.top + self.baseline) / 2)

    @property
    def tick_x(self) -> float:
        return self.left - 6


def _r(value: float) -> float:
    return round(float(value), 1)


def cartography_map(
    per_item: Mapping[str, Sequence[Any]], *, width: int = 560, height: int = 420, seed: int = 0
) -> CartographyMap | None:
    confidence = np.asarray(per_item.get("confidence") or [], dtype=np.float64)
    variability = np.asarray(per_item.get("variability") or [], dtype=np.float64)
    correctness = np.asarray(per_item.get("correctness") or [], dtype=np.float64)
    keys = list(per_item.get("key") or [])
    if confidence.size == 0:
        return None
    left, right_margin, top, bottom = 52.0, 16.0, 12.0, 44.0
    right, baseline = width - right_margin, height - bottom
    x_max = max(0.5, float(np.nanmax(variability)) if variability.size else 0.5)
    x_step = nice_step(x_max, 5)
    x_max = x_step * np.ceil(x_max / x_step - 1e-9)

    def x_of(v: float) -> float:
        return left + (right - left) * min(max(v / x_max, 0.0), 1.0)

    def y_of(c: float) -> float:
        return baseline - (baseline - top) * min(max(c, 0.0), 1.0)

    order = np.arange(confidence.size)
    if order.size > MAP_POINTS:
        order = np.sort(np.random.default_rng(seed).choice(order, MAP_POINTS, replace=False))
    dots = []
    for i in order:
        bin_ = min(int(correctness[i] * len(CORRECTNESS_COLOURS)), len(CORRECTNESS_COLOURS) - 1)
        dots.append(
            Dot(
                _r(x_of(variability[i])),
                _r(y_of(confidence[i])),
                CORRECTNESS_COLOURS[bin_],
                str(keys[i]) if i < len(keys) else str(i),
                f"confidence {confidence[i]:.2f}, variability {variability[i]:.2f}, correctness {correctness[i]:.2f}",
            )
        )
    y_ticks = tuple(Tick(_r(y_of(t)), format_number(t, 0.25)) for t in tick_values(0.0, 1.0, 0.25))
    x_ticks = tuple(Tick(_r(x_of(t)), format_number(t, x_step)) for t in tick_values(0.0, x_max, x_step))
    regions = (
        RegionLabel("easy-to-learn", _r(x_of(0.02 * x_max) + 4), _r(y_of(0.97)), "start"),
        RegionLabel("hard-to-learn", _r(x_of(0.02 * x_max) + 4), _r(y_of(0.04)), "start"),
        RegionLabel("ambiguous", _r(x_of(0.78 * x_max)), _r(y_of(0.5)), "middle"),
    )
    n = len(CORRECTNESS_COLOURS)
    legend = tuple(
        (f"correctness {i / n:.1f}–{(i + 1) / n:.1f}", colour) for i, colour in enumerate(CORRECTNESS_COLOURS)
    )
    return CartographyMap(
        width=width,
        height=height,
        left=left,
        right=right,
        top=top,
        baseline=baseline,
        y_ticks=y_ticks,
        x_ticks=x_ticks,
        dots=tuple(dots),
        regions=regions,
        legend=legend,
        shown=len(dots),
        total=int(confidence.size),
    )
