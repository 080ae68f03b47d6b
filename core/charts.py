"""Geometry of the charts Winnow draws: bars (grouped or not) and violin plots. No Django.

The functions here compute positions, sizes, axis ticks, label positions and colours and
return plain data; the templates in ``templates/core/`` (``_bar_chart.svg.html``,
``_violin_chart.svg.html``) draw the SVG from it with Django's auto-escaping, so nothing
a crowd worker wrote (annotator names, run labels) is ever marked safe. Inline SVG only:
no JavaScript, no CDN. Coordinates are rounded to 0.1 px to keep the markup short.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: The one palette: series ``i`` is drawn in ``PALETTE[i % len(PALETTE)]``.
PALETTE: tuple[str, ...] = ("#3b6ea8", "#d98c2b", "#4f9a5a", "#b5475b", "#7a5fa8", "#5a8f99", "#9a7b4f")

#: Widest a group label is written under a bar chart; longer ones keep both ends.
LABEL_CHARS = 24


def colour(index: int) -> str:
    """The palette's colour for series number ``index`` (it cycles)."""
    return PALETTE[index % len(PALETTE)]


def _r(value: float) -> float:
    return round(float(value), 1)


def nice_step(span: float, intervals: int = 4, *, whole: bool = False) -> float:
    """The smallest round step (1, 2, 2.5 or 5 times a power of ten) that cuts ``span``
    into at most ``intervals`` parts; ``whole``: a whole number (for counts)."""
    if span <= 0 or not math.isfinite(span):
        return 1.0
    raw = span / intervals
    base = 10.0 ** math.floor(math.log10(raw))
    for multiple in (1.0, 2.0, 2.5, 5.0, 10.0):
        step = multiple * base
        if whole and (step < 1 or abs(step - round(step)) > 1e-9):
            continue
        if raw <= step * (1 + 1e-9):
            return step
    return 10.0 * base


def tick_values(low: float, high: float, step: float) -> list[float]:
    """The multiples of ``step`` from ``low`` to ``high`` (both included when they are multiples)."""
    first = math.ceil(low / step - 1e-9)
    last = math.floor(high / step + 1e-9)
    return [round(k * step, 12) for k in range(first, last + 1)]


def format_number(value: float, step: float = 1.0) -> str:
    """``value`` with as many decimals as ``step`` needs (25 -> "25", 0.25 -> "0.25")."""
    decimals = 0
    while decimals < 6 and abs(round(step, decimals) - step) > 1e-9 * max(1.0, abs(step)):
        decimals += 1
    return f"{value:.{decimals}f}"


def format_percent(value: float) -> str:
    return f"{100 * value:.0f}%"


@dataclass(frozen=True)
class Tick:
    """A gridline at height ``y`` with its label ``text``."""

    y: float
    text: str


@dataclass(frozen=True)
class Frame:
    """The plot area of a chart and its y axis.

    The drawing spans ``width`` x ``height``; the plot runs from ``left`` to ``right`` and
    from ``top`` down to ``baseline``. Gridlines at ``ticks`` carry labels right-aligned
    at ``tick_x``; ``y_label`` (if any) is written upwards, centred on (``y_label_x``,
    ``y_label_y``).
    """

    width: int
    height: int
    left: float
    right: float
    top: float
    baseline: float
    ticks: tuple[Tick, ...]
    y_label: str = ""

    @property
    def tick_x(self) -> float:
        return self.left - 6

    @property
    def y_label_x(self) -> float:
        return 14.0

    @property
    def y_label_y(self) -> float:
        return _r((self.top + self.baseline) / 2)


@dataclass(frozen=True)
class Bar:
    """One bar: the value of ``series`` in ``group``. A missing value (None) is not drawn
    but keeps its place (and its row in a table of the numbers)."""

    group: str
    series: str
    value: float | None
    text: str
    x: float
    y: float
    width: float
    height: float
    colour: str

    @property
    def drawn(self) -> bool:
        return self.value is not None


@dataclass(frozen=True)
class Label:
    """A text at (``x``, ``y``): ``text`` is what fits, ``full`` the whole of it."""

    text: str
    full: str
    x: float
    y: float


@dataclass(frozen=True)
class LegendEntry:
    name: str
    colour: str


@dataclass(frozen=True)
class BarChart:
    """Vertical bars grouped by x label. Group labels are written rotated by
    ``label_angle`` degrees about their anchor; ``chance_y`` is a dashed line at chance."""

    chart_id: str
    title: str
    frame: Frame
    bars: tuple[Bar, ...]
    labels: tuple[Label, ...]
    legend: tuple[LegendEntry, ...]
    chance_y: float | None
    label_angle: int = -30


