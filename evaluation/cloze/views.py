"""Pages of the cloze analysis: the list of runs and one run with its plots and tables."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe

from evaluation.cloze.experiments import SCORES
from evaluation.cloze.permissions import user_can_view_cloze_runs
from evaluation.cloze.plots import violin_svg
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
    # The SVG is built from numbers and fixed labels only (plots.violin_svg escapes text).
    dispersion_svg = mark_safe(  # noqa: S308
        violin_svg(
            [(SCORE_LABELS[name], scores.get(name, [])) for name in SCORES],
            title="Per-sentence scores (experiment 1)",
        )
    )
    conf = results.get("confidence_scores", {})
    confidence_svg = mark_safe(  # noqa: S308
        violin_svg(
            [
                ("right", conf.get("predicted_right", [])),
                ("wrong", conf.get("predicted_wrong", [])),
            ],
            title="Confidence of the predicted choice (experiment 2)",
            width=360,
        )
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
        "dispersion_svg": dispersion_svg,
        "confidence_svg": confidence_svg,
    }
    return render(request, "cloze/clozerun_detail.html", context)
