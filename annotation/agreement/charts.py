"""Inline SVG bar charts drawn on the server (no JavaScript, no CDN). No Django imports.

Every piece of text is escaped here (labels may be usernames or other crowd text), so the
returned markup is safe to insert into a page as is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

PALETTE = ("#3b6ea8", "#d98c2b", "#4f9a5a", "#b5475b", "#7a5fa8", "#5a8f99", "#9a7b4f")


def _nice_max(value: float) -> float:
    if value <= 0:
        return 1.0
    exponent = math.floor(math.log10(value))
    base = 10.0**exponent
    for step in (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0):
        if value <= step * base:
            return step * base
    return 10.0 * base


def _fmt(value: float, percent: bool) -> str:
    if percent:
        return f"{value * 100:.0f}%"
    return f"{value:g}" if value != int(value) else str(int(value))


def bar_chart_svg(
    *,
    chart_id: str,
    title: str,
    x_labels: Sequence[str],
    series: Sequence[tuple[str, Sequence[float | None]]],
    y_label: str = "",
    percent: bool = False,
    y_max: float | None = None,
    width: int = 680,
    height: int = 300,
) -> str:
    """Grouped vertical bars: one group per x label, one bar per series. None = no bar."""
    left, right, top, bottom = 56, 16, 34, 70
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [v for _, vals in series for v in vals if v is not None]
    top_value = y_max if y_max is not None else _nice_max(max(values, default=0.0))
    n_groups, n_series = max(len(x_labels), 1), max(len(series), 1)
    group_w = plot_w / n_groups
    bar_w = max(group_w * 0.8 / n_series, 1.0)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" data-chart="{escape(chart_id)}" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" aria-labelledby="{escape(chart_id)}-title">',
        f'<title id="{escape(chart_id)}-title">{escape(title)}</title>',
        f'<text x="{left}" y="18" font-size="14" font-weight="bold">{escape(title)}</text>',
    ]
    for tick in range(5):
        tick_value = top_value * tick / 4
        y = top + plot_h - plot_h * tick / 4
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
        parts.append(
            f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">{escape(_fmt(tick_value, percent))}</text>'
        )
    if y_label:
        parts.append(
            f'<text x="14" y="{top + plot_h / 2:.1f}" font-size="11" text-anchor="middle" '
            f'transform="rotate(-90 14 {top + plot_h / 2:.1f})">{escape(y_label)}</text>'
        )
    for g, label in enumerate(x_labels):
        gx = left + g * group_w + group_w * 0.1
        for s, (name, vals) in enumerate(series):
            raw = vals[g] if g < len(vals) else None
            if raw is None:
                continue
            value = float(raw)
            h = plot_h * min(max(value / top_value, 0.0), 1.0) if top_value else 0.0
            x, y = gx + s * bar_w, top + plot_h - h
            parts.append(
                f'<rect class="bar" x="{x:.1f}" y="{y:.1f}" width="{bar_w * 0.95:.1f}" height="{h:.1f}" '
                f'fill="{PALETTE[s % len(PALETTE)]}" data-series="{escape(name)}" data-label="{escape(label)}" '
                f'data-value="{value!r}"><title>{escape(name)} · {escape(label)}: '
                f"{escape(_fmt(value, percent) if percent else str(value))}</title></rect>"
            )
        cx = left + g * group_w + group_w / 2
        # long names often share a prefix (import-<campaign>-rater-N): keep both ends
        text = label if len(label) <= 16 else label[:6] + "…" + label[-9:]
        parts.append(
            f'<text x="{cx:.1f}" y="{top + plot_h + 14}" font-size="11" text-anchor="end" '
            f'transform="rotate(-30 {cx:.1f} {top + plot_h + 14})">{escape(text)}</text>'
        )
    parts.append(
        f'<line x1="{left}" x2="{left + plot_w}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="#444"/>'
    )
    if len(series) > 1:
        lx = left + plot_w
        for s, (name, _) in enumerate(series):
            ly = 14 + s * 14
            parts.append(
                f'<rect x="{lx - 110}" y="{ly - 9}" width="10" height="10" fill="{PALETTE[s % len(PALETTE)]}"/>'
            )
            parts.append(f'<text x="{lx - 96}" y="{ly}" font-size="11">{escape(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)
