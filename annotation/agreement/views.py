"""Curator pages for agreement: figures with intervals, charts, CSV/JSON of every number."""

from __future__ import annotations

from typing import Any

import pandas as pd
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from annotation.agreement.services import (
    CHARTS,
    GROUP_FIGURES,
    PERCENT_FIGURES,
    SCORE_BINS,
    TABLES,
    agreement_headline_store,
    campaign_agreement_summary,
    campaign_chart,
    campaign_figures,
    campaign_judgments,
    campaign_table,
    figures_by_group,
)
from annotation.models import Campaign
from annotation.task_types import task_type
from core.charts import BarChart, bar_chart
from core.downloads import FORMATS, json_download, table_download
from core.roles import role_required, user_is_curator
from core.tables import frame_records

CURATORS_ONLY = "Agreement figures are for curators."


def _chart_drawing(chart: dict[str, Any]) -> BarChart | None:
    rows = chart["rows"]
    if not rows:
        return None
    cid, title = chart["chart"], chart["title"]
    if cid == "plausibility-by-origin":
        origins = list(dict.fromkeys(r["origin"] for r in rows))
        series = [
            (
                o,
                [
                    next(r["reasons"] for r in rows if r["origin"] == o and r["score"] == s)
                    for s in SCORE_BINS
                ],
            )
            for o in origins
        ]
        return bar_chart(
            chart_id=cid,
            title=title,
            groups=[f"{s:.1f}" for s in SCORE_BINS],
            series=series,
            y_label="reasons",
        )
    if cid == "knowledge-types":
        return bar_chart(
            chart_id=cid,
            title=title,
            groups=[r["knowledge_type"] for r in rows],
            series=[(rows[0]["unit"], [r["count"] for r in rows])],
            y_label=rows[0]["unit"],
        )
    if cid == "annotator-agreement":
        series = [("agreement with the majority", [r["majority_agreement"] for r in rows])]
        if any(r["gold_accuracy"] is not None for r in rows):
            series.append(("gold accuracy", [r["gold_accuracy"] for r in rows]))
        return bar_chart(
            chart_id=cid,
            title=title,
            groups=[r["annotator"] for r in rows],
            series=series,
            percent=True,
            y_max=1.0,
        )
    return None


def _display(value: Any, percent: bool) -> str:
    if value is None or pd.isna(value):
        return "—"
    return f"{value * 100:.2f}%" if percent else f"{value:.4f}"


def _shown(figure: str, value: Any, low: Any, high: Any) -> dict[str, str]:
    """One figure's value and interval as the page prints them (shares as percent)."""
    percent = figure in PERCENT_FIGURES
    has_ci = low is not None and not pd.isna(low)
    return {
        "value": _display(value, percent),
        # an en dash without spaces: a narrow column may break the line after it
        "ci": f"{_display(low, percent)}–{_display(high, percent)}" if has_ci else "",
    }


def _figure_rows(figures: pd.DataFrame) -> list[dict[str, Any]]:
    """The campaign-wide rows of :func:`campaign_figures`, with their printed values."""
    rows = frame_records(figures[figures["scope"] == "campaign"])
    return [r | _shown(r["figure"], r["value"], r["ci_low"], r["ci_high"]) for r in rows]


def _group_rows(figures: pd.DataFrame, scope: str, keys: tuple[str, ...]) -> list[dict[str, Any]]:
    """One scope of :func:`campaign_figures` one row per group, each figure printed."""
    rows = frame_records(figures_by_group(figures, scope))
    for row in rows:
        row["figures"] = [
            _shown(k, row.get(k), row.get(f"{k}_low"), row.get(f"{k}_high"))
            | {"key": k, "undefined": row.get(f"{k}_undefined")}
            for k in keys
        ]
    return rows


@role_required(user_is_curator, CURATORS_ONLY)
def agreement_index(request: HttpRequest) -> HttpResponse:
    campaigns = Campaign.objects.order_by("name")
    return render(request, "annotation/agreement_index.html", {"campaigns": campaigns})


@role_required(user_is_curator, CURATORS_ONLY)
def agreement_detail(request: HttpRequest, name: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, name=name)
    data = campaign_judgments(campaign=campaign)
    summary = campaign_agreement_summary(campaign=campaign, identities=True, data=data)
    # kept for the curator dashboard, which shows it without computing it again
    agreement_headline_store(campaign=campaign, summary=summary)
    charts = []
    if summary["applicable"]:
        for chart_id in CHARTS:
            chart = campaign_chart(campaign=campaign, chart=chart_id, identities=True, data=data)
            # geometry only: templates/core/_bar_chart.svg.html draws it, escaping every text
            chart["drawing"] = _chart_drawing(chart)
            charts.append(chart)
    figures = campaign_figures(summary)
    scopes = [g for g in pd.unique(figures["scope"]) if g not in ("campaign", "answer")]
    groups = [
        row | {"group_by": scope} for scope in scopes for row in _group_rows(figures, scope, GROUP_FIGURES)
    ]
    # the answers in words, as the annotators saw them ("Statement 1", not "0")
    answer_words = task_type(campaign.task).vote_label
    categories = _group_rows(figures, "answer", ("share", "fleiss_kappa"))
    for row in categories:
        row["answer"] = answer_words(str(row["group"]))
    return render(
        request,
        "annotation/agreement_detail.html",
        {
            "campaign": campaign,
            "summary": summary,
            "answers": [answer_words(str(c)) for c in summary.get("categories") or []],
            "figures": _figure_rows(figures),
            "groups": groups,
            "categories": categories,
            "charts": charts,
            "tables": TABLES,
        },
    )


@role_required(user_is_curator, CURATORS_ONLY)
def agreement_export(request: HttpRequest, name: str, fmt: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, name=name)
    if fmt not in FORMATS:
        raise Http404("unknown format")
    summary = campaign_agreement_summary(campaign=campaign, identities=True)
    figures = campaign_figures(summary)
    if fmt == "json":
        # the summary as the dataset card quotes it, and the page's figures as a table
        table = {"columns": list(figures.columns), "rows": frame_records(figures)}
        return json_download(f"{campaign.name}-agreement.json", summary | table)
    return table_download(figures, stem=f"{campaign.name}-agreement", fmt=fmt)


@role_required(user_is_curator, CURATORS_ONLY)
def chart_export(request: HttpRequest, name: str, chart: str, fmt: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, name=name)
    if fmt not in FORMATS or chart not in TABLES:
        raise Http404("unknown chart or format")
    frame = campaign_table(campaign=campaign, chart=chart, identities=True)
    meta = {
        "chart": chart,
        "title": TABLES[chart],
        "campaign": campaign.name,
        "empty": frame.attrs.get("empty"),
    }
    return table_download(frame, stem=f"{campaign.name}-{chart}", fmt=fmt, meta=meta)
