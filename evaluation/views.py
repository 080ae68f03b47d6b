"""Evaluation pages: runs (start, progress), leaderboards with charts, run comparison."""

from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any

import pandas as pd
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render

from core.charts import BarChart, bar_chart
from core.downloads import FORMATS, table_download
from core.errors import NotFound
from core.tables import cell, frame_records
from core.uploads import refused_uploads
from core.web import enqueue_after_commit
from evaluation import analysis, selectors
from evaluation.forms import RunStartForm
from evaluation.models import EvaluationRun, RunStatus
from evaluation.permissions import user_can_evaluate
from evaluation.services import EvaluationError, evaluation_run_start
from evaluation.tasks import evaluation_run_enqueue


def evaluator_required(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    @login_required
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not user_can_evaluate(user=request.user):
            raise PermissionDenied("Evaluations are for researchers and curators.")
        return view(request, *args, **kwargs)

    return wrapped


@evaluator_required
def run_list(request: HttpRequest) -> HttpResponse:
    posted = request.method == "POST"
    form = RunStartForm(
        request.POST if posted else None,
        request.FILES if posted else None,
        refused_uploads=refused_uploads(request) if posted else None,
        releases=selectors.published_release_list(),
        models=selectors.model_list(),
    )
    if posted and form.is_valid():
        try:
            run = evaluation_run_start(**form.service_kwargs(), created_by=request.user)
        except EvaluationError as exc:
            form.add_refusal(exc)
        else:
            enqueue_after_commit(request, f"Run #{run.pk}", lambda: evaluation_run_enqueue(run_id=run.pk))
            return redirect("evaluation:run-detail", run_id=run.pk)
    context = {
        "form": form,
        "runs": selectors.run_list(user=request.user)[:200],
        "releases": selectors.release_list(user=request.user),
        "models": form.models.values(),
    }
    status = (413 if form.too_large else 400) if posted else 200
    return render(request, "evaluation/run_list.html", context, status=status)


def _table_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A table's rows for a template: plain values, the index as ``key``."""
    return frame_records(frame, index=True)


@evaluator_required
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = selectors.run_get(user=request.user, run_id=run_id)
    files = [n for n in RUN_FILES if run.results_dir and (Path(run.results_dir) / n).is_file()]
    context: dict[str, Any] = {
        "run": run,
        # a registry model is shown by its name, never by its place on the server
        "identity": {k: v for k, v in run.model_identity.items() if not (run.model_name and k == "path")},
        "active": run.status in (RunStatus.QUEUED, RunStatus.RUNNING),
        "files": files,
    }
    if getattr(request, "htmx", False):
        # the progress line alone, polled while the run works; it links to the results once done
        return render(request, "evaluation/run_detail.html#progress", context | {"fragment": True})
    if run.status == RunStatus.DONE:
        try:
            table = _table_rows(selectors.run_table(run=run))
        except NotFound as exc:
            context["table_error"] = exc.message
        else:
            context["table"] = table
            context["overall"] = table[0] if table else None
            context["formats"] = FORMATS
            by_key = {row["key"]: row for row in table}
            # ComVE: each subtask's accuracy beside its per-character twin, then C's BLEU
            context["subtasks"] = [
                (
                    by_key[k],
                    by_key.get(f"{k}_norm"),
                    [
                        (key.removeprefix(f"{k}_rule_").replace("_", " "), row)
                        for key, row in by_key.items()
                        if key.startswith(f"{k}_rule_")
                    ],
                    (run.metrics.get(k) or {}).get("rule"),
                )
                for k in ("a", "b")
                if k in by_key
            ]
            context["bleu"] = by_key.get("c")
    return render(request, "evaluation/run_detail.html", context)


@evaluator_required
def run_table_export(request: HttpRequest, run_id: int, fmt: str) -> HttpResponse:
    """The run page's table as CSV or JSON."""
    run = selectors.run_get(user=request.user, run_id=run_id)
    meta = {"run": run.pk, "release": run.release_label, "dataset": run.dataset, "method": run.method}
    return table_download(
        selectors.run_table(run=run), stem=f"run-{run.pk}-table", fmt=fmt, meta=meta, index=True
    )


RUN_FILES = (
    "results.json",
    "predictions.jsonl",
    "subtaskA_answers.csv",
    "subtaskB_answers.csv",
    "subtaskC_answers.csv",
)


@evaluator_required
def run_file(request: HttpRequest, run_id: int, name: str) -> FileResponse:
    """Download one of a run's files (only the names a run writes)."""
    run = selectors.run_get(user=request.user, run_id=run_id)
    path = Path(run.results_dir) / name if run.results_dir else None
    if name not in RUN_FILES or path is None or not path.is_file():
        raise Http404("no such file")
    return FileResponse(path.open("rb"), as_attachment=True, filename=f"run-{run.pk}-{name}")


def _values(frame: pd.DataFrame, column: str) -> list[float | None]:
    return [cell(v) for v in frame[column]] if column in frame else [None] * len(frame)


def _leaderboard_charts(board: pd.DataFrame) -> list[tuple[str, BarChart]]:
    """The leaderboard's charts, drawn from the columns of its table."""
    if board.empty:
        return []
    labels = board["label"].tolist()
    datasets = set(board["dataset"])
    charts = [
        (
            "Overall accuracy",
            bar_chart(
                chart_id="overall",
                title="Overall accuracy",
                groups=labels,
                series=[("accuracy", _values(board, "accuracy"))],
                y_label="accuracy",
                percent=True,
                y_max=1.0,
                chance=0.5 if datasets <= {"wsc", "comve"} else None,
            ),
        )
    ]
    types = [c for c in board.columns if c.startswith("type:")]
    if types:
        title = "Accuracy per knowledge type"
        per_run = [(label, [cell(board.at[i, t]) for t in types]) for i, label in enumerate(labels)]
        charts.append(
            (
                title,
                bar_chart(
                    chart_id="knowledge-types",
                    title=title,
                    groups=[t[5:] for t in types],
                    series=per_run,
                    y_label="accuracy",
                    percent=True,
                    y_max=1.0,
                ),
            )
        )
    if "switchable_n" in board:
        switched = board[board["switchable_n"].fillna(0) > 0]
        title = "Switchable subset: unswitched vs switched, and consistency"
        charts.append(
            (
                title,
                bar_chart(
                    chart_id="switchable",
                    title=title,
                    groups=switched["label"].tolist(),
                    series=[
                        (name, _values(switched, column))
                        for name, column in (
                            ("unswitched", "unswitched"),
                            ("switched", "switched"),
                            ("consistency", "consistency"),
                        )
                    ],
                    percent=True,
                    y_max=1.0,
                    chance=0.5,
                ),
            )
        )
    return charts


@evaluator_required
def leaderboard(request: HttpRequest, name: str, version: str) -> HttpResponse:
    board = selectors.leaderboard(user=request.user, release_name=name, release_version=version)
    context = {
        "name": name,
        "version": version,
        "rows": frame_records(board),
        "charts": _leaderboard_charts(board),
        "formats": FORMATS,
    }
    return render(request, "evaluation/leaderboard.html", context)


@evaluator_required
def leaderboard_export(request: HttpRequest, name: str, version: str, fmt: str) -> HttpResponse:
    """The leaderboard's table (every column its charts draw) as CSV or JSON."""
    board = selectors.leaderboard(user=request.user, release_name=name, release_version=version)
    meta = {"release": f"{name}@{version}"}
    return table_download(board, stem=f"leaderboard-{name}-{version}", fmt=fmt, meta=meta)


def _compared_runs(request: HttpRequest) -> tuple[EvaluationRun, EvaluationRun] | None:
    try:
        a_id, b_id = int(request.GET.get("a", "")), int(request.GET.get("b", ""))
    except ValueError:
        return None
    return (
        selectors.run_get(user=request.user, run_id=a_id),
        selectors.run_get(user=request.user, run_id=b_id),
    )


@evaluator_required
def run_compare(request: HttpRequest) -> HttpResponse:
    pair = _compared_runs(request)
    if pair is None:
        runs = selectors.run_list(user=request.user).filter(status=RunStatus.DONE)[:200]
        return render(request, "evaluation/run_compare.html", {"runs": runs, "pick": True})
    run_a, run_b = pair
    show_all = request.GET.get("all") == "1"
    comparison = selectors.run_compare(run_a=run_a, run_b=run_b, differ_only=not show_all)
    context = {
        "run_a": run_a,
        "run_b": run_b,
        "comparison": comparison,
        "rows": comparison["rows"],
        "show_all": show_all,
        "formats": FORMATS,
    }
    return render(request, "evaluation/run_compare.html", context)


@evaluator_required
def run_compare_export(request: HttpRequest, fmt: str) -> HttpResponse:
    """Every item both runs scored, side by side (``differ``: exactly one is right), and
    in JSON McNemar's test too."""
    pair = _compared_runs(request)
    if pair is None:
        raise Http404("name two runs: ?a=ID&b=ID")
    run_a, run_b = pair
    comparison = selectors.run_comparison(run_a=run_a, run_b=run_b)
    meta = {
        "a": run_a.pk,
        "b": run_b.pk,
        "only_in_a": comparison.only_in_a,
        "only_in_b": comparison.only_in_b,
        "mcnemar": comparison.mcnemar.as_dict() if comparison.mcnemar else None,
    }
    return table_download(
        analysis.comparison_table(comparison), stem=f"compare-{run_a.pk}-{run_b.pk}", fmt=fmt, meta=meta
    )
