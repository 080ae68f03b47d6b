"""Evaluation runs: create a run, execute it (score, compute metrics, write files).

``evaluation_run_create`` validates the request and stores a queued run;
``evaluation_run`` executes it: reads the release's frozen files (``release_data``),
scores with ``evaluation.lm.scorers`` (a model loaded by ``evaluation.lm.modeling`` or a
baseline), computes the data set's metrics (``evaluation.metrics``) and writes into the
run folder ``results.json``, ``predictions.jsonl`` and, for ComVE, the SemEval
submission CSVs. Progress is kept on the run row for the web page.
"""

import json
import logging
import random
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone

from core.errors import WinnowError
from core.jobs import Heartbeat, JobKind, job_claim, job_update, owner_token
from core.roles import Actor, account_of
from evaluation import release_data
from evaluation.lm import model_cache
from evaluation.lm.modeling import model_sha256
from evaluation.lm.scorers.types import MODEL_METHODS, PredictionsFileError, start_token_parse
from evaluation.metrics.comve import (
    COMVE_RULES,
    DEFAULT_COMVE_RULE,
    SUBMISSION_FILES,
    choice_accuracy,
    explanation_sentence,
    length_normalised_choice,
    lowest,
    perplexity,
    subtask_c_bleu,
    write_submission,
)
from evaluation.metrics.significance import accuracy_significance, wilson_interval
from evaluation.metrics.winowhy import CLASSIFIERS, cross_validate, winowhy_metrics
from evaluation.metrics.wsc import WscOutcome, wsc_metrics
from evaluation.models import EvaluationRun, Method, RunPhase, RunStatus
from evaluation.predictions_io import read_label_predictions, write_jsonl
from evaluation.selectors import model_get
from releases.errors import ReleaseIntegrityError
from releases.models import Release, ReleaseStatus
from releases.selectors import release_file_verified_path
from releases.services import release_folder

logger = logging.getLogger(__name__)

Progress = Callable[[int, int], None]
# (metrics, per-item records, SemEval submission rows by file name, items scored)
Evaluated = tuple[dict[str, Any], list[dict[str, Any]], dict[str, list[tuple[str, str | int]]], int]
RESULTS_FILE = "results.json"
PREDICTIONS_FILE = "predictions.jsonl"


class EvaluationError(WinnowError):
    """A run that cannot be created or executed; the message says why, and ``field`` names
    the form field it is about (release, model, predictions, ...) where there is one."""

    status = 400

    def __init__(self, message: str = "", *, field: str | None = None, status: int | None = None) -> None:
        super().__init__(message, status=status)
        self.field = field


class PredictionsRefused(EvaluationError):
    """An uploaded predictions file the run could not use; the message names it by its own name."""

    def __init__(self, message: str = "") -> None:
        super().__init__(message, field="predictions")


# The run's lease (core.jobs); evaluation.apps registers it with the task that requeues it.
EVALUATION_RUN_JOB = JobKind(
    label="evaluation run",
    model=EvaluationRun,
    status_field="status",
    queued=RunStatus.QUEUED,
    running=RunStatus.RUNNING,
    failed=RunStatus.FAILED,
    error_field="error",
    failed_fields={"finished_at": timezone.now},
)


# --- where things are -------------------------------------------------------------------


def release_locate(spec: str) -> release_data.ReleaseFolder:
    """The exported files of a release: ``NAME@VERSION`` of a published release, or the
    path of an exported folder (a release downloaded elsewhere).

    A named release must be published and its files must still match its manifest's
    SHA-256 checksums, so that a score is always measured on exactly the released data.
    """
    spec = spec.strip()
    if not spec:
        raise EvaluationError(
            "no release given: name a published release (NAME@VERSION) or an exported folder", field="release"
        )
    path = Path(spec).expanduser()
    if not path.is_dir() and "@" in spec:
        path = release_folder_published(spec)
    elif not path.is_dir():
        raise EvaluationError(f"release {spec!r}: no such folder and not NAME@VERSION", field="release")
    try:
        return release_data.open_release_folder(path)
    except release_data.ReleaseDataError as exc:
        raise EvaluationError(str(exc), field="release") from exc


