"""The adversarial figures' pages: the collections with rounds, and one collection's
figures per writer, round, model and the whole collection (tables and charts, each table
downloadable as CSV and JSON from the same frame)."""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from core.charts import bar_chart
from core.downloads import table_download
from core.roles import role_required
from core.tables import frame_records
from evaluation.adversarial.figures import frames, selectors
from evaluation.adversarial.figures.permissions import FIGURES_ONLY, user_can_see_adversarial_figures

TITLES = {
    "collection": "The collection",
    "round": "Per round",
    "model": "Per model",
    "writer": "Per writer",
    "rescore": "Earlier rounds' items re-scored by later rounds' models",
}


#: The page's words for the frame's columns (the CSV and JSON keep the column names).
HEADINGS = {
    "model_error_rate": "model error rate",
    "validated_model_error_rate": "validated model error rate",
    "tries_per_fooling_item": "tries per fooling item",
    "retraction_rate": "retraction rate",
    "rejection_rate": "rejection rate",
    "median_seconds_per_validated_fooling_item": "median seconds per validated fooling item",
    "cost_per_validated_fooling_item": "cost per validated fooling item",
    "validated_fooling": "validated fooling",
    "decided": "with a validation outcome",
    "study_link_writers": "study-link writers",
    "study_link_validated_fooling": "their validated fooling items",
}


def heading(column: str) -> str:
    """A column as the page names it: its words, or its name with spaces."""
    return HEADINGS.get(column, column.replace("_", " "))


def _cell(column: str, value: Any) -> str:
    """A cell as the page writes it (the downloads keep full precision)."""
    if value is None:
        return "–"
    if column in frames.RATES:
        return f"{100 * float(value):.1f}%"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _page_order(columns: list[str]) -> list[str]:
    """The page's column order: what a row is about, then the figures, then the counts
    (on a 1366-pixel screen the rates were off to the right, past eleven counts). The
    downloads keep the frame's order."""
    figures = [c for c in columns if c in frames.FIGURE_COLUMNS]
    counts = [c for c in columns if c in frames.COUNT_COLUMNS and c not in figures]
    keys = [c for c in columns if c not in figures and c not in counts]
    return keys + figures + counts


@role_required(user_can_see_adversarial_figures, FIGURES_ONLY)
def figures_index(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "evaluation/adversarial_figures_index.html",
        {"collections": selectors.adversarial_collections()},
    )


@role_required(user_can_see_adversarial_figures, FIGURES_ONLY)
def figures_detail(request: HttpRequest, collection: str) -> HttpResponse:
    rounds = selectors.collection_rounds(collection=collection)
    tables = selectors.collection_figures(collection=collection)
    sections = []
    for level in ("collection", "round", "model", "writer", "rescore"):
        frame = tables[level]
        columns = _page_order([str(c) for c in frame.columns])
        rows = [[_cell(c, record[c]) for c in columns] for record in frame_records(frame)]
        charts = []
        if level not in ("collection", "rescore") and not frame.empty:
            groups, series = frames.chart_series(
                frame, level, ("model_error_rate", "validated_model_error_rate")
            )
            charts.append(
                bar_chart(
                    groups=groups,
                    series=series,
                    chart_id=f"rates-{level}",
                    title=f"Model error rates {TITLES[level].lower()}",
                    y_label="share of kept items",
                    percent=True,
                    y_max=1.0,
                )
            )
        sections.append(
            {
                "level": level,
                "title": TITLES[level],
                "columns": columns,
                "headings": [heading(c) for c in columns],
                "rows": rows,
                "charts": charts,
            }
        )
    context = {"collection": collection, "rounds": rounds, "sections": sections}
    return render(request, "evaluation/adversarial_figures.html", context)


@role_required(user_can_see_adversarial_figures, FIGURES_ONLY)
def figures_table(request: HttpRequest, collection: str, level: str, fmt: str) -> HttpResponse:
    if level not in frames.TABLES:
        raise Http404("no such table")
    selectors.collection_rounds(collection=collection)  # a 404 without rounds
    frame = selectors.collection_figures(collection=collection)[level]
    meta = {
        "collection": collection,
        "level": level,
        "definitions": "/docs/adversarial/#figures-the-crowd-bonus-releases-and-evaluation",
    }
    return table_download(frame, stem=f"adversarial-{collection}-{level}", fmt=fmt, meta=meta)
