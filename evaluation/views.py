"""Evaluation pages: runs (start, progress), leaderboards with charts, run comparison."""

import uuid
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render

from core.charts import bar_chart
from core.uploads import refused_uploads, upload_name
from evaluation import selectors
from evaluation.forms import RunStartForm
from evaluation.metrics.common import knowledge_type_order
from evaluation.models import RunStatus
from evaluation.permissions import user_can_evaluate
from evaluation.services import EvaluationError, PredictionsRefused, evaluation_run_create
from evaluation.tasks import evaluation_run_enqueue


def evaluator_required(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    @login_required
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not user_can_evaluate(user=request.user):
            raise PermissionDenied("Evaluations are for researchers and curators.")
        return view(request, *args, **kwargs)

    return wrapped


def _save_upload(upload: UploadedFile) -> Path:
    """Keep an uploaded predictions file under WINNOW_UPLOAD_DIR, where the model registry
    never looks; the name is ours (the readers tell the format from the content)."""
    folder = Path(settings.WINNOW_UPLOAD_DIR) / "predictions"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{uuid.uuid4().hex}.upload"
    with path.open("wb") as handle:
        for chunk in upload.chunks():
            handle.write(chunk)
    return path


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
        data = form.cleaned_data
        upload = data["predictions"]
        saved = _save_upload(upload) if upload else None
        try:
            run = evaluation_run_create(
                release=data["release"],
                method=data["method"],
                model_name=data["model"],
                predictions_path=str(saved) if saved else "",
                predictions_name=upload_name(upload.name or "predictions") if upload else "",
                seed=data["seed"] or 0,
                limit=data["limit"],
                generate_explanations=data["generate_explanations"],
                start_token=data["start_token"] or None,
                created_by=request.user,
            )
        except EvaluationError as exc:
            if saved is not None:
                saved.unlink(missing_ok=True)  # a refused upload is not kept
            if isinstance(exc, PredictionsRefused):
                form.add_error("predictions", f"{exc}; the file was not kept.")
            else:
                form.add_error(None, str(exc))
        else:
            sent: list[bool] = []  # sent once the run row is committed (at once, outside a transaction)
            transaction.on_commit(lambda: sent.append(evaluation_run_enqueue(run_id=run.pk)))
            if sent == [False]:  # the broker is down: the run is marked failed and says why
                messages.error(request, f"Run #{run.pk} could not be queued: see below.")
            else:
                messages.success(request, f"Run #{run.pk} queued.")
            return redirect("evaluation:run-detail", run_id=run.pk)
    context = {
        "form": form,
        "runs": selectors.run_list(user=request.user)[:200],
        "releases": selectors.release_list(user=request.user),
        "models": form.models.values(),
    }
    status = (413 if form.too_large else 400) if posted else 200
    return render(request, "evaluation/run_list.html", context, status=status)


@evaluator_required
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = selectors.run_get(user=request.user, run_id=run_id)
    files = [n for n in RUN_FILES if run.results_dir and (Path(run.results_dir) / n).is_file()]
    metrics = run.metrics or {}
    # JSON storage (jsonb) does not keep key order: put the paper's order back.
    knowledge_types = sorted(
        (metrics.get("knowledge_types") or {}).items(), key=lambda kv: knowledge_type_order(kv[0])
    )
    type_count = [
        (k, metrics["type_count"][k])
        for k in ("single", "multiple", "none")
        if k in metrics.get("type_count", {})
    ]
    context = {
        "run": run,
        # a registry model is shown by its name, never by its place on the server
        "identity": {k: v for k, v in run.model_identity.items() if not (run.model_name and k == "path")},
        "active": run.status in (RunStatus.QUEUED, RunStatus.RUNNING),
        "files": files,
        "knowledge_types": knowledge_types,
        "type_count": type_count,
    }
    if getattr(request, "htmx", False):
        return render(request, "evaluation/run_detail.html#progress", context)
    return render(request, "evaluation/run_detail.html", context)


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


def _accuracy(metrics: dict[str, Any], *path: str) -> float | None:
    node: Any = metrics
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node if isinstance(node, int | float) else None


@evaluator_required
def leaderboard(request: HttpRequest, name: str, version: str) -> HttpResponse:
    runs = selectors.leaderboard(user=request.user, release_name=name, release_version=version)
    labels = [f"#{r.pk} {r.model_label} ({r.method})" for r in runs]
    charts = []
    datasets = {r.dataset for r in runs}
    if runs:
        overall = bar_chart(
            chart_id="overall",
            title="Overall accuracy",
            groups=labels,
            series=[("accuracy", [r.metrics.get("summary", {}).get("accuracy") for r in runs])],
            y_label="accuracy",
            percent=True,
            y_max=1.0,
            chance=0.5 if datasets <= {"wsc", "comve"} else None,
        )
        charts.append(("Overall accuracy", overall))
        types = sorted(
            {t for r in runs for t in r.metrics.get("knowledge_types", {})}, key=knowledge_type_order
        )
        if types:
            per_run = []
            for lab, r in zip(labels, runs, strict=True):
                values = []
                for t in types:
                    k = r.metrics.get("knowledge_types", {}).get(t, {})
                    values.append(k.get("accuracy") if "accuracy" in k else _accuracy(k, "best", "accuracy"))
                per_run.append((lab, values))
            charts.append(
                (
                    "Accuracy per knowledge type",
                    bar_chart(
                        chart_id="knowledge-types",
                        title="Accuracy per knowledge type",
                        groups=types,
                        series=per_run,
                        y_label="accuracy",
                        percent=True,
                        y_max=1.0,
                    ),
                )
            )
        switched = [
            (lab, r) for lab, r in zip(labels, runs, strict=True) if _accuracy(r.metrics, "switchable", "n")
        ]
        if switched:
            title = "Switchable subset: unswitched vs switched, and consistency"
            charts.append(
                (
                    title,
                    bar_chart(
                        chart_id="switchable",
                        title=title,
                        groups=[lab for lab, _ in switched],
                        series=[
                            (name, [_accuracy(r.metrics, "switchable", key) for _, r in switched])
                            for name, key in (
                                ("unswitched", "accuracy_before"),
                                ("switched", "accuracy_after"),
                                ("consistency", "consistency"),
                            )
                        ],
                        percent=True,
                        y_max=1.0,
                        chance=0.5,
                    ),
                )
            )
    context = {
        "name": name,
        "version": version,
        "runs": runs,
        "rows": list(zip(labels, runs, strict=True)),
        "charts": charts,
    }
    return render(request, "evaluation/leaderboard.html", context)


@evaluator_required
def run_compare(request: HttpRequest) -> HttpResponse:
    try:
        a_id, b_id = int(request.GET.get("a", "")), int(request.GET.get("b", ""))
    except ValueError:
        runs = selectors.run_list(user=request.user).filter(status=RunStatus.DONE)[:200]
        return render(request, "evaluation/run_compare.html", {"runs": runs, "pick": True})
    run_a = selectors.run_get(user=request.user, run_id=a_id)
    run_b = selectors.run_get(user=request.user, run_id=b_id)
    comparison = selectors.run_compare(run_a=run_a, run_b=run_b)
    show_all = request.GET.get("all") == "1"
    rows = comparison["rows"] if show_all else [r for r in comparison["rows"] if r["differ"]]
    context = {"run_a": run_a, "run_b": run_b, "comparison": comparison, "rows": rows, "show_all": show_all}
    return render(request, "evaluation/run_compare.html", context)