def short_label(text: str, limit: int = LABEL_CHARS) -> str:
    """``text`` cut to ``limit`` characters keeping both ends: long names often share a
    prefix (``import-<campaign>-rater-N``) or a suffix (``(partial)``)."""
    if len(text) <= limit:
        return text
    head = (limit - 1) // 2 - 1
    return text[:head] + "…" + text[-(limit - 1 - head) :]


def bar_chart(
    *,
    groups: Sequence[str],
    series: Sequence[tuple[str, Sequence[float | None]]],
    chart_id: str = "chart",
    title: str = "",
    y_label: str = "",
    percent: bool = False,
    y_max: float | None = None,
    chance: float | None = None,
    width: int = 680,
    height: int = 300,
) -> BarChart:
    """One group of bars per entry of ``groups``, one bar per ``(name, values)`` of
    ``series`` in each (``values[g]`` belongs to ``groups[g]``; None draws no bar).

    The y axis runs from 0 to ``y_max`` (default: a round number at or above the largest
    value); ``percent`` writes values as percentages of 1. Many groups widen the chart
    so that each keeps room for its label.
    """
    labels_chars = max((len(short_label(g)) for g in groups), default=1)
    n_groups, n_series = max(len(groups), 1), max(len(series), 1)
    # Labels are written at -30 degrees and end under their group (about 6 px a
    # character): room below the plot for their height, and at the left for the first.
    right_margin, top, bottom = 16, 12, min(104, max(36, 22 + round(3.3 * labels_chars)))
    left = 56
    for _ in range(2):
        plot_w = max(width - left - right_margin, n_groups * max(24, 8 * n_series))
        left = max(56, math.ceil(5.3 * labels_chars + 4 - plot_w / n_groups / 2))
    plot_w = max(width - left - right_margin, n_groups * max(24, 8 * n_series))
    plot_h = height - top - bottom
    width = int(math.ceil(left + plot_w + right_margin))
    baseline = top + plot_h
    values = [v for _, vals in series for v in vals if v is not None]
    if y_max is None:
        largest = max(max(values, default=0.0), 0.0)
        step = nice_step(largest, whole=not percent and all(float(v).is_integer() for v in values))
        top_value = max(step * math.ceil(largest / step - 1e-9), step)
    else:
        top_value = y_max if y_max > 0 else 1.0
        step = nice_step(top_value)

    def y_of(value: float) -> float:
        return baseline - plot_h * min(max(value / top_value, 0.0), 1.0)

    ticks = tuple(
        Tick(_r(y_of(t)), format_percent(t) if percent else format_number(t, step))
        for t in tick_values(0.0, top_value, step)
    )
    group_w = plot_w / n_groups
    bar_w = max(group_w * 0.8 / n_series, 1.0)
    bars: list[Bar] = []
    labels: list[Label] = []
    for g, group in enumerate(groups):
        gx = left + g * group_w + group_w * 0.1
        for s, (name, vals) in enumerate(series):
            raw = vals[g] if g < len(vals) else None
            value = None if raw is None else float(raw)
            y = baseline if value is None else y_of(value)
            if value is None:
                text = "n/a"
            elif percent:
                text = f"{100 * value:.1f}%"
            else:
                text = f"{value:g}"
            bars.append(
                Bar(
                    group=group,
                    series=name,
                    value=value,
                    text=text,
                    x=_r(gx + s * bar_w),
                    y=_r(y),
                    width=_r(bar_w * 0.95),
                    height=_r(baseline - y),
                    colour=colour(s),
                )
            )
        labels.append(Label(short_label(group), group, _r(left + (g + 0.5) * group_w), baseline + 14))
    return BarChart(
        chart_id=chart_id,
        title=title,
        frame=Frame(
            width=width,
            height=height,
            left=left,
            right=_r(left + plot_w),
            top=top,
            baseline=baseline,
            ticks=ticks,
            y_label=y_label,
        ),
        bars=tuple(bars),
        labels=tuple(labels),
        legend=tuple(LegendEntry(name, colour(s)) for s, (name, _) in enumerate(series)),
        chance_y=None if chance is None else _r(y_of(chance)),
    )


# --------------------------------------------------------------------------- violins