def release_folder_published(spec: str) -> Path:
    """The folder of the published release ``NAME@VERSION``, once every file matches its manifest."""
    name, _, version = spec.rpartition("@")
    release = (
        Release.objects.filter(name=name, version=version, status=ReleaseStatus.PUBLISHED)
        .prefetch_related("files")
        .first()
    )
    if release is None:
        # the same words whether a draft of that name exists or nothing does: a researcher
        # learns nothing about unpublished releases from this message
        raise EvaluationError(
            f"no published release {spec}: only published releases are scored", field="release"
        )
    files = list(release.files.all())
    if not files:
        raise EvaluationError(
            f"release {spec} has no built files yet (build status: {release.build_status})", field="release"
        )
    try:
        for release_file in files:
            release_file_verified_path(release_file=release_file)
    except ReleaseIntegrityError as exc:
        raise EvaluationError(str(exc), field="release") from exc
    return release_folder(release)


def runs_root() -> Path:
    return Path(settings.MEDIA_ROOT) / "evaluation" / "runs"


# --- create -----------------------------------------------------------------------------


def evaluation_run_create(
    *,
    release: str,
    method: str,
    model_name: str = "",
    model_path: str = "",
    predictions_path: str = "",
    predictions_name: str = "",
    seed: int = 0,
    limit: int | None = None,
    batch_size: int = 32,
    threads: int | None = None,
    out_dir: str = "",
    generate_explanations: bool = False,
    start_token: str | int | None = None,
    created_by: Actor | None = None,
    name: str = "",
) -> EvaluationRun:
    """Validate and store a queued run (nothing is scored yet).

    The model is ``model_name``, a name of the server's registry (what the web offers), or
    ``model_path``, a local folder or GGUF file (the command line, run by an operator).
    Uploaded predictions are named ``predictions_name`` in every message, never by their
    path on the server, and are read once here: a file the run could not use is refused now.
    ``name`` is the researcher's name for the run (optional). Each refusal names the field
    it is about (``EvaluationError.field``).
    """
    if method not in Method.values:
        raise EvaluationError(
            f"unknown method {method!r}; choose one of {', '.join(Method.values)}", field="method"
        )
    folder = release_locate(release)
    identity: dict[str, Any] = {}
    if model_name and model_path:
        raise EvaluationError("give a model by its registry name or by its path, not both", field="model")
    if method in MODEL_METHODS:
        if model_name:
            entry = model_get(name=model_name)
            if entry is None:
                raise EvaluationError(
                    f"no model named {model_name!r} among the server's models", field="model"
                )
            needed = {"pll": "masked"}.get(method, "causal")
            if entry.kind != needed:
                raise EvaluationError(
                    f"{entry.name} is a {entry.kind_label}; the method '{Method(method).label}' needs a "
                    f"{needed} LM",
                    field="model",
                )
            model_path = str(entry.path)
            identity = {"name": entry.name, "source": entry.source, "kind": entry.kind}
        elif not model_path:
            raise EvaluationError(
                f"the method '{Method(method).label}' needs a model (a registry name, or a path on the server)",
                field="model",
            )
        elif not Path(model_path).exists():
            raise EvaluationError(
                f"model {model_path!r}: no such file or folder (models come from local paths only)",
                field="model",
            )
        identity["sha256"] = model_sha256(Path(model_path))
    else:
        model_name = model_path = ""  # a baseline or uploaded predictions: no model
    if method == Method.PREDICTIONS:
        if not predictions_path:
            raise EvaluationError(
                "the method 'uploaded predictions' needs a predictions file", field="predictions"
            )
        if not Path(predictions_path).exists():
            raise EvaluationError(
                f"predictions {predictions_name or predictions_path!r}: no such file or folder",
                field="predictions",
            )
        _predictions_check(folder, Path(predictions_path), predictions_name)
    if limit is not None and limit < 1:
        raise EvaluationError("the limit must be at least 1", field="limit")
    if batch_size < 1:
        raise EvaluationError("batch size must be at least 1")
    if threads is not None and threads < 1:
        raise EvaluationError("threads must be at least 1")
    try:
        start = start_token_parse(start_token)
    except ValueError as exc:
        raise EvaluationError(str(exc), field="start_token") from exc
    if start is not None and method not in MODEL_METHODS:
        raise EvaluationError(
            f"a start token applies to a model's methods, not to '{Method(method).label}'",
            field="start_token",
        )
    _method_fits(method, folder.dataset)
    with transaction.atomic():
        run = EvaluationRun.objects.create(
            name=name.strip(),
            release_name=folder.name,
            release_version=folder.version,
            release_path=str(folder.path.resolve()),
            release_identity=folder.identity,
            dataset=folder.dataset,
            method=method,
            model_name=model_name,
            model_path=str(Path(model_path).resolve()) if model_path else "",
            model_identity=identity,
            predictions_path=str(Path(predictions_path).resolve()) if predictions_path else "",
            settings={
                "seed": seed,
                "limit": limit,
                "batch_size": batch_size,
                "threads": threads,
                "generate_explanations": generate_explanations,
                "start_token": start,
                **({"predictions_name": predictions_name} if predictions_name else {}),
            },
            created_by=account_of(created_by),
        )
        run.results_dir = str(Path(out_dir).resolve()) if out_dir else str(runs_root() / f"run-{run.pk}")
        run.save(update_fields=["results_dir"])
    return run


