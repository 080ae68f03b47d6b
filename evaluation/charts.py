"""Geometry of the inline SVG bar charts (no Django, no JavaScript, no CDN).

Templates draw the rectangles and write the labels (auto-escaped); this module only
computes positions, so that nothing user-written is ever marked safe.
"""

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Bar:
    label: str
    series: str
    value: float | None
    x: float
    y: float
    width: float
    height: float
    colour: str

    @property
    def percent(self) -> str:
        return "n/a" if self.value is None else f"{100 * self.value:.1f}%"


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    bars: list[Bar]
    groups: list[tuple[str, float]]  # (group label, x of its centre)
    series: list[tuple[str, str]]  # (series name, colour) for the legend
    baseline_y: float
    chance_y: float | None


PALETTE = ("#3b6ea8", "#d9822b", "#5a9e5a", "#b04a5a", "#7a5aa8", "#8c8c8c")


def grouped_bars(
    groups: Sequence[str],
    series: Sequence[str],
    values: dict[tuple[str, str], float | None],
    *,
    chance: float | None = None,
    height: int = 220,
    bar_width: int = 18,
    gap: int = 14,
) -> Chart:
    """Bars of accuracies (0..1) grouped by ``groups``, one bar per ``series`` in each group."""
    top, bottom = 10, 40
    plot = height - top - bottom
    group_width = bar_width * max(1, len(series)) + gap
    width = 40 + group_width * max(1, len(groups))
    bars, centres = [], []
    for g, group in enumerate(groups):
        left = 40 + g * group_width
        centres.append((group, left + (group_width - gap) / 2))
        for s, name in enumerate(series):
            value = values.get((group, name))
            h = 0.0 if value is None else max(0.0, min(1.0, value)) * plot
            bars.append(
                Bar(
                    label=group,
                    series=name,
                    value=value,
                    x=left + s * bar_width,
                    y=top + plot - h,
                    width=bar_width - 2,
                    height=h,
                    colour=PALETTE[s % len(PALETTE)],
                )
            )
    return Chart(
        width=width,
        height=height,
        bars=bars,
        groups=centres,
        series=[(name, PALETTE[i % len(PALETTE)]) for i, name in enumerate(series)],
        baseline_y=top + plot,
        chance_y=None if chance is None else top + plot - chance * plot,
    )
