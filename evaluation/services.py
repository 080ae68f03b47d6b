"""Evaluation runs: create a run, execute it (score, compute metrics, write files).

``evaluation_run_create`` validates the request and stores a queued run;
``evaluation_run`` executes it: reads the release's frozen files (``release_data``),
scores with ``evaluation.scorers`` (a model loaded by ``evaluation.modeling`` or a
baseline), computes the data set's metrics (``evaluation.metrics``) and writes into the
run folder ``results.json``, ``predictions.jsonl`` and, for ComVE, the SemEval
submission CSVs. Progress is kept on the run row for the web page.
"""

import json
import logging
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.errors import WinnowError
from core.roles import Actor, account_of
from evaluation import release_data
from evaluation.metrics.comve import (
    SUBMISSION_FILES,
    choice_accuracy,
    length_normalised_choice,
    subtask_c_bleu,
    write_submission,
)
from evaluation.metrics.significance import accuracy_significance, wilson_interval
from evaluation.metrics.winowhy import cross_validate, winowhy_metrics
from evaluation.metrics.wsc import WscOutcome, wsc_metrics
from evaluation.modeling import load_model
from evaluation.models import EvaluationRun, Method, RunStatus
from evaluation.predictions_io import read_label_predictions, write_jsonl
from evaluation.scorers.types import MODEL_METHODS, start_token_parse
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
    """A run that cannot be created or executed; the message says why."""

    status = 400


# --- where things are -------------------------------------------------------------------


def release_locate(spec: str) -> release_data.ReleaseFolder:
    """The exported files of a release: ``NAME@VERSION`` of a published release, or the
    path of an exported folder (a release downloaded elsewhere).

    A named release must be published and its files must still match its manifest's
    SHA-256 checksums, so that a score is always measured on exactly the released data.
    """
    spec = spec.strip()
    if not spec:
        raise EvaluationError("no release given: pass NAME@VERSION or the folder of an exported release")
    path = Path(spec).expanduser()
    if not path.is_dir() and "@" in spec:
        path = release_folder_published(spec)
    elif not path.is_dir():
        raise EvaluationError(f"release {spec!r}: no such folder and not NAME@VERSION")
    try:
        return release_data.open_release_folder(path)
    except release_data.ReleaseDataError as exc:
        raise EvaluationError(str(exc)) from exc


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
            f"no published release {spec}: only published releases are evaluated "
            "(or pass the folder of an exported release)"
        )
    files = list(release.files.all())
    if not files:
        raise EvaluationError(f"release {spec} has no built files yet (build status: {release.build_status})")
    try:
        for release_file in files:
            release_file_verified_path(release_file=release_file)
    except ReleaseIntegrityError as exc:
        raise EvaluationError(str(exc)) from exc
    return release_folder(release)


def runs_root() -> Path:
    return Path(settings.MEDIA_ROOT) / "evaluation" / "runs"


# --- create -----------------------------------------------------------------------------


def evaluation_run_create(
    *,
    release: str,
    method: str,
    model_path: str = "",
    predictions_path: str = "",
    seed: int = 0,
    limit: int | None = None,
    batch_size: int = 32,
    threads: int | None = None,
    out_dir: str = "",
    generate_explanations: bool = False,
    start_token: str | int | None = None,
    created_by: Actor | None = None,
) -> EvaluationRun:
    """Validate and store a queued run (nothing is scored yet)."""
    if method not in Method.values:
        raise EvaluationError(f"unknown method {method!r}; choose one of {', '.join(Method.values)}")
    folder = release_locate(release)
    if method in MODEL_METHODS:
        if not model_path:
            raise EvaluationError(
                f"method {method!r} needs --model (a local Hugging Face folder or GGUF file)"
            )
        if not Path(model_path).exists():
            raise EvaluationError(
                f"model {model_path!r}: no such file or folder (models come from local paths only)"
            )
    if method == Method.PREDICTIONS:
        if not predictions_path:
            raise EvaluationError("method 'predictions' needs a predictions file (--predictions)")
        if not Path(predictions_path).exists():
            raise EvaluationError(f"predictions {predictions_path!r}: no such file or folder")
    if limit is not None and limit < 1:
        raise EvaluationError("limit must be at least 1")
    if batch_size < 1:
        raise EvaluationError("batch size must be at least 1")
    if threads is not None and threads < 1:
        raise EvaluationError("threads must be at least 1")
    try:
        start = start_token_parse(start_token)
    except ValueError as exc:
        raise EvaluationError(str(exc)) from exc
    if start is not None and method not in MODEL_METHODS:
        raise EvaluationError(f"a start token applies to model methods, not to {method!r}")
    with transaction.atomic():
        run = EvaluationRun.objects.create(
            release_name=folder.name,
            release_version=folder.version,
            release_path=str(folder.path.resolve()),
            release_identity=folder.identity,
            dataset=folder.dataset,
            method=method,
            model_path=str(Path(model_path).resolve()) if model_path else "",
            predictions_path=str(Path(predictions_path).resolve()) if predictions_path else "",
            settings={
                "seed": seed,
                "limit": limit,
                "batch_size": batch_size,
                "threads": threads,
                "generate_explanations": generate_explanations,
                "start_token": start,
            },
            created_by=account_of(created_by),
        )
        run.results_dir = str(Path(out_dir).resolve()) if out_dir else str(runs_root() / f"run-{run.pk}")
        run.save(update_fields=["results_dir"])
    return run