def _upload_keep(upload: UploadedFile) -> Path:
    """Keep an uploaded predictions file under WINNOW_UPLOAD_DIR, where the model registry
    never looks; the name is ours (the readers tell the format from the content)."""
    folder = Path(settings.WINNOW_UPLOAD_DIR) / "predictions"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{uuid.uuid4().hex}.upload"
    with path.open("wb") as handle:
        for chunk in upload.chunks():
            handle.write(chunk)
    return path


def evaluation_run_start(
    *, upload: UploadedFile | None = None, created_by: Actor | None = None, **create: Any
) -> EvaluationRun:
    """A run started from the web (the page or the API): :func:`evaluation_run_create`, with
    an uploaded predictions file kept for the run, and not kept when the run is refused.
    The caller sends the run to a worker once the row is committed."""
    saved = _upload_keep(upload) if upload is not None else None
    try:
        return evaluation_run_create(
            predictions_path=str(saved) if saved else "", created_by=created_by, **create
        )
    except EvaluationError:
        if saved is not None:
            saved.unlink(missing_ok=True)
        raise


#: Methods that do not apply to a data set, and why (checked when a run is created).
METHOD_UNFIT = {
    ("winowhy", Method.PARTIAL): "scores WSC candidates after the pronoun; WinoWhy reasons have none",
    ("winowhy", Method.FIRST): "picks a WSC or ComVE candidate; WinoWhy reasons have none",
    ("comve", Method.PARTIAL): "scores WSC candidates after the pronoun; ComVE statements have none",
}


def method_unfit(method: str, dataset: str) -> str | None:
    """Why ``method`` cannot score a ``dataset`` release, or None when it can."""
    reason = METHOD_UNFIT.get((release_data.DATASET_ALIASES.get(dataset, dataset), Method(method)))
    return f"the method '{Method(method).label}' {reason}" if reason else None


def _method_fits(method: str, dataset: str) -> None:
    reason = method_unfit(method, dataset)
    if reason:
        raise EvaluationError(reason, field="method")


def _predictions_check(folder: release_data.ReleaseFolder, path: Path, name: str) -> None:
    """Read the predictions as the run will (format, ids, labels of the release's items)."""
    try:
        if folder.dataset == "wsc":
            from evaluation.lm.scorers import read_predictions

            read_predictions(path, [r.item for r in release_data.read_wsc(folder)])
        elif folder.dataset == "winowhy":
            read_label_predictions(path)
        else:
            _comve_uploads(path)
    except (PredictionsFileError, EvaluationError, ValueError, OSError) as exc:
        raise PredictionsRefused(_public_message(str(exc), {path: name})) from exc


def _public_message(message: str, names: dict[Path, str]) -> str:
    """The message with each server path put as the name the user knows it by."""
    for path, name in names.items():
        if name:
            message = message.replace(str(path), name).replace(str(path.resolve()), name)
    return message


# --- execute ----------------------------------------------------------------------------


