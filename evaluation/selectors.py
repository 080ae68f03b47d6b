"""Reads of evaluation runs, narrowed by what the user may see."""

from pathlib import Path
from typing import Any

import pandas as pd
from django.conf import settings
from django.db.models import Count, QuerySet
from django.http import Http404

from annotation.models import CampaignItem, Task
from core.errors import NotFound
from core.roles import Actor, user_is_curator
from datasets.models import Explanation
from evaluation import analysis
from evaluation.analysis import items as item_analysis
from evaluation.lm.registry import RegistryModel, Skipped, registry_scan
from evaluation.metrics.human import HumanScore, human_score
from evaluation.models import EvaluationRun, GenerationJob, RunStatus
from evaluation.permissions import user_can_evaluate
from releases.dataset import Dataset
from releases.models import Release, ReleaseStatus


def run_list(*, user: Actor) -> QuerySet[EvaluationRun]:
    if not user_can_evaluate(user=user):
        return EvaluationRun.objects.none()
    return EvaluationRun.objects.all()


def run_get(*, user: Actor, run_id: int) -> EvaluationRun:
    run = run_list(user=user).filter(pk=run_id).first()
    if run is None:
        raise Http404("no such run")
    return run


def run_search(
    *, user: Actor, release: str = "", model: str = "", method: str = "", status: str = ""
) -> QuerySet[EvaluationRun]:
    """:func:`run_list` narrowed: ``release`` NAME@VERSION (or NAME: every version),
    ``model`` a registry name, ``method`` and ``status`` their values."""
    runs = run_list(user=user)
    if release:
        name, _, version = release.partition("@")
        runs = runs.filter(release_name=name, **({"release_version": version} if version else {}))
    if model:
        runs = runs.filter(model_name=model)
    if method:
        runs = runs.filter(method=method)
    if status:
        runs = runs.filter(status=status)
    return runs


def release_list(*, user: Actor) -> list[dict[str, Any]]:
    """Releases that have finished runs: name, version, data set, number of runs."""
    rows = (
        run_list(user=user)
        .filter(status=RunStatus.DONE)
        .values_list("release_name", "release_version", "dataset")
        .order_by("release_name", "release_version", "dataset")
    )
    counts: dict[tuple[str, str, str], int] = {}
    for key in rows:
        counts[key] = counts.get(key, 0) + 1
    return [{"name": n, "version": v, "dataset": d, "runs": c} for (n, v, d), c in counts.items()]


def _results(run: EvaluationRun) -> dict[str, Any]:
    """The fields of a run's ``results.json`` that the leaderboard reads, from its row."""
    return {
        "run": run.pk,
        "name": run.name,
        "dataset": run.dataset,
        "method": run.method,
        "model_name": run.model_name,
        "model_path": run.model_path,
        "settings": run.settings,
        "metrics": run.metrics,
    }


def leaderboard(*, user: Actor, release_name: str, release_version: str) -> pd.DataFrame:
    """Finished runs on a release as :func:`evaluation.analysis.leaderboard` ranks them."""
    runs = run_list(user=user).filter(
        status=RunStatus.DONE, release_name=release_name, release_version=release_version
    )
    published = Release.objects.filter(
        name=release_name, version=release_version, status=ReleaseStatus.PUBLISHED
    ).exists()
    if not published and not runs.exists():
        raise NotFound(f"no leaderboard for {release_name}@{release_version}: no such published release")
    board = analysis.leaderboard([_results(r) for r in runs])
    if not board.empty and (board["dataset"] == Dataset.COMVE.value).any():
        scores = explanation_human_scores(run_ids=[int(r) for r in board["run"]])
        for column in HumanScore(0, 0, 0, None, None, None).as_dict():
            values = [scores[int(r)].as_dict()[column] if int(r) in scores else None for r in board["run"]]
            # counts stay whole numbers beside a run without explanations (8, not 8.0)
            dtype = "Float64" if column in ("human_score", "human_low", "human_high") else "Int64"
            board[column] = pd.array(values, dtype=dtype)
    return board


