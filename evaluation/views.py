"""Evaluation pages: runs (start, progress), leaderboards with charts, run comparison."""

from pathlib import Path
from typing import Any

import pandas as pd
from django.core.paginator import Paginator
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from core.charts import BarChart, bar_chart
from core.downloads import FORMATS, table_download
from core.errors import NotFound
from core.roles import role_required, user_is_curator
from core.tables import cell, frame_records
from core.uploads import refused_uploads
from core.web import enqueue_after_commit
from evaluation import selectors
from evaluation.analysis.items import DEFAULT_FILTER, FILTERS, ITEM_COMPARISON_COLUMNS, rounded
from evaluation.evaluators import evaluator_for
from evaluation.forms import RunStartForm
from evaluation.generation_jobs.forms import ExplanationsStartForm
from evaluation.generation_jobs.services import run_explanations_judgeable
from evaluation.models import EvaluationRun, GenerationStatus, RunStatus
from evaluation.permissions import user_can_evaluate
from evaluation.runs.create import evaluation_run_start
from evaluation.runs.errors import EvaluationError
from evaluation.tasks import evaluation_run_enqueue
from releases.dataset import Dataset
from releases.selectors import release_list

EVALUATORS_ONLY = "Evaluations are for researchers and curators."


@role_required(user_can_evaluate, EVALUATORS_ONLY)
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


@role_required(user_can_evaluate, EVALUATORS_ONLY)
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = selectors.run_get(user=request.user, run_id=run_id)
    files = [n for n in RUN_FILES if run.results_dir and (Path(run.results_dir) / n).is_file()]
    context: dict[str, Any] = {
        "run": run,
        # a registry model is shown by its name, never by its place on the server
        "summary": selectors.run_summary(run=run),
        "active": run.status in (RunStatus.QUEUED, RunStatus.RUNNING),
        "files": files,
        # an own collection's release is called by its title, not the data set's label
        "release": release_list(user=request.user)
        .filter(name=run.release_name, version=run.release_version)
        .first(),
    }
    if getattr(request, "htmx", False):
        # the progress line alone, polled while the run works; once done the page reloads
        # (HX-Refresh) and shows the results in place, the link staying for no-htmx use
        response = render(request, "evaluation/run_detail.html#progress", context | {"fragment": True})
        if run.status == RunStatus.DONE:
            response["HX-Refresh"] = "true"
        return response
    if run.status == RunStatus.DONE:
        try:
            table = _table_rows(selectors.run_table(run=run))
        except NotFound as exc:
            context["table_error"] = exc.message
        else:
            context["table"] = table
            context["overall"] = table[0] if table else None
            context["formats"] = FORMATS
            context["results_template"] = evaluator_for(run.dataset).results_template
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
        # one click to an item-by-item comparison with the other finished runs of its release
        context["peers"] = (
            selectors.run_list(user=request.user)
            .filter(status=RunStatus.DONE, release_name=run.release_name, release_version=run.release_version)
            .exclude(pk=run.pk)[:3]
        )
        if run.dataset == Dataset.COMVE:
            context.update(_explanations_context(request, run))
    return render(request, "evaluation/run_detail.html", context)


def _explanations_context(request: HttpRequest, run: EvaluationRun) -> dict[str, Any]:
    """The human score of a ComVE run's explanations, the jobs that put them before people,
    and (for a curator, while none is under way) the form that starts one."""
    jobs = list(run.generation_jobs.select_related("campaign").order_by("-created_at"))
    live = any(job.status != GenerationStatus.FAILED for job in jobs)
    judgeable = run_explanations_judgeable(run)
    return {
        "human": selectors.explanation_human_scores(run_ids=[run.pk]).get(run.pk),
        "explanation_jobs": jobs,
        "explanations_form": ExplanationsStartForm(initial={"run": run.pk})
        if judgeable and not live and user_is_curator(request.user)
        else None,
    }


@role_required(user_can_evaluate, EVALUATORS_ONLY)
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


@role_required(user_can_evaluate, EVALUATORS_ONLY)
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