def gaussian_kde(values: Sequence[float], grid: Sequence[float] | np.ndarray) -> list[float]:
    """Gaussian kernel density of ``values`` on ``grid``, Scott's bandwidth (as scipy's)."""
    v = np.asarray(values, dtype=np.float64)
    g = np.asarray(grid, dtype=np.float64)
    if v.size == 0:
        return [0.0] * g.size
    sd = float(v.std(ddof=1)) if v.size > 1 else 0.0
    bandwidth = sd * v.size ** (-1.0 / 5.0)
    if bandwidth == 0.0:
        bandwidth = 1e-3  # all values equal: a narrow spike instead of a division by 0
    z = (g[:, None] - v[None, :]) / bandwidth
    density = np.exp(-0.5 * z * z).sum(axis=1) / (v.size * bandwidth * np.sqrt(2 * np.pi))
    return [float(d) for d in density]


@dataclass(frozen=True)
class Violin:
    """One violin centred on ``x``: its outline (an SVG path of numbers only), the
    quartile bar from ``q1_y`` to ``q3_y`` and the median (None when there are no
    values), and its label with the number of values under it."""

    label: str
    n: int
    x: float
    path: str
    q1_y: float | None
    median_y: float | None
    q3_y: float | None
    label_y: float

    @property
    def n_y(self) -> float:
        return self.label_y + 14


@dataclass(frozen=True)
class ViolinChart:
    chart_id: str
    title: str
    frame: Frame
    violins: tuple[Violin, ...]
    fill: str
    stroke: str

    @property
    def title_x(self) -> float:
        return _r(self.frame.width / 2)


def violin_chart(
    series: Sequence[tuple[str, Sequence[float]]],
    *,
    chart_id: str = "violins",
    title: str = "",
    y_label: str = "",
    width: int = 640,
    height: int = 320,
    points: int = 80,
) -> ViolinChart:
    """One violin per ``(label, values)``: a mirrored kernel density estimate over the span
    of its own values (no tails past the smallest and largest), with the median and the
    quartiles. The y axis spans every series' values with 5% to spare."""
    left, right_margin, bottom, top = 48, 8, 40, 28 if title else 12
    plot_h = height - bottom - top
    baseline = top + plot_h
    all_values = [float(v) for _, values in series for v in values]
    lo, hi = (min(all_values), max(all_values)) if all_values else (0.0, 1.0)
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    pad = (hi - lo) * 0.05
    lo, hi = lo - pad, hi + pad

    def y_of(value: float) -> float:
        return top + plot_h * (1 - (value - lo) / (hi - lo))

    step = nice_step(hi - lo, 5)
    ticks = tuple(Tick(_r(y_of(t)), format_number(t, step)) for t in tick_values(lo, hi, step))
    grids = [
        np.linspace(min(v), max(v), points) if len(v) else np.linspace(lo, hi, points) for _, v in series
    ]
    densities = [
        gaussian_kde(values, grid) if len(values) else [0.0] * points
        for (_, values), grid in zip(series, grids, strict=True)
    ]
    peak = max((max(d) for d in densities), default=1.0) or 1.0
    slot = (width - left - right_margin) / max(len(series), 1)
    violins: list[Violin] = []
    for index, ((label, values), density, grid) in enumerate(zip(series, densities, grids, strict=True)):
        cx = left + slot * (index + 0.5)
        half = slot * 0.42
        right = [(cx + half * d / peak, y_of(float(g))) for g, d in zip(grid, density, strict=True)]
        mirror = [(cx - half * d / peak, y_of(float(g))) for g, d in zip(grid, density, strict=True)]
        outline = right + mirror[::-1]
        path = " ".join(f"{'M' if i == 0 else 'L'}{x:.1f},{y:.1f}" for i, (x, y) in enumerate(outline)) + " Z"
        quartiles: list[float | None] = [None, None, None]
        if len(values):
            quartiles = [
                _r(y_of(float(q))) for q in np.percentile(np.asarray(values, dtype=float), [25, 50, 75])
            ]
        violins.append(
            Violin(
                label=label,
                n=len(values),
                x=_r(cx),
                path=path,
                q1_y=quartiles[0],
                median_y=quartiles[1],
                q3_y=quartiles[2],
                label_y=baseline + 16,
            )
        )
    return ViolinChart(
        chart_id=chart_id,
        title=title,
        frame=Frame(
            width=width,
            height=height,
            left=left,
            right=width - right_margin,
            top=top,
            baseline=baseline,
            ticks=ticks,
            y_label=y_label,
        ),
        violins=tuple(violins),
        fill=PALETTE[0],
        stroke=PALETTE[0],
    )