def explanation_human_scores(*, run_ids: list[int]) -> dict[int, HumanScore]:
    """The human score of each run's ComVE explanations (runs with stored explanations
    only): of the explanations judged in an ``explanation_plausibility`` campaign (their
    item has its K votes and an aggregate), the share judged plausible, with its Wilson 95%
    interval. An explanation in several campaigns counts once, by its latest campaign."""
    totals = dict(
        Explanation.objects.filter(run_id__in=run_ids)
        .values("run_id")
        .annotate(n=Count("pk"))
        .values_list("run_id", "n")
    )
    labels: dict[int, tuple[int, str]] = {}
    judged = (
        CampaignItem.objects.filter(
            explanation__run_id__in=run_ids, campaign__task=Task.EXPLANATION_PLAUSIBILITY, is_gold=False
        )
        .exclude(aggregate={})
        .order_by("campaign_id", "pk")
        .values_list("explanation_id", "explanation__run_id", "aggregate")
    )
    for explanation_id, run_id, aggregate in judged:
        label = (aggregate or {}).get("label")
        if label:
            labels[explanation_id] = (run_id, label)  # a later campaign's label wins
    out: dict[int, HumanScore] = {}
    for run_id, total in totals.items():
        mine = [label for rid, label in labels.values() if rid == run_id]
        out[run_id] = human_score(sum(1 for x in mine if x == "plausible"), len(mine), total)
    return out


def generation_job_list(*, user: Actor) -> QuerySet[GenerationJob]:
    if not user_is_curator(user):
        return GenerationJob.objects.none()
    return GenerationJob.objects.select_related("run", "campaign", "import_batch", "created_by")


def generation_job_get(*, user: Actor, job_id: int) -> GenerationJob:
    job = generation_job_list(user=user).filter(pk=job_id).first()
    if job is None:
        raise Http404("no such generation job")
    return job


def run_frame(*, run: EvaluationRun) -> pd.DataFrame:
    """The run's predictions joined with the items of the release folder it read."""
    if run.status != RunStatus.DONE or not run.results_dir:
        raise NotFound(f"run #{run.pk} has no results yet")
    try:
        return analysis.load_run(run.results_dir, release=run.release_path)
    except analysis.AnalysisError as exc:
        raise NotFound(f"run #{run.pk}: {exc}") from exc


def run_table(*, run: EvaluationRun) -> pd.DataFrame:
    """The run page's table (:func:`evaluation.analysis.run_table`)."""
    return analysis.run_table(run_frame(run=run))


def _predictions(run: EvaluationRun) -> pd.DataFrame:
    if run.status != RunStatus.DONE or not run.results_dir:
        raise NotFound(f"run #{run.pk} has no predictions yet")
    try:
        return analysis.load_predictions(run.results_dir)
    except analysis.AnalysisError as exc:
        raise NotFound(f"run #{run.pk}: {exc}") from exc


def run_comparison(*, run_a: EvaluationRun, run_b: EvaluationRun) -> analysis.Comparison:
    """Two runs item by item (joined on id and variant) and McNemar on the shared items."""
    return analysis.compare_runs(_predictions(run_a), _predictions(run_b))


def run_compare(
    *, run_a: EvaluationRun, run_b: EvaluationRun, show: str = item_analysis.DEFAULT_FILTER
) -> dict[str, Any]:
    """:func:`run_comparison` on the items themselves, as the comparison page and its
    downloads read it: ``items`` (:func:`evaluation.analysis.items.item_comparison`: each
    shared item's text, gold, each run's choice and rounded scores) narrowed to the filter
    ``show``, ``counts`` per filter, the counts of unshared items and McNemar's test (on
    every shared item, whatever the filter). An unknown filter or a run whose release
    folder lacks an item is a NotFound with the reason."""
    comparison = run_comparison(run_a=run_a, run_b=run_b)
    try:
        texts = item_analysis.item_texts(run_a.release_path)
        every = item_analysis.item_comparison(comparison, texts)
        shown = item_analysis.filter_items(every, show)
    except analysis.AnalysisError as exc:
        raise NotFound(str(exc)) from exc
    return {
        "items": shown,
        "counts": item_analysis.filter_counts(every),
        "only_in_a": comparison.only_in_a,
        "only_in_b": comparison.only_in_b,
        "mcnemar": comparison.mcnemar.as_dict() if comparison.mcnemar else None,
    }


