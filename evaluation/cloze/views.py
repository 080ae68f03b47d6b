"""Pages of the cloze analysis: the list of runs and one run with its plots and tables."""

from django.http import Http404, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render

from core.charts import violin_chart
from core.downloads import FORMATS, table_download
from core.roles import role_required
from core.tables import frame_records
from core.web import enqueue_after_commit
from evaluation.cloze.experiments import SCORES
from evaluation.cloze.permissions import user_can_view_cloze_runs
from evaluation.cloze.selectors import cloze_run_get, cloze_run_list
from evaluation.cloze.services import ClozeError, cloze_run_queue
from evaluation.cloze.tables import PAPER_CONFIDENCE, SCORE_LABELS, TABLES, cloze_table, cloze_tables
from evaluation.forms import ClozeStartForm
from evaluation.selectors import model_list, published_release_list
from evaluation.tasks import cloze_run_enqueue

RESEARCHERS_ONLY = "Cloze runs are for researchers."


@role_required(user_can_view_cloze_runs, RESEARCHERS_ONLY)
def cloze_run_list_view(request: HttpRequest) -> HttpResponseBase:
    """The runs, and the form that queues a new one (a published release and a registry model)."""
    posted = request.method == "POST"
    form = ClozeStartForm(
        request.POST if posted else None,
        releases=published_release_list(datasets=("comve", "senmaking")),
        models=model_list(),
    )
    if posted and form.is_valid():
        try:
            run = cloze_run_queue(**form.service_kwargs(), user=request.user)
        except ClozeError as exc:
            form.add_refusal(exc)
        else:
            enqueue_after_commit(request, f"Cloze run #{run.pk}", lambda: cloze_run_enqueue(run_id=run.pk))
            return redirect("cloze:run-detail", pk=run.pk)
    context = {"runs": cloze_run_list(user=request.user), "form": form, "models": form.models.values()}
    return render(request, "cloze/clozerun_list.html", context, status=400 if posted else 200)


@role_required(user_can_view_cloze_runs, RESEARCHERS_ONLY)
def cloze_run_detail_view(request: HttpRequest, pk: int) -> HttpResponse:
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
    tables = {name: frame_records(frame) for name, frame in cloze_tables(results).items()}
    context = {
        "run": run,
        "results": results,
        "dispersion": results.get("dispersion", {}),
        "confidence": results.get("confidence", {}),
        "tables": tables,
        "titles": {name: title for name, (title, _) in TABLES.items()},
        "paper_confidence": PAPER_CONFIDENCE,
        "formats": FORMATS,
        "dispersion_chart": dispersion_chart,
        "confidence_chart": confidence_chart,
    }
    return render(request, "cloze/clozerun_detail.html", context)


@role_required(user_can_view_cloze_runs, RESEARCHERS_ONLY)
def cloze_run_table_view(request: HttpRequest, pk: int, table: str, fmt: str) -> HttpResponse:
    """One of the run page's tables (``evaluation.cloze.tables.TABLES``) as CSV or JSON."""
    run = cloze_run_get(user=request.user, pk=pk)
    if table not in TABLES:
        raise Http404("unknown table")
    frame = cloze_table(run.results or {}, table)
    meta = {"cloze_run": run.pk, "table": table, "title": TABLES[table][0]}
    return table_download(frame, stem=f"cloze-{run.pk}-{table}", fmt=fmt, meta=meta)
