"""Reads of evaluation runs, narrowed by what the user may see."""

from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.http import Http404

from core.jsonl import read_jsonl
from core.roles import Actor
from evaluation.metrics.significance import mcnemar
from evaluation.models import EvaluationRun, RunStatus
from evaluation.permissions import user_can_evaluate
from evaluation.registry import RegistryModel, Skipped, registry_scan
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


def leaderboard(*, user: Actor, release_name: str, release_version: str) -> list[EvaluationRun]:
    """Finished runs on a release, best summary accuracy first."""
    runs = list(
        run_list(user=user).filter(
            status=RunStatus.DONE, release_name=release_name, release_version=release_version
        )
    )
    return sorted(runs, key=lambda r: (-(r.metrics.get("summary", {}).get("accuracy") or 0.0), r.pk))


def _predictions(run: EvaluationRun) -> dict[tuple[str, str], dict[str, Any]]:
    path = run.predictions_file
    if path is None or not Path(path).is_file():
        raise Http404(f"run #{run.pk} has no predictions file")
    return {(str(row["id"]), str(row["variant"])): row for _, row in read_jsonl(Path(path), objects=True)}


def run_compare(*, run_a: EvaluationRun, run_b: EvaluationRun) -> dict[str, Any]:
    """Two runs item by item (joined on id and variant) and McNemar on the shared items."""
    a, b = _predictions(run_a), _predictions(run_b)
    keys = [k for k in a if k in b and "correct" in a[k] and "correct" in b[k]]
    rows: list[dict[str, Any]] = [
        {
            "id": k[0],
            "variant": k[1],
            "gold": a[k].get("gold"),
            "a_prediction": a[k].get("prediction"),
            "b_prediction": b[k].get("prediction"),
            "a_scores": a[k].get("scores"),
            "b_scores": b[k].get("scores"),
            "a_correct": bool(a[k]["correct"]),
            "b_correct": bool(b[k]["correct"]),
            "differ": bool(a[k]["correct"]) != bool(b[k]["correct"]),
        }
        for k in keys
    ]
    test = mcnemar([r["a_correct"] for r in rows], [r["b_correct"] for r in rows]) if rows else None
    return {
        "rows": rows,
        "only_in_a": len(set(a) - set(b)),
        "only_in_b": len(set(b) - set(a)),
        "mcnemar": test.as_dict() if test else None,
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