# --- a run's summary as the run page shows it -----------------------------------------

IDENTITY_LABELS = {
    "name": "name",
    "source": "from",
    "kind": "kind",
    "sha256": "SHA-256",
    "format": "file format",
    "architecture": "architecture",
    "model_type": "model type",
    "parameters": "parameters",
    "vocab_size": "vocabulary",
    "dtype": "weights in",
    "threads": "threads",
    "max_length": "longest input (tokens)",
    "tokenizer_adds_start_token": "tokenizer adds a start token",
    "start_token_id": "start token id",
    "start_token": "start token",
    "start_token_source": "start token chosen by",
    "baseline": "baseline",
    "predictions": "uploaded predictions",
    "predictions_sha256": "predictions SHA-256",
}
SETTING_LABELS = {
    "seed": "seed",
    "limit": "limit (items)",
    "batch_size": "batch size",
    "threads": "threads",
    "generate_explanations": "generate ComVE explanations",
    "start_token": "start token asked for",
    "normalization": "log-probabilities normalised as",
    "predictions_name": "predictions file",
    "comve_rule_a": "ComVE A rule",
    "comve_rule_b": "ComVE B rule",
}
TIMING_LABELS = {
    "load_seconds": ("loading the model", " s"),
    "score_and_metrics_seconds": ("scoring and metrics", " s"),
    "total_seconds": ("total", " s"),
    "items_per_second": ("predictions per second", ""),
}


def plain(value: Any) -> str:
    """A stored value in words: never a Python repr (no braces, no quotes, no None)."""
    if value is None or value == "":
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".")
    if isinstance(value, dict):
        return "; ".join(f"{str(k).replace('_', ' ')}: {plain(v)}" for k, v in value.items()) or "–"
    if isinstance(value, list | tuple):
        return ", ".join(plain(v) for v in value) or "–"
    return str(value)


def _labelled(values: dict[str, Any], labels: dict[str, str]) -> list[tuple[str, str]]:
    known = [(labels[k], plain(values[k])) for k in labels if k in values]
    other = [(k.replace("_", " "), plain(v)) for k, v in values.items() if k not in labels]
    return known + other


def run_summary(*, run: EvaluationRun) -> dict[str, list[tuple[str, str]]]:
    """The run page's three tables as (label, value in words) rows: the model's identity
    (a registry model without its place on the server), the settings and the timing."""
    identity = {k: v for k, v in run.model_identity.items() if not (run.model_name and k == "path")}
    timing = [
        (label, f"{plain(round(float(run.timing[k]), 1))}{unit}")
        for k, (label, unit) in TIMING_LABELS.items()
        if isinstance(run.timing.get(k), int | float)
    ]
    timing += [(k.replace("_", " "), plain(v)) for k, v in run.timing.items() if k not in TIMING_LABELS]
    return {
        "identity": _labelled(identity, IDENTITY_LABELS),
        "settings": _labelled(run.settings or {}, SETTING_LABELS),
        "timing": timing,
    }


# --- the model registry and the releases a run may use --------------------------------


def upload_folders() -> list[Path]:
    """Where uploaded files live (and lived before WINNOW_UPLOAD_DIR): never a model."""
    return [Path(settings.WINNOW_UPLOAD_DIR), Path(settings.MEDIA_ROOT) / "evaluation" / "uploads"]


def model_registry() -> tuple[list[RegistryModel], list[Skipped]]:
    """The models this server offers (installed packages, then WINNOW_MODELS_DIR), and
    the entries of the models folder it leaves out, with the reason."""
    return registry_scan(models_dir=Path(settings.WINNOW_MODELS_DIR), excluded=upload_folders())


def model_list() -> list[RegistryModel]:
    return model_registry()[0]


def model_get(*, name: str) -> RegistryModel | None:
    return next((m for m in model_list() if m.name == name), None)


def published_release_list(*, datasets: tuple[str, ...] = ()) -> list[Release]:
    """Published releases, by name and then newest version first (what a run may score)."""
    releases = Release.objects.filter(status=ReleaseStatus.PUBLISHED)
    if datasets:
        releases = releases.filter(dataset__in=datasets)
    return list(releases.order_by("name", "-version_major", "-version_minor", "-version_patch"))
