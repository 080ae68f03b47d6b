"""Execute a run: hold its lease, load the model (or none), hand the release to its data
set's evaluator (evaluation.evaluators), write ``results.json``, ``predictions.jsonl`` and
any SemEval submission files into the run folder, and keep the run's row current."""

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone

from core.jobs import Heartbeat, job_claim, job_update, owner_token
from evaluation import release_data
from evaluation.evaluators import evaluator_for
from evaluation.lm import model_cache
from evaluation.lm.methods import MODEL_METHODS, Method
from evaluation.metrics.comve import write_submission
from evaluation.models import EvaluationRun, RunPhase, RunStatus
from evaluation.predictions_io import write_jsonl
from evaluation.runs.errors import EvaluationError, public_message
from evaluation.runs.progress import EVALUATION_RUN_JOB, Progress, RunProgress

RESULTS_FILE = "results.json"
PREDICTIONS_FILE = "predictions.jsonl"


def evaluation_run_claim_fields() -> dict[str, Any]:
    """What a start (or a restart) of a run resets on its row."""
    return {
        "started_at": timezone.now(),
        "error": "",
        "phase": RunPhase.WAITING,
        "progress_done": 0,
        "finished_at": None,
    }


def evaluation_run(
    *, run: EvaluationRun, progress: Progress | None = None, owner: str | None = None
) -> EvaluationRun:
    """Execute a queued run; on failure the run is marked failed and EvaluationError raised.

    ``owner`` is the lease a worker claimed (evaluation.tasks); without it the run is
    claimed here (a command). Either way every write is made only while the lease is held,
    and outside a transaction a heartbeat thread keeps the lease alive.
    """
    if run.status == RunStatus.DONE:
        return run
    if owner is None:
        owner = owner_token()
        claimable = (RunStatus.QUEUED, RunStatus.FAILED)
        if not job_claim(
            EVALUATION_RUN_JOB, run.pk, owner=owner, claimable=claimable, **evaluation_run_claim_fields()
        ):
            raise EvaluationError(f"run #{run.pk} is running on a worker already")
    run.refresh_from_db()
    if transaction.get_connection().in_atomic_block:
        # a heartbeat thread cannot see an uncommitted row; progress writes renew the lease
        return _evaluation_run_leased(run=run, progress=progress, owner=owner)
    with Heartbeat(EVALUATION_RUN_JOB, run.pk, owner):
        return _evaluation_run_leased(run=run, progress=progress, owner=owner)


def _evaluation_run_leased(*, run: EvaluationRun, progress: Progress | None, owner: str) -> EvaluationRun:
    started = time.perf_counter()
    try:
        out = Path(run.results_dir)
        out.mkdir(parents=True, exist_ok=True)
        folder = release_data.open_release_folder(run.release_path)
        writer = RunProgress(run, progress, owner)
        timing: dict[str, float] = {}
        model = None
        if run.method in MODEL_METHODS:
            # the page says "loading the model" until the first item is scored
            job_update(EVALUATION_RUN_JOB, run.pk, owner, phase=RunPhase.LOADING)
            t = time.perf_counter()
            model = model_cache.load(
                run.model_path,
                threads=run.settings.get("threads") or None,
                start_token=run.settings.get("start_token"),
                normalization=run.settings.get("normalization", "exact"),
            )
            timing["load_seconds"] = time.perf_counter() - t
            queued = dict(run.model_identity or {})
            loaded = dict(getattr(model, "settings", {}) or {})
            if queued.get("sha256") and loaded.get("sha256") and queued["sha256"] != loaded["sha256"]:
                raise EvaluationError(
                    f"model {run.model_label}: its files changed after the run was queued "
                    f"(SHA-256 {loaded['sha256'][:12]}..., queued with {queued['sha256'][:12]}...)"
                )
            run.model_identity = {**queued, **loaded}
        else:
            writer.scoring = True
            job_update(EVALUATION_RUN_JOB, run.pk, owner, phase=RunPhase.SCORING)
            run.model_identity = {
                "baseline" if run.method != Method.PREDICTIONS else "predictions": run.method
            }
            if run.predictions_path:
                run.model_identity["predictions_sha256"] = _sha256_or_folder(Path(run.predictions_path))
        t = time.perf_counter()
        evaluator = evaluator_for(folder.dataset)
        metrics, records, submissions, scored = evaluator.evaluate(
            run=run, folder=folder, model=model, writer=writer
        )
        timing["score_and_metrics_seconds"] = time.perf_counter() - t
        job_update(EVALUATION_RUN_JOB, run.pk, owner, phase=RunPhase.WRITING)
        written = [PREDICTIONS_FILE]
        write_jsonl(out / PREDICTIONS_FILE, records)
        for name, rows in submissions.items():
            write_submission(out / name, rows)
            written.append(name)
        timing["total_seconds"] = time.perf_counter() - started
        if timing["score_and_metrics_seconds"] > 0:
            timing["items_per_second"] = scored / timing["score_and_metrics_seconds"]
        results = {
            "run": run.pk,
            "release": run.release_identity,
            "dataset": run.dataset,
            "method": run.method,
            "name": run.name or None,
            # a registry model is known by its name: its place on the server is not published
            "model": {k: v for k, v in run.model_identity.items() if not (run.model_name and k == "path")},
            "model_name": run.model_name or None,
            "model_path": None if run.model_name else run.model_path,
            "settings": run.settings,
            "metrics": metrics,
            "timing": timing,
            "files": [*written, RESULTS_FILE],
        }
        (out / RESULTS_FILE).write_text(
            json.dumps(results, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
        )
        job_update(
            EVALUATION_RUN_JOB,
            run.pk,
            owner,
            metrics=metrics,
            timing=timing,
            model_identity=run.model_identity,
            status=RunStatus.DONE,
            progress_done=writer.total,
            progress_total=writer.total,
            finished_at=timezone.now(),
            lease_owner="",
        )
        run.refresh_from_db()
        return run
    # Domain errors (bad release, model, predictions; ModelLoadError and ScoringError are
    # ValueErrors) become EvaluationError with their message.
    except (EvaluationError, ValueError, OSError, ImportError) as exc:
        _fail(run, str(exc), owner)
        raise EvaluationError(str(exc)) from exc
    except BaseException as exc:  # a run must never stay "running" after a crash or an interrupt
        _fail(run, f"{type(exc).__name__}: {exc}", owner)
        raise


def _fail(run: EvaluationRun, message: str, owner: str) -> None:
    """Mark the run failed (while ``owner`` holds it). Its message names a registry model and
    an upload as the user knows them, never by their paths on the server; a refused upload
    is deleted."""
    names = {}
    if run.model_name and run.model_path:
        names[Path(run.model_path)] = run.model_name
    upload_name = (run.settings or {}).get("predictions_name")
    if upload_name and run.predictions_path:
        names[Path(run.predictions_path)] = upload_name
        Path(run.predictions_path).unlink(missing_ok=True)
    job_update(
        EVALUATION_RUN_JOB,
        run.pk,
        owner,
        status=RunStatus.FAILED,
        error=public_message(message, names)[:5000],
        finished_at=timezone.now(),
        lease_owner="",
    )
    run.refresh_from_db()


def _sha256_or_folder(path: Path) -> str:
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for p in files:
        digest.update(p.name.encode() + b"\0" + p.read_bytes())
    return digest.hexdigest()
