"""Curator pages for agreement: figures with intervals, charts, CSV/JSON of every number."""

from __future__ import annotations

from typing import Any

import pandas as pd
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from annotation.agreement.services import (
    CHARTS,
    SCORE_BINS,
    TABLES,
    campaign_agreement_summary,
    campaign_chart,
    campaign_judgments,
    campaign_table,
)
from annotation.models import Campaign
from core.charts import BarChart, bar_chart
from core.downloads import FORMATS, json_download, table_download
from core.roles import user_is_curator


def _campaign_for_curator(request: HttpRequest, name: str) -> Campaign:
    if not user_is_curator(request.user):
        raise PermissionDenied("Agreement figures are for curators.")
    return get_object_or_404(Campaign, name=name)


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


def _display(value: float | None, percent: bool) -> str:
    if value is None:
        return "—"
    return f"{value * 100:.2f}%" if percent else f"{value:.4f}"


def _figure_rows(block: dict[str, Any], labels: dict[str, tuple[str, bool]]) -> list[dict[str, Any]]:
    rows = []
    for key, (label, percent) in labels.items():
        fig = block[key]
        rows.append(
            {
                "key": key,
                "label": label,
                "value": _display(fig["value"], percent),
                "ci": (
                    f"{_display(fig['ci_low'], percent)} – {_display(fig['ci_high'], percent)}"
                    if fig.get("ci_low") is not None
                    else ""
                ),
                "undefined": fig["undefined"],
                "extra": fig.get("judgments_compared", fig.get("judgments_on_gold")),
            }
        )
    return rows


TABLE_FIGURES = {
    "fleiss_kappa": ("Fleiss' kappa", False),
    "pairwise_agreement": ("Average pairwise agreement", True),
    "krippendorff_alpha": ("Krippendorff's alpha (nominal)", False),
}
ALL_FIGURES = TABLE_FIGURES | {
    "majority_agreement": ("Agreement with the majority (leave-one-out)", True),
    "gold_accuracy": ("Accuracy on gold items", True),
}


@login_required
def agreement_index(request: HttpRequest) -> HttpResponse:
    if not user_is_curator(request.user):
        raise PermissionDenied("Agreement figures are for curators.")
    campaigns = Campaign.objects.order_by("name")
    return render(request, "annotation/agreement_index.html", {"campaigns": campaigns})


@login_required
def agreement_detail(request: HttpRequest, name: str) -> HttpResponse:
    campaign = _campaign_for_curator(request, name)
    data = campaign_judgments(campaign=campaign)
    summary = campaign_agreement_summary(campaign=campaign, identities=True, data=data)
    charts = []
    if summary["applicable"]:
        for chart_id in CHARTS:
            chart = campaign_chart(campaign=campaign, chart=chart_id, identities=True, data=data)
            # geometry only: templates/core/_bar_chart.svg.html draws it, escaping every text
            chart["drawing"] = _chart_drawing(chart)
            charts.append(chart)
    figures, groups, categories = [], [], []
    if summary["applicable"]:
        figures = _figure_rows(summary["figures"], ALL_FIGURES)
        for group in summary["groups"]:
            groups.append(group | {"figures": _figure_rows(group, TABLE_FIGURES)})
        for cat in summary["per_category"]:
            categories.append(
                cat
                | {
                    "share_display": _display(cat["share"], True),
                    "kappa_display": _display(cat["fleiss_kappa"], False),
                }
            )
    return render(
        request,
        "annotation/agreement_detail.html",
        {
            "campaign": campaign,
            "summary": summary,
            "figures": figures,
            "groups": groups,
            "categories": categories,
            "charts": charts,
            "tables": TABLES,
        },
    )


FIGURE_COLUMNS = ["scope", "group", "figure", "value", "ci_low", "ci_high", "undefined"]


def _summary_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    if not summary.get("applicable"):
        return rows
    for key, fig in summary["figures"].items():
        if isinstance(fig, dict):
            rows.append({"scope": "campaign", "group": "", "figure": key} | fig)
    for cat in summary["per_category"]:
        rows.append(
            {
                "scope": "answer",
                "group": cat["category"],
                "figure": "fleiss_kappa",
                "value": cat["fleiss_kappa"],
                "undefined": cat["undefined"],
            }
        )
    for group in summary["groups"]:
        for key in ("fleiss_kappa", "pairwise_agreement", "krippendorff_alpha"):
            rows.append({"scope": group["group_by"], "group": group["group"], "figure": key} | group[key])
    return rows


@login_required
def agreement_export(request: HttpRequest, name: str, fmt: str) -> HttpResponse:
    campaign = _campaign_for_curator(request, name)
    if fmt not in FORMATS:
        raise Http404("unknown format")
    summary = campaign_agreement_summary(campaign=campaign, identities=True)
    if fmt == "json":
        return json_download(f"{campaign.name}-agreement.json", summary)
    figures = pd.DataFrame(_summary_rows(summary), columns=FIGURE_COLUMNS)
    return table_download(figures, stem=f"{campaign.name}-agreement", fmt=fmt)


@login_required
def chart_export(request: HttpRequest, name: str, chart: str, fmt: str) -> HttpResponse:
    campaign = _campaign_for_curator(request, name)
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