@role_required(user_can_evaluate, EVALUATORS_ONLY)
def leaderboard(request: HttpRequest, name: str, version: str) -> HttpResponse:
    board = selectors.leaderboard(user=request.user, release_name=name, release_version=version)
    context = {
        "name": name,
        "version": version,
        "rows": frame_records(board),
        "charts": _leaderboard_charts(board),
        "formats": FORMATS,
        # ComVE runs: the human score of their explanations ("—" where none is judged)
        "human_column": "human_score" in board.columns,
    }
    return render(request, "evaluation/leaderboard.html", context)


@role_required(user_can_evaluate, EVALUATORS_ONLY)
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


def _filter(request: HttpRequest) -> str:
    """The comparison's filter (``show``); ``all=1``, the address of earlier pages, is "all"."""
    show = request.GET.get("show") or ("all" if request.GET.get("all") == "1" else DEFAULT_FILTER)
    if show not in FILTERS:
        raise NotFound(f"no filter {show!r}: choose one of the filters on the page")
    return show


COMPARE_PAGE_SIZE = 50


@role_required(user_can_evaluate, EVALUATORS_ONLY)
def run_compare(request: HttpRequest) -> HttpResponse:
    pair = None if request.GET.get("pick") else _compared_runs(request)
    if pair is None:
        runs = selectors.run_list(user=request.user).filter(status=RunStatus.DONE)[:200]
        context: dict[str, Any] = {"runs": runs, "pick": True}
        # the picker sent without a run in one of its lists (a link with ?a= alone fills it in)
        if not request.GET.get("pick") and "a" in request.GET and "b" in request.GET:
            context["pick_error"] = "Choose run A and run B from the lists."
        return render(
            request, "evaluation/run_compare.html", context, status=400 if "pick_error" in context else 200
        )
    run_a, run_b = pair
    show = _filter(request)
    comparison = selectors.run_compare(run_a=run_a, run_b=run_b, show=show)
    page = Paginator(comparison["items"].to_dict("records"), COMPARE_PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    for row in page.object_list:
        row["a_shown"], row["b_shown"] = rounded(row["a_scores"]), rounded(row["b_scores"])
    context = {
        "run_a": run_a,
        "run_b": run_b,
        "comparison": comparison,
        "page": page,
        "show": show,
        "show_label": FILTERS[show],
        "filters": [(key, label, comparison["counts"][key]) for key, label in FILTERS.items()],
        "formats": FORMATS,
        "release": _release_of(run_a),
    }
    return render(request, "evaluation/run_compare.html", context)


def _release_of(run: EvaluationRun) -> dict[str, str] | None:
    """The published release a run scored (its items link to the release's item pages)."""
    published = selectors.published_release_list()
    found = next(
        (r for r in published if (r.name, r.version) == (run.release_name, run.release_version)), None
    )
    return {"name": found.name, "version": found.version} if found else None


@role_required(user_can_evaluate, EVALUATORS_ONLY)
def run_compare_export(request: HttpRequest, fmt: str) -> HttpResponse:
    """The comparison page's rows (its filter, every page) with the items' texts, and in
    JSON McNemar's test on every shared item too. Scores are unrounded here."""
    pair = _compared_runs(request)
    if pair is None:
        raise Http404("name two runs: ?a=ID&b=ID")
    run_a, run_b = pair
    show = request.GET.get("show") or "all"
    if show not in FILTERS:
        raise NotFound(f"no filter {show!r}: choose one of the filters on the page")
    comparison = selectors.run_compare(run_a=run_a, run_b=run_b, show=show)
    table = comparison["items"][ITEM_COMPARISON_COLUMNS]
    meta = {
        "a": run_a.pk,
        "b": run_b.pk,
        "filter": show,
        "only_in_a": comparison["only_in_a"],
        "only_in_b": comparison["only_in_b"],
        "mcnemar": comparison["mcnemar"],
    }
    return table_download(table, stem=f"compare-{run_a.pk}-{run_b.pk}", fmt=fmt, meta=meta)