# --- execute ----------------------------------------------------------------------------


class _ProgressWriter:
    """Keeps the run's progress columns current (at most one write per second or step)."""

    def __init__(self, run: EvaluationRun, extra: Progress | None) -> None:
        self.run = run
        self.on_progress = extra
        self.offset = 0
        self.total = 0
        self._last = 0.0

    def stage(self, offset: int, size: int) -> Progress:
        """A callback for a scorer covering ``size`` of our items from ``offset``; the scorer
        counts in its own units (e.g. one request per candidate), mapped onto ours."""

        def report(done: int, total: int) -> None:
            self(offset + (size * done // total if total else size))

        self(offset)  # the page shows "0 / N" while the first batch runs
        return report

    def __call__(self, done: int) -> None:
        now = time.monotonic()
        if done == 0 or done >= self.total or now - self._last >= 1.0:
            self._last = now
            EvaluationRun.objects.filter(pk=self.run.pk).update(progress_done=done, progress_total=self.total)
        if self.on_progress is not None:
            self.on_progress(done, self.total)


def evaluation_run(*, run: EvaluationRun, progress: Progress | None = None) -> EvaluationRun:
    """Execute a queued run; on failure the run is marked failed and EvaluationError raised."""
    if run.status == RunStatus.DONE:
        return run
    started = time.perf_counter()
    EvaluationRun.objects.filter(pk=run.pk).update(
        status=RunStatus.RUNNING, started_at=timezone.now(), error="", progress_done=0
    )
    run.refresh_from_db()
    try:
        out = Path(run.results_dir)
        out.mkdir(parents=True, exist_ok=True)
        folder = release_data.open_release_folder(run.release_path)
        writer = _ProgressWriter(run, progress)
        timing: dict[str, float] = {}
        model = None
        if run.method in MODEL_METHODS:
            t = time.perf_counter()
            model = load_model(
                run.model_path,
                threads=run.settings.get("threads") or None,
                start_token=run.settings.get("start_token"),
            )
            timing["load_seconds"] = time.perf_counter() - t
            run.model_identity = dict(getattr(model, "settings", {}) or {})
        else:
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
            "model": run.model_identity,
            "model_path": run.model_path,
            "settings": run.settings,
            "metrics": metrics,
            "timing": timing,
            "files": [*written, RESULTS_FILE],
        }
        (out / RESULTS_FILE).write_text(
            json.dumps(results, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
        )
        with transaction.atomic():
            run.metrics = metrics
            run.timing = timing
            run.status = RunStatus.DONE
            run.progress_done = run.progress_total = writer.total
            run.finished_at = timezone.now()
            run.save()
        return run
    # Domain errors (bad release, model, predictions; ModelLoadError and ScoringError are
    # ValueErrors) become EvaluationError with their message.
    except (EvaluationError, ValueError, OSError, ImportError) as exc:
        _fail(run, str(exc))
        raise EvaluationError(str(exc)) from exc
    except BaseException as exc:  # a run must never stay "running" after a crash or an interrupt
        _fail(run, f"{type(exc).__name__}: {exc}")
        raise


def _fail(run: EvaluationRun, message: str) -> None:
    EvaluationRun.objects.filter(pk=run.pk).update(
        status=RunStatus.FAILED, error=message[:5000], finished_at=timezone.now()
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
    from evaluation.scorers import read_predictions, score_wsc

    rows = release_data.read_wsc(folder, limit=run.settings.get("limit"))
    items = [r.item for r in rows]
    writer.total = sum(len(i.variants()) for i in items)
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
    writer.total = len(scores)
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
        from evaluation.scorers import score_continuations

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
    from evaluation.features import mean_hidden_states as extract

    name = "mean of the last hidden states over the text's tokens"
    questions = [r.question_id for r in rows]
    if len(set(questions)) < 5 or len(rows) < 5:
        return {"computed": False, "reason": "fewer than five questions: five folds cannot be filled"}
    features = extract(model, [r.context + r.continuation for r in rows])
    return {
        "computed": True,
        "features": name,
        "classifier": "logistic regression on standardised features (scikit-learn)",
        "by_question": cross_validate(features, labels, questions, split="question", seed=seed).as_dict(),
        "by_reason": cross_validate(features, labels, questions, split="reason", seed=seed).as_dict(),
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
        if method in ("full", "pll"):
            from evaluation.scorers import score_texts

            flat = score_texts(
                model,
                [s for x in data.a for s in x.statements],
                method=method,
                batch_size=batch_size,
                progress=writer.stage(0, len(data.a)),
            )
            a_scores = [[flat[2 * i], flat[2 * i + 1]] for i in range(len(data.a))]
            preds = ["0" if s[0] < s[1] else "1" for s in a_scores]  # ties: statement 0
            a_norm = [
                str(length_normalised_choice(s, x.statements, lowest=True))
                for s, x in zip(a_scores, data.a, strict=True)
            ]
        elif method == "predictions":
            preds = _take(uploaded, "A", [x.id for x in data.a])
        else:
            preds = _baseline_choice(method, golds, ("0", "1"), seed)
        acc = choice_accuracy(
            dict(zip([x.id for x in data.a], golds, strict=True)),
            dict(zip([x.id for x in data.a], preds, strict=True)),
        )
        metrics["a"] = {**acc.as_dict(), "significance": accuracy_significance(acc.correct, acc.n)}
        if a_scores:
            metrics["a"]["length_normalised"] = _normalised_accuracy([x.id for x in data.a], golds, a_norm)
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
                    **({"prediction_norm": a_norm[i]} if a_scores else {}),
                }
            )
        writer(len(data.a))

    # Subtask B: which reason explains it (the option most likely after the false statement).
    if data.b:
        golds = [x.answer for x in data.b]
        b_scores: list[list[float]] | None = None
        if method in ("full", "pll"):
            from evaluation.scorers import score_continuations

            flat = score_continuations(
                model,
                [(x.false_sent, " " + o) for x in data.b for o in x.options],
                method=method,
                batch_size=batch_size,
                progress=writer.stage(len(data.a), len(data.b)),
            )
            b_scores = [flat[3 * i : 3 * i + 3] for i in range(len(data.b))]
            preds = ["ABC"[_best_of_three(s)] for s in b_scores]
            b_norm = [
                "ABC"[length_normalised_choice(s, x.options)] for s, x in zip(b_scores, data.b, strict=True)
            ]
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
        if b_scores:
            metrics["b"]["length_normalised"] = _normalised_accuracy([x.id for x in data.b], golds, b_norm)
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
                    **({"prediction_norm": b_norm[i]} if b_scores else {}),
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
                from evaluation.generation import PROMPT, generate_explanations

                writer.total += len(data.c)
                explanations = generate_explanations(
                    model,
                    [x.false_sent for x in data.c],
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
                "with --method predictions, or ask a causal LM run to generate them "
                "(evaluate --generate-explanations); scoring alone ranks given texts",
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


def _normalised_accuracy(ids: list[str], golds: list[str], predictions: list[str]) -> dict[str, Any]:
    """Accuracy of the predictions by log-likelihood per character (lm-eval's acc_norm)."""
    acc = choice_accuracy(dict(zip(ids, golds, strict=True)), dict(zip(ids, predictions, strict=True)))
    return {
        **acc.as_dict(),
        "wilson_95": list(wilson_interval(acc.correct, acc.n)),
        "rule": "log-likelihood divided by the text's length in characters (lm-evaluation-harness acc_norm)",
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
