"""Pages of the cloze analysis: the list of runs and one run with its plots and tables."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from core.charts import violin_chart
from evaluation.cloze.experiments import SCORES
from evaluation.cloze.permissions import user_can_view_cloze_runs
from evaluation.cloze.selectors import cloze_run_get, cloze_run_list

SCORE_LABELS = {
    "accuracy_uniform": "accuracy (uniform)",
    "accuracy_weighted": "accuracy (weighted)",
    "precision_uniform": "precision (uniform)",
    "precision_weighted": "precision (weighted)",
}


@login_required
def cloze_run_list_view(request: HttpRequest) -> HttpResponse:
    if not user_can_view_cloze_runs(user=request.user):
        raise PermissionDenied
    return render(request, "cloze/clozerun_list.html", {"runs": cloze_run_list(user=request.user)})


@login_required
def cloze_run_detail_view(request: HttpRequest, pk: int) -> HttpResponse:
    if not user_can_view_cloze_runs(user=request.user):
        raise PermissionDenied
    run = cloze_run_get(user=request.user, pk=pk)
    results = run.results or {}
    scores = results.get("scores", {})
    dispersion_chart = violin_chart(
        [(SCORE_LABELS[name], scores.get(name, [])) for name in SCORES],
        chart_id="dispersion",
        title="Per-sentence scores (experiment 1)",
    )
    conf = results.get("confidence_scores", {})
    confidence_chart = violin_chart(
        [
            ("right", conf.get("predicted_right", [])),
            ("wrong", conf.get("predicted_wrong", [])),
        ],
        chart_id="confidence",
        title="Confidence of the predicted choice (experiment 2)",
        width=360,
    )
    dispersion = results.get("dispersion", {})
    context = {
        "run": run,
        "results": results,
        "dispersion": dispersion,
        "confidence": results.get("confidence", {}),
        "means": [
            (
                SCORE_LABELS[name],
                dispersion.get("mean", {}).get(name),
                dispersion.get("mean_sensible", {}).get(name),
                dispersion.get("mean_against_sense", {}).get(name),
                dispersion.get("pearson_with_length", {}).get(name),
            )
            for name in SCORES
        ],
        "examples": results.get("paper_examples"),
        "dispersion_chart": dispersion_chart,
        "confidence_chart": confidence_chart,
    }
    return render(request, "cloze/clozerun_detail.html", context)