class _ProgressWriter:
    """Keeps the run's progress columns current (at most one write per second or step), in
    items (WSC: schemas, whatever their variants). The run's phase turns from loading to
    scoring once the first item is scored, so that the page says "loading the model" until
    then instead of "0 / N"."""

    def __init__(self, run: EvaluationRun, extra: Progress | None, owner: str | None = None) -> None:
        self.run = run
        self.owner = owner
        self.on_progress = extra
        self.offset = 0
        self.total = 0
        self._last = 0.0
        self.scoring = False

    def stage(self, offset: int, size: int) -> Progress:
        """A callback for a scorer covering ``size`` of our items from ``offset``; the scorer
        counts in its own units (e.g. one request per candidate), mapped onto ours."""

        def report(done: int, total: int) -> None:
            self(offset + (size * done // total if total else size))

        self(offset)  # the page shows "0 / N" while the first batch runs
        return report

    def __call__(self, done: int) -> None:
        now = time.monotonic()
        first = done > 0 and not self.scoring
        if first or done == 0 or done >= self.total or now - self._last >= 1.0:
            self._last = now
            phase = {"phase": RunPhase.SCORING} if first else {}
            self.scoring = self.scoring or first
            # only while this copy holds the run's lease: a copy that lost it never moves
            # the progress back
            job_update(
                EVALUATION_RUN_JOB,
                self.run.pk,
                self.owner,
                progress_done=done,
                progress_total=self.total,
                **phase,
            )
        if self.on_progress is not None:
            self.on_progress(done, self.total)


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
        writer = _ProgressWriter(run, progress, owner)
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
        evaluate = {"wsc": _evaluate_wsc, "winowhy": _evaluate_winowhy, "comve": _evaluate_comve}[
            folder.dataset
        ]
        metrics, records, submissions, scored = evaluate(run=run, folder=folder, model=model, writer=writer)
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
        error=_public_message(message, names)[:5000],
        finished_at=timezone.now(),
        lease_owner="",
    )
    run.refresh_from_db()


def _sha256_or_folder(path: Path) -> str:
    import hashlib

    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for p in files:
        digest.update(p.name.encode() + b"\0" + p.read_bytes())
    return digest.hexdigest()


# --- WSC --------------------------------------------------------------------------------


def _evaluate_wsc(
    *, run: EvaluationRun, folder: release_data.ReleaseFolder, model: Any, writer: _ProgressWriter
) -> Evaluated:
    from evaluation.lm.scorers import read_predictions, score_wsc

    rows = release_data.read_wsc(folder, limit=run.settings.get("limit"))
    items = [r.item for r in rows]
    writer.total = len(items)  # schemas: a scorer's requests (variants, candidates) map onto them
    predictions = read_predictions(run.predictions_path, items) if run.method == Method.PREDICTIONS else None
    scores = score_wsc(
        model,
        items,
        run.method,
        seed=int(run.settings.get("seed") or 0),
        predictions=predictions,
        batch_size=int(run.settings.get("batch_size") or 32),
        progress=writer.stage(0, writer.total),
    )
    by_key = {(s.id, s.variant): s for s in scores}
    outcomes = []
    for r in rows:
        original = by_key[(r.item.id, "original")]
        switched = by_key.get((r.item.id, "switched"))
        outcomes.append(
            WscOutcome(
                item_id=r.item.id,
                gold=original.answer,
                predicted=original.prediction,
                # without switched predictions (e.g. an upload of originals only) the
                # switch protocol cannot be computed: leave the label out
                switchable=r.switchable if switched is not None or not r.switchable else None,
                switched_predicted=switched.prediction if switched is not None else None,
                associative=r.associative,
                knowledge_types=r.knowledge_types,
            )
        )
    metrics: dict[str, Any] = wsc_metrics(outcomes)
    metrics["significance"] = {
        "all": accuracy_significance(metrics["all"]["correct"], metrics["all"]["n"]),
    }
    sw = metrics["switchable"]
    if sw["n"]:
        metrics["significance"]["switchable_after"] = accuracy_significance(sw["correct_after"], sw["n"])
    metrics["summary"] = {"accuracy": metrics["all"]["accuracy"], "n": metrics["all"]["n"]}
    candidates = {r.item.id: list(r.item.candidates) for r in rows}
    records = [
        {
            "id": s.id,
            "variant": s.variant,
            "candidates": candidates[s.id],
            "scores": list(s.scores),
            "prediction": s.prediction,
            "gold": s.answer,
            "correct": s.correct,
        }
        for s in scores
    ]
    return metrics, records, {}, len(scores)


# --- WinoWhy ----------------------------------------------------------------------------


def _evaluate_winowhy(
    *, run: EvaluationRun, folder: release_data.ReleaseFolder, model: Any, writer: _ProgressWriter
) -> Evaluated:
    all_rows = release_data.read_winowhy(folder)
    rows = [r for r in all_rows if r.positive is not None]
    limit = run.settings.get("limit")
    if limit:
        rows = rows[:limit]
    if not rows:
        raise EvaluationError(f"{folder.path / 'winowhy.jsonl'}: no positive or negative reasons to evaluate")
    writer.total = len(rows)
    seed = int(run.settings.get("seed") or 0)
    method = run.method
    if method in ("full", "pll"):
        from evaluation.lm.scorers import score_continuations

        scores = score_continuations(
            model,
            [(r.context, r.continuation) for r in rows],
            method=method,
            batch_size=int(run.settings.get("batch_size") or 32),
            progress=writer.stage(0, len(rows)),
        )
    elif method == "random":
        rng = random.Random(seed)
        scores = [rng.random() for _ in rows]
    elif method == "majority":
        scores = [0.0 for _ in rows]  # one score for all: the best threshold is the majority label
    elif method == "predictions":
        uploaded = read_label_predictions(run.predictions_path)
        scores = [_reason_score(uploaded, r.id, run.predictions_path) for r in rows]
        extra = sorted(set(uploaded) - {r.id for r in rows})
        if extra and not limit:
            raise EvaluationError(
                f"{run.predictions_path}: ids not among the evaluated reasons: {', '.join(extra[:5])}"
            )
    else:
        raise EvaluationError(
            f"method {method!r} does not apply to WinoWhy reasons; use full, pll, random, majority or predictions"
        )
    writer(len(rows))
    labels = [bool(r.positive) for r in rows]
    types = [r.knowledge_types for r in rows]
    metrics: dict[str, Any] = winowhy_metrics(scores, labels, types)
    best = metrics["best_threshold"]
    metrics["significance"] = {
        "best_threshold": {"wilson_95": list(wilson_interval(best["correct"], best["n"]))}
    }
    metrics["summary"] = {"accuracy": best["accuracy"], "n": best["n"]}
    metrics["cross_validation"] = _winowhy_cross_validation(model, rows, labels, seed)
    metrics["reasons_in_release"] = dict(
        Counter(
            "positive" if r.positive else "negative" if r.positive is False else "other" for r in all_rows
        )
    )
    threshold = best["threshold"] if best["threshold"] is not None else float("inf")
    records = [
        {
            "id": r.id,
            "variant": "reason",
            "question_id": r.question_id,
            "scores": [s],
            "prediction": "positive" if s >= threshold else "negative",
            "gold": "positive" if y else "negative",
            "correct": (s >= threshold) == y,
        }
        for r, s, y in zip(rows, scores, labels, strict=True)
    ]
    return metrics, records, {}, len(rows)


def _reason_score(uploaded: dict[str, str], reason_id: str, path: str) -> float:
    if reason_id not in uploaded:
        raise EvaluationError(f"{path}: no prediction for reason {reason_id!r}")
    value = uploaded[reason_id].lower()
    if value in ("positive", "plausible", "true"):
        return 1.0
    if value in ("negative", "implausible", "false"):
        return 0.0
    try:
        return float(value)
    except ValueError:
        raise EvaluationError(
            f"{path}: reason {reason_id!r}, field 'prediction': {value!r} is not a score or positive/negative"
        ) from None


def _winowhy_cross_validation(
    model: Any, rows: Sequence[Any], labels: list[bool], seed: int
) -> dict[str, Any]:
    """Five-fold CV of a classifier on the model's frozen features (mean last hidden state)."""
    if model is None:
        return {"computed": False, "reason": "needs a model's frozen features"}
    # imported here, not at the top: it imports torch, which the web process need not load
    from evaluation.lm.features import mean_hidden_states as extract

    name = "mean of the last hidden states over the text's tokens"
    questions = [r.question_id for r in rows]
    if len(set(questions)) < 5 or len(rows) < 5:
        return {"computed": False, "reason": "fewer than five questions: five folds cannot be filled"}
    features = extract(model, [r.context + r.continuation for r in rows])

    def both(classifier: Literal["feedforward", "logistic"]) -> dict[str, Any]:
        return {
            split: cross_validate(
                features, labels, questions, split=split, classifier=classifier, seed=seed
            ).as_dict()
            for split in ("question", "reason")
        }

    feedforward, logistic = both("feedforward"), both("logistic")
    # Table 7's setting (the feed-forward network) at the top, the logistic regression beside it
    return {
        "computed": True,
        "features": name,
        "classifier": CLASSIFIERS["feedforward"],
        "by_question": feedforward["question"],
        "by_reason": feedforward["reason"],
        "logistic": {
            "classifier": CLASSIFIERS["logistic"],
            "by_question": logistic["question"],
            "by_reason": logistic["reason"],
        },
    }


# --- ComVE ------------------------------------------------------------------------------


def _best_of_three(scores: Sequence[float]) -> int:
    """The index of the highest of three scores; a tie goes to the first."""
    return max(range(3), key=lambda k: (scores[k], -k))


def _baseline_choice(method: str, golds: list[str], options: Sequence[str], seed: int) -> list[str]:
    if method == "first":
        return [options[0]] * len(golds)
    if method == "majority":
        counts = Counter(golds)
        top = max(options, key=lambda o: (counts[o], -options.index(o)))  # ties: the first option
        return [top] * len(golds)
    rng = random.Random(seed)
    return [rng.choice(list(options)) for _ in golds]


def _evaluate_comve(
    *, run: EvaluationRun, folder: release_data.ReleaseFolder, model: Any, writer: _ProgressWriter
) -> Evaluated:
    data = release_data.read_comve(folder, limit=run.settings.get("limit"))
    method = run.method
    seed = int(run.settings.get("seed") or 0)
    batch_size = int(run.settings.get("batch_size") or 32)
    writer.total = len(data.a) + len(data.b) + (len(data.c) if method not in MODEL_METHODS else 0)
    metrics: dict[str, Any] = {}
    records: list[dict[str, Any]] = []
    submissions: dict[str, list[tuple[str, str | int]]] = {}
    uploaded: dict[str, dict[str, str]] = {}
    if method == "predictions":
        uploaded = _comve_uploads(Path(run.predictions_path))
    if method == "partial":
        raise EvaluationError("method 'partial' applies to WSC only; use full or pll for ComVE")

    # Subtask A: which statement is against common sense (the one the model finds less likely).
    if data.a:
        golds = [str(x.answer) for x in data.a]
        a_scores: list[list[float]] | None = None
        a_rules: dict[str, list[str]] = {}
        if method in ("full", "pll"):
            from evaluation.lm.scorers import score_texts, text_token_counts

            texts = [s for x in data.a for s in x.statements]
            flat = score_texts(
                model, texts, method=method, batch_size=batch_size, progress=writer.stage(0, len(data.a))
            )
            counts = text_token_counts(model, texts, method=method)
            a_scores = [[flat[2 * i], flat[2 * i + 1]] for i in range(len(data.a))]
            a_perplexities = [
                [perplexity(flat[2 * i + k], counts[2 * i + k]) for k in (0, 1)] for i in range(len(data.a))
            ]
            a_rules = {
                # against common sense: the higher perplexity (ties: statement 0)
                "perplexity": ["0" if p[0] >= p[1] else "1" for p in a_perplexities],
                "total": ["0" if s[0] < s[1] else "1" for s in a_scores],
                "per_character": [
                    str(length_normalised_choice(s, x.statements, lowest=True))
                    for s, x in zip(a_scores, data.a, strict=True)
                ],
            }
            preds = a_rules[_comve_rule(run, "a")]
        elif method == "predictions":
            preds = _take(uploaded, "A", [x.id for x in data.a])
        else:
            preds = _baseline_choice(method, golds, ("0", "1"), seed)
        acc = choice_accuracy(
            dict(zip([x.id for x in data.a], golds, strict=True)),
            dict(zip([x.id for x in data.a], preds, strict=True)),
        )
        metrics["a"] = {**acc.as_dict(), "significance": accuracy_significance(acc.correct, acc.n)}
        if a_rules:
            metrics["a"].update(
                _rule_accuracies("a", _comve_rule(run, "a"), [x.id for x in data.a], golds, a_rules)
            )
        submissions[SUBMISSION_FILES["A"]] = [(x.id, p) for x, p in zip(data.a, preds, strict=True)]
        for i, (x, p, g) in enumerate(zip(data.a, preds, golds, strict=True)):
            records.append(
                {
                    "id": x.id,
                    "variant": "a",
                    "scores": a_scores[i] if a_scores else None,
                    "prediction": p,
                    "gold": g,
                    "correct": p == g,
                    **(
                        {
                            "perplexities": [round(v, 6) for v in a_perplexities[i]],
                            "prediction_by_rule": {name: r[i] for name, r in a_rules.items()},
                            "prediction_norm": a_rules["per_character"][i],
                        }
                        if a_rules
                        else {}
                    ),
                }
            )
        writer(len(data.a))

    # Subtask B: which reason explains it (the option most likely after the false statement).
    if data.b:
        golds = [x.answer for x in data.b]
        b_scores: list[list[float]] | None = None
        b_rules: dict[str, list[str]] = {}
        if method in ("full", "pll"):
            from evaluation.lm.scorers import score_continuations, score_texts, text_token_counts

            half = len(data.b) // 2
            flat = score_continuations(
                model,
                [(x.false_sent, " " + o) for x in data.b for o in x.options],
                method=method,
                batch_size=batch_size,
                progress=writer.stage(len(data.a), half),
            )
            b_scores = [flat[3 * i : 3 * i + 3] for i in range(len(data.b))]
            sentences = [explanation_sentence(x.false_sent, o) for x in data.b for o in x.options]
            whole = score_texts(
                model,
                sentences,
                method=method,
                batch_size=batch_size,
                progress=writer.stage(len(data.a) + half, len(data.b) - half),
            )
            counts = text_token_counts(model, sentences, method=method)
            b_perplexities = [
                [perplexity(whole[3 * i + k], counts[3 * i + k]) for k in range(3)]
                for i in range(len(data.b))
            ]
            b_rules = {
                "perplexity": ["ABC"[lowest(p)] for p in b_perplexities],
                "continuation": ["ABC"[_best_of_three(s)] for s in b_scores],
                "continuation_per_character": [
                    "ABC"[length_normalised_choice(s, x.options)]
                    for s, x in zip(b_scores, data.b, strict=True)
                ],
            }
            preds = b_rules[_comve_rule(run, "b")]
        elif method == "predictions":
            preds = _take(uploaded, "B", [x.id for x in data.b])
        else:
            preds = _baseline_choice(method, golds, ("A", "B", "C"), seed)
        acc = choice_accuracy(
            dict(zip([x.id for x in data.b], golds, strict=True)),
            dict(zip([x.id for x in data.b], preds, strict=True)),
        )
        metrics["b"] = {
            **acc.as_dict(),
            "significance": accuracy_significance(acc.correct, acc.n, chance=1 / 3),
        }
        if b_rules:
            metrics["b"].update(
                _rule_accuracies("b", _comve_rule(run, "b"), [x.id for x in data.b], golds, b_rules)
            )
        submissions[SUBMISSION_FILES["B"]] = [(x.id, p) for x, p in zip(data.b, preds, strict=True)]
        for i, (xb, p, g) in enumerate(zip(data.b, preds, golds, strict=True)):
            records.append(
                {
                    "id": xb.id,
                    "variant": "b",
                    "scores": b_scores[i] if b_scores else None,
                    "prediction": p,
                    "gold": g,
                    "correct": p == g,
                    **(
                        {
                            "perplexities": [round(v, 6) for v in b_perplexities[i]],
                            "prediction_by_rule": {name: r[i] for name, r in b_rules.items()},
                            "prediction_norm": b_rules["continuation_per_character"][i],
                        }
                        if b_rules
                        else {}
                    ),
                }
            )
        writer(len(data.a) + len(data.b))

    # Subtask C: generated explanations scored by BLEU.
    if data.c:
        explanations: list[str] | None = None
        metrics_c_note = ""
        if method == "predictions":
            if "C" in uploaded:
                explanations = _take(uploaded, "C", [x.id for x in data.c])
        elif method in MODEL_METHODS:
            if run.settings.get("generate_explanations") and getattr(model, "kind", None) == "causal":
                from evaluation.lm.generation import PROMPT, generate_explanations

                writer.total += len(data.c)
                explanations = generate_explanations(
                    model,
                    [release_data.model_text(x.false_sent) for x in data.c],
                    progress=writer.stage(len(data.a) + len(data.b), len(data.c)),
                )
                metrics_c_note = f"greedy generation after the prompt {PROMPT!r}"
        else:
            # Baselines: copy the false statement as its own "explanation".
            explanations = [x.false_sent for x in data.c]
        if explanations is None:
            metrics["c"] = {
                "computed": False,
                "reason": "subtask C needs generated explanations: upload them (subtaskC_answers.csv) "
                "as uploaded predictions, or ask a causal LM run to generate them (the option "
                "'generate explanations'); scoring alone ranks given texts",
            }
        else:
            refs = {x.id: list(x.references) for x in data.c}
            bleu = subtask_c_bleu(refs, dict(zip(refs, explanations, strict=True)))
            metrics["c"] = {"computed": True, "n": len(data.c), **bleu.as_dict()}
            if method in MODEL_METHODS:
                metrics["c"]["explanations"] = metrics_c_note
            elif method != "predictions":
                metrics["c"]["explanations"] = "the false statement copied (baseline)"
            submissions[SUBMISSION_FILES["C"]] = list(zip(refs, explanations, strict=True))
            for xc, e in zip(data.c, explanations, strict=True):
                records.append({"id": xc.id, "variant": "c", "prediction": e, "gold": list(xc.references)})
            writer(writer.total)
    first = metrics.get("a") or metrics.get("b") or {}
    metrics["summary"] = {
        "accuracy": first.get("accuracy"),
        "n": first.get("n"),
        "subtask": "A" if "a" in metrics else "B",
    }
    return metrics, records, submissions, len(records)


def _comve_rule(run: EvaluationRun, subtask: str) -> str:
    """The rule whose answers a run reports as its subtask's accuracy (setting
    ``comve_rule_a`` / ``comve_rule_b``; default: perplexity, as the papers)."""
    rule = str(run.settings.get(f"comve_rule_{subtask}") or DEFAULT_COMVE_RULE)
    if rule not in COMVE_RULES[subtask]:
        raise EvaluationError(
            f"comve_rule_{subtask}: {rule!r} is not a rule of subtask {subtask.upper()} "
            f"({', '.join(COMVE_RULES[subtask])})"
        )
    return rule


def _rule_accuracies(
    subtask: str, headline: str, ids: list[str], golds: list[str], by_rule: dict[str, list[str]]
) -> dict[str, Any]:
    """The headline rule's name and every rule's accuracy beside it (``rules``);
    ``length_normalised`` stays the per-character rule, as before the rules were named."""
    rules: dict[str, Any] = {}
    for name, predictions in by_rule.items():
        acc = choice_accuracy(dict(zip(ids, golds, strict=True)), dict(zip(ids, predictions, strict=True)))
        rules[name] = {
            **acc.as_dict(),
            "wilson_95": list(wilson_interval(acc.correct, acc.n)),
            "rule": COMVE_RULES[subtask][name],
        }
    per_character = "per_character" if subtask == "a" else "continuation_per_character"
    return {
        "rule": headline,
        "rule_text": COMVE_RULES[subtask][headline],
        "rules": rules,
        "length_normalised": rules[per_character],
    }


def _comve_uploads(path: Path) -> dict[str, dict[str, str]]:
    """SemEval submission files in a folder (subtaskA/B/C_answers.csv), or one file for A."""
    if path.is_file():
        return {"A": read_label_predictions(path)}
    out = {}
    for task, name in SUBMISSION_FILES.items():
        if (path / name).is_file():
            out[task] = read_label_predictions(path / name)
    if not out:
        raise EvaluationError(f"{path}: no {', '.join(SUBMISSION_FILES.values())} in the folder")
    return out


def _take(uploaded: dict[str, dict[str, str]], task: str, ids: list[str]) -> list[str]:
    if task not in uploaded:
        raise EvaluationError(f"the predictions have no {SUBMISSION_FILES[task]}")
    values = uploaded[task]
    missing = [i for i in ids if i not in values]
    if missing:
        raise EvaluationError(
            f"{SUBMISSION_FILES[task]}: missing prediction for id {missing[0]!r} ({len(missing)} missing)"
        )
    labels = {"A": ("0", "1"), "B": ("A", "B", "C")}.get(task)
    out = []
    for i in ids:
        v = values[i].strip()
        if labels is not None:
            v = v.upper()
            if v not in labels:
                raise EvaluationError(
                    f"{SUBMISSION_FILES[task]}: id {i!r}, field 'label': {values[i]!r} is not one of {', '.join(labels)}"
                )
        out.append(v)
    return out
