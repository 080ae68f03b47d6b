"""The violin plot of Qasemi et al.'s figure 2 as inline SVG (no JavaScript, no CDN).

Each series is drawn as a mirrored kernel density estimate (``math.gaussian_kde``) with
its median and quartiles. Only numbers and the fixed labels given by the caller go in.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import numpy as np

from evaluation.cloze.math import gaussian_kde


def violin_svg(
    series: Sequence[tuple[str, Sequence[float]]],
    *,
    title: str = "",
    width: int = 640,
    height: int = 320,
    points: int = 80,
) -> str:
    """One violin per (label, values); the y axis spans all values."""
    margin_left, margin_bottom, margin_top = 48, 40, 28 if title else 12
    plot_h = height - margin_bottom - margin_top
    all_values = [float(v) for _, values in series for v in values]
    lo, hi = (min(all_values), max(all_values)) if all_values else (0.0, 1.0)
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    pad = (hi - lo) * 0.05
    lo, hi = lo - pad, hi + pad

    def grid_of(values: Sequence[float]) -> np.ndarray:
        # each violin spans its own data (no tails drawn past the smallest and largest value)
        if not len(values):
            return np.linspace(lo, hi, points)
        return np.linspace(min(values), max(values), points)

    grids = [grid_of(values) for _, values in series]

    def y(value: float) -> float:
        return margin_top + plot_h * (1 - (value - lo) / (hi - lo))

    slot = (width - margin_left) / max(len(series), 1)
    densities = [
        gaussian_kde(values, grid) if len(values) else [0.0] * points
        for (_, values), grid in zip(series, grids, strict=True)
    ]
    peak = max((max(d) for d in densities), default=1.0) or 1.0
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="{escape(title or "violin plot")}">',
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
    ]
    if title:
        parts.append(
            f'<text x="{width / 2:.1f}" y="16" text-anchor="middle" font-size="13">{escape(title)}</text>'
        )
    for tick in np.linspace(lo + pad, hi - pad, 5):
        ty = y(float(tick))
        parts.append(
            f'<line x1="{margin_left}" x2="{width}" y1="{ty:.1f}" y2="{ty:.1f}" stroke="#ddd"/>'
            f'<text x="{margin_left - 6}" y="{ty + 4:.1f}" text-anchor="end" font-size="11">{tick:.2f}</text>'
        )
    for index, ((label, values), density, grid) in enumerate(zip(series, densities, grids, strict=True)):
        cx = margin_left + slot * (index + 0.5)
        half = slot * 0.42
        right = [(cx + half * d / peak, y(float(g))) for g, d in zip(grid, density, strict=True)]
        left = [(cx - half * d / peak, y(float(g))) for g, d in zip(grid, density, strict=True)]
        outline = right + list(reversed(left))
        path = " ".join(f"{'M' if i == 0 else 'L'}{px:.1f},{py:.1f}" for i, (px, py) in enumerate(outline))
        parts.append(f'<path d="{path} Z" fill="#9ecae1" stroke="#3182bd" stroke-width="1"/>')
        if len(values):
            q1, median, q3 = (float(q) for q in np.percentile(np.asarray(values, dtype=float), [25, 50, 75]))
            parts.append(
                f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{y(q1):.1f}" y2="{y(q3):.1f}" stroke="#333" stroke-width="4"/>'
                f'<circle cx="{cx:.1f}" cy="{y(median):.1f}" r="3" fill="white" stroke="#333"/>'
            )
        parts.append(
            f'<text x="{cx:.1f}" y="{height - margin_bottom + 16}" text-anchor="middle" font-size="11">'
            f"{escape(label)}</text>"
            f'<text x="{cx:.1f}" y="{height - margin_bottom + 30}" text-anchor="middle" font-size="10" '
            f'fill="#666">n = {len(values)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
