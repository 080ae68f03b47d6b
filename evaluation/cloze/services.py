"""Writes of the cloze analysis: run experiments 1 and 2 and record a ClozeRun."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from django.conf import settings as django_settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from core.errors import WinnowError
from core.jobs import Heartbeat, JobKind, job_update, owner_token
from core.jsonl import read_jsonl
from core.roles import Actor, account_of
from evaluation.cloze.candidates import load_cloze_model
from evaluation.cloze.data import PairFileError, read_pairs, statements_of
from evaluation.cloze.embeddings import EmbeddingFileError, GloveVectors, ModelInputVectors, WordVectors
from evaluation.cloze.experiments import SCORES, paper_examples, run_confidence, run_dispersion
from evaluation.cloze.math import DEFAULT_EQUATIONS, EQUATIONS
from evaluation.lm.modeling import ModelLoadError
from evaluation.lm.scorers.types import start_token_parse
from evaluation.models import ClozeRun, ClozeRunStatus
from evaluation.selectors import model_get


class ClozeError(WinnowError):
    """The analysis cannot run; the message says what to fix."""

    status = 400


# A cloze run's lease (core.jobs): run by a command, it cannot be queued again; the sweep
# marks one whose process was lost failed.
CLOZE_RUN_JOB = JobKind(
    label="cloze run",
    model=ClozeRun,
    status_field="status",
    queued="",
    running=ClozeRunStatus.RUNNING,
    failed=ClozeRunStatus.FAILED,
    error_field="error",
    failed_fields={"finished_at": timezone.now},
)


@dataclass(frozen=True)
class ClozeSettings:
    k: int = 10
    propose_n: int = 30
    seed: int = 0
    max_span_words: int = 3
    limit: int | None = None  # statements for experiment 1 (None: all)
    offset: int = 0  # experiment 1 starts at this statement (to split a long run)
    pairs: int | None = 100  # pairs for experiment 2 (None: all)
    kind: str | None = None  # force "masked" or "causal" for a folder
    start_token: str | int | None = None  # causal LMs: "bos" (None), "eos", a token id or text
    equations: str = DEFAULT_EQUATIONS  # evaluation.cloze.math.EQUATIONS: "paper" or "renormalised"
    paper_examples: bool = True  # experiment 1 on the sentences of Qasemi et al. Tables 1-2 too


def cloze_source_resolve(*, release: str) -> Path:
    """The file or folder holding the ComVE subtask-A pairs of ``release``.

    ``NAME@VERSION`` is a published release (its files checked against its manifest,
    as for ``evaluate``). Also accepted: a ``comve_a.jsonl`` file, a folder holding one,
    or a raw ComVE split folder.
    """
    path = Path(release)
    if path.exists():
        return path
    name, at, version = release.partition("@")
    if at and name and version and "/" not in name and "/" not in version:
        from evaluation.services import EvaluationError, release_folder_published

        try:
            return release_folder_published(release)
        except EvaluationError as exc:
            raise ClozeError(str(exc)) from exc
    raise ClozeError(f"{release}: no such file or folder (and not NAME@VERSION)")


def _validate(settings: ClozeSettings) -> ClozeSettings:
    """The settings checked, with the start token in the form the loader takes."""
    if settings.k < 2:
        raise ClozeError("k must be at least 2 (a mixture of two clusters needs two candidates)")
    if settings.propose_n < settings.k:
        raise ClozeError("the number of causal proposals must be at least k")
    for name in ("limit", "pairs", "offset"):
        value = getattr(settings, name)
        if value is not None and value < 0:
            raise ClozeError(f"{name} must not be negative")
    if settings.kind not in (None, "masked", "causal"):
        raise ClozeError("kind is masked or causal")
    if settings.equations not in EQUATIONS:
        raise ClozeError(f"equations are one of {', '.join(EQUATIONS)}, not {settings.equations!r}")
    try:
        return replace(settings, start_token=start_token_parse(settings.start_token))
    except ValueError as exc:
        raise ClozeError(str(exc)) from exc


class _JsonlWriter:
    """Appends each record as it is computed, so a long run that stops keeps what it did."""

    def __init__(self, path: Path) -> None:
        self.handle = path.open("w", encoding="utf-8")

    def __call__(self, record: dict[str, Any]) -> None:
        self.handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.handle.flush()

    def close(self) -> None:
        self.handle.close()


def cloze_run(
    *,
    release: str,
    model_path: str,
    out_dir: str | Path,
    embeddings: str | None = None,
    settings: ClozeSettings | None = None,
    user: Actor | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    queued: ClozeRun | None = None,
) -> ClozeRun:
    """Run experiments 2 then 1 (the short one first), write results.json + JSONL files into ``out_dir``, record the run.

    Bad input (source, embeddings file, model, settings) raises ClozeError before anything
    is written. An interrupt (Ctrl-C, or SIGTERM through the command) stops the
    experiment in progress; what was done is summarised and marked ``interrupted``.
    """
    settings = settings or ClozeSettings()
    settings = _validate(settings)
    source = cloze_source_resolve(release=release)
    try:
        pairs = read_pairs(source)
    except (PairFileError, OSError) as exc:
        raise ClozeError(str(exc)) from exc
    try:
        glove = GloveVectors(embeddings) if embeddings else None
    except EmbeddingFileError as exc:
        raise ClozeError(str(exc)) from exc
    try:
        model = load_cloze_model(model_path, kind=settings.kind, start_token=settings.start_token)
    except ModelLoadError as exc:
        raise ClozeError(str(exc)) from exc
    vectors: WordVectors = glove or ModelInputVectors(
        model.model, model.tokenizer, space_prefix=model.space_marked
    )
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ClozeError(f"{out}: cannot create the output folder ({exc.strerror})") from exc

    statements = statements_of(pairs)[settings.offset :]
    if settings.limit is not None:
        statements = statements[: settings.limit]
    chosen_pairs = pairs if settings.pairs is None else pairs[: settings.pairs]
    run_settings = {**asdict(settings), "source": str(source)}
    owner = owner_token()
    row = {
        "release": release,
        "model_path": str(model_path),
        "model_kind": model.kind,
        "method": model.method(settings.propose_n),
        "embeddings": vectors.source if glove is None else f"{vectors.source} ({embeddings})",
        "settings": run_settings,
        "out_dir": str(out),
    }
    if queued is not None:
        # a run the web queued runs on the row the page shows; a conditional UPDATE takes
        # it, so a second delivery of its message finds it taken and leaves it alone
        taken = ClozeRun.objects.filter(pk=queued.pk, status=ClozeRunStatus.QUEUED).update(
            **row,
            status=ClozeRunStatus.RUNNING,
            lease_owner=owner,
            heartbeat_at=timezone.now(),
            attempts=F("attempts") + 1,
        )
        queued.refresh_from_db()
        if not taken:
            return queued
        run = queued
    else:
        with transaction.atomic():
            run = ClozeRun.objects.create(
                **row,
                created_by=account_of(user),
                lease_owner=owner,
                heartbeat_at=timezone.now(),
                attempts=1,
            )
    # A heartbeat while the run lasts (outside a transaction, where a thread sees the row):
    # a process killed mid-run leaves a run that the sweep marks failed, not "running".
    beat: AbstractContextManager[object] = (
        nullcontext()
        if transaction.get_connection().in_atomic_block
        else Heartbeat(CLOZE_RUN_JOB, run.pk, owner)
    )
    with beat:
        return _cloze_run_leased(
            run=run,
            owner=owner,
            release=release,
            source=source,
            model=model,
            model_path=model_path,
            vectors=vectors,
            settings=settings,
            run_settings=run_settings,
            chosen_pairs=chosen_pairs,
            statements=statements,
            out=out,
            progress=progress,
        )


def _cloze_run_leased(
    *,
    run: ClozeRun,
    owner: str,
    release: str,
    source: Path,
    model: Any,
    model_path: str,
    vectors: WordVectors,
    settings: ClozeSettings,
    run_settings: dict[str, Any],
    chosen_pairs: Any,
    statements: Any,
    out: Path,
    progress: Callable[[str, int, int], None] | None,
) -> ClozeRun:
    started = time.perf_counter()
    dispersion_file = _JsonlWriter(out / "dispersion.jsonl")
    confidence_file = _JsonlWriter(out / "confidence.jsonl")
    try:
        confidence_records, confidence = run_confidence(
            chosen_pairs,
            model,
            vectors,
            k=settings.k,
            propose_n=settings.propose_n,
            seed=settings.seed,
            max_span_words=settings.max_span_words,
            equations=settings.equations,
            progress=(lambda n, total: progress("confidence", n, total)) if progress else None,
            on_record=confidence_file,
        )
        dispersion_records, dispersion = run_dispersion(
            [] if confidence["interrupted"] else statements,
            model,
            vectors,
            k=settings.k,
            propose_n=settings.propose_n,
            equations=settings.equations,
            progress=(lambda n, total: progress("dispersion", n, total)) if progress else None,
            on_record=dispersion_file,
        )
        examples = (
            paper_examples(
                model, vectors, k=settings.k, propose_n=settings.propose_n, equations=settings.equations
            )
            if settings.paper_examples and not (confidence["interrupted"] or dispersion["interrupted"])
            else None
        )
        results: dict[str, Any] = {
            "run": run.pk,
            "release": release,
            "source": str(source),
            "model": run.model_name or str(Path(model_path).resolve()),
            "model_sha256": model.sha256 or None,
            "model_loaded_from": model.loaded_from or None,
            "model_kind": model.kind,
            "method": run.method,
            "start_token_id": model.start_token_id if model.kind == "causal" else None,
            "start_token": model.start_token if model.kind == "causal" else None,
            "embeddings": run.embeddings,
            "settings": run_settings,
            "equations": _equations_record(settings.equations),
            "dispersion": dispersion,
            "paper_examples": examples,
            "confidence": confidence,
            **_score_lists(dispersion_records, confidence_records),
            "files": ["results.json", "dispersion.jsonl", "confidence.jsonl"],
            "interrupted": bool(confidence["interrupted"] or dispersion["interrupted"]),
        }
        results["seconds"] = round(time.perf_counter() - started, 3)
        (out / "results.json").write_text(json.dumps(results, indent=2, ensure_ascii=False), encoding="utf-8")
    except Exception as exc:
        job_update(
            CLOZE_RUN_JOB,
            run.pk,
            owner,
            status=ClozeRunStatus.FAILED,
            error=f"{type(exc).__name__}: {exc}",
            finished_at=timezone.now(),
            lease_owner="",
        )
        raise
    finally:
        dispersion_file.close()
        confidence_file.close()
    job_update(
        CLOZE_RUN_JOB,
        run.pk,
        owner,
        results=results,
        status=ClozeRunStatus.DONE,
        seconds=results["seconds"],
        finished_at=timezone.now(),
        lease_owner="",
    )
    run.refresh_from_db()
    return run


def cloze_root() -> Path:
    return Path(django_settings.MEDIA_ROOT) / "evaluation" / "cloze"


def cloze_run_queue(
    *, release: str, model_name: str, settings: ClozeSettings, user: Actor | None = None
) -> ClozeRun:
    """A queued analysis of a registry model on a published release (the web's way: names
    only, never paths); ``evaluation.tasks.cloze_run_task`` runs it."""
    settings = _validate(settings)
    if "@" not in release or Path(release).exists():
        raise ClozeError("give NAME@VERSION of a published release")
    cloze_source_resolve(release=release)
    entry = model_get(name=model_name)
    if entry is None:
        raise ClozeError(f"no model named {model_name!r} among the server's models")
    with transaction.atomic():
        run = ClozeRun.objects.create(
            release=release,
            model_name=entry.name,
            model_path=str(entry.path),
            model_kind=entry.kind,
            settings=asdict(settings),
            status=ClozeRunStatus.QUEUED,
            created_by=account_of(user),
        )
        run.out_dir = str(cloze_root() / f"run-{run.pk}")
        run.save(update_fields=["out_dir"])
    return run


def cloze_run_queued(*, run: ClozeRun) -> ClozeRun:
    """Run a queued analysis; a failure is kept on the row, the model named by its registry name."""
    if run.status != ClozeRunStatus.QUEUED:
        return run
    fields = {f for f in ClozeSettings.__dataclass_fields__}
    settings = ClozeSettings(**{k: v for k, v in (run.settings or {}).items() if k in fields})
    try:
        run = cloze_run(
            release=run.release, model_path=run.model_path, out_dir=run.out_dir, settings=settings, queued=run
        )
    except Exception as exc:
        message = str(exc) if isinstance(exc, ClozeError) else f"{type(exc).__name__}: {exc}"
        if run.model_name:
            message = message.replace(run.model_path, run.model_name)
        ClozeRun.objects.filter(pk=run.pk).update(
            status=ClozeRunStatus.FAILED, error=message[:5000], finished_at=timezone.now()
        )
        if not isinstance(exc, WinnowError | ValueError | OSError):
            raise
    run.refresh_from_db()
    return run


def _read_part(folder: Path) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    try:
        results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
        dispersion = [row for _, row in read_jsonl(folder / "dispersion.jsonl", objects=True)]
        confidence = [row for _, row in read_jsonl(folder / "confidence.jsonl", objects=True)]
    except (OSError, ValueError) as exc:  # JsonLinesError is a ValueError
        raise ClozeError(f"{folder}: not a finished cloze output folder ({exc})") from exc
    return results, dispersion, confidence


SAME_IN_EVERY_PART = ("model", "model_kind", "method", "embeddings", "source", "start_token_id")
SAME_SETTINGS = ("k", "propose_n", "seed", "max_span_words", "equations")
# Runs made before the equations were named (23 Nov 2026) used what is now "renormalised".
SETTING_BEFORE_NAMED = {"equations": "renormalised"}


def _setting(results: dict[str, Any], key: str) -> Any:
    return results["settings"].get(key, SETTING_BEFORE_NAMED.get(key))


def _equations_record(name: str) -> dict[str, str]:
    return {"name": name, "description": EQUATIONS[name].description}


def _same_value(key: str, value: Any) -> Any:
    """Model paths are compared resolved (a part may have recorded one relative to the
    folder it ran in)."""
    if key == "model" and isinstance(value, str) and value:
        return str(Path(value).resolve())
    return value


def cloze_results_combine(
    *, parts: list[str | Path], out_dir: str | Path, user: Actor | None = None
) -> ClozeRun:
    """One run from the output folders of runs of the same model and settings on parts of the data.

    Statements and pairs are taken in the order of the parts; one already taken (same id)
    is not counted twice. The summaries are computed again over the union.
    """
    from evaluation.cloze.experiments import confidence_summary, dispersion_summary

    if len(parts) < 2:
        raise ClozeError("combine needs at least two output folders")
    read = [(Path(p), *_read_part(Path(p))) for p in parts]
    first = read[0][1]
    for folder, results, _, _ in read[1:]:
        for key in SAME_IN_EVERY_PART:
            if _same_value(key, results.get(key)) != _same_value(key, first.get(key)):
                raise ClozeError(f"{folder}: {key} differs from {read[0][0]} ({results.get(key)!r})")
        for key in SAME_SETTINGS:
            if _setting(results, key) != _setting(first, key):
                raise ClozeError(f"{folder}: setting {key} differs from {read[0][0]}")
    dispersion_records: list[dict[str, Any]] = []
    confidence_records: list[dict[str, Any]] = []
    seen_statements: set[str] = set()
    seen_pairs: set[str] = set()
    for _, _, part_dispersion, part_confidence in read:
        for record in part_dispersion:
            if record["id"] not in seen_statements:
                seen_statements.add(record["id"])
                dispersion_records.append(record)
        for record in part_confidence:
            if record["id"] not in seen_pairs:
                seen_pairs.add(record["id"])
                confidence_records.append(record)
    dispersion = dispersion_summary(dispersion_records)
    dispersion["seconds"] = round(sum(r["dispersion"].get("seconds", 0) for _, r, _, _ in read), 3)
    dispersion["statements_per_second"] = (
        round(len(dispersion_records) / dispersion["seconds"], 4) if dispersion["seconds"] else None
    )
    # A part asked for the statements [offset, offset + requested) and, as it goes in
    # order, did the first `statements` of them; the union is interrupted only where
    # no part did what some part asked for (an interrupted part finished by another is not).
    asked: set[int] = set()
    done: set[int] = set()
    for _, r, _, _ in read:
        start = int(r["settings"].get("offset") or 0)
        asked.update(range(start, start + int(r["dispersion"].get("requested", 0))))
        done.update(range(start, start + int(r["dispersion"].get("statements", 0))))
    dispersion["requested"] = len(asked)
    dispersion["interrupted"] = not asked <= done
    confidence = confidence_summary(confidence_records)
    confidence["seconds"] = round(sum(r["confidence"].get("seconds", 0) for _, r, _, _ in read), 3)
    # every part takes the pairs from the first one
    confidence["requested"] = max(int(r["confidence"].get("requested", 0)) for _, r, _, _ in read)
    confidence["interrupted"] = confidence["pairs"] < confidence["requested"]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    settings = {
        **first["settings"],
        "parts": [{"folder": str(f), "settings": r["settings"]} for f, r, _, _ in read],
    }
    results = {
        **{key: first.get(key) for key in SAME_IN_EVERY_PART},
        "release": first.get("release"),
        "start_token": first.get("start_token"),
        "settings": settings,
        "equations": _equations_record(_setting(first, "equations")),
        "dispersion": dispersion,
        "paper_examples": next((r["paper_examples"] for _, r, _, _ in read if r.get("paper_examples")), None),
        "confidence": confidence,
        **_score_lists(dispersion_records, confidence_records),
        "files": ["results.json", "dispersion.jsonl", "confidence.jsonl"],
        "interrupted": dispersion["interrupted"] or confidence["interrupted"],
        "seconds": round(sum(r.get("seconds", 0) for _, r, _, _ in read), 3),
        "combined_from": [str(f) for f, _, _, _ in read],
    }
    return _finished_run_write(out, results, dispersion_records, confidence_records, user=user)


def cloze_rescore(
    *,
    folder: str | Path,
    out_dir: str | Path,
    equations: str,
    model_path: str | None = None,
    embeddings: str | None = None,
    user: Actor | None = None,
) -> ClozeRun:
    """Score a finished run's stored replacements and candidates again with other equations.

    No language model is run: the records hold each replacement's word and probability.
    The word vectors must be the run's own: the model's input embeddings (the model is
    loaded from ``model_path`` or the path the run recorded, for its embedding matrix
    only) or, when the run used a GloVe file, that file given as ``embeddings``.
    Experiment 2's mixtures are fitted again with the run's seed.
    """
    from evaluation.cloze.experiments import (
        confidence_rescore,
        confidence_summary,
        dispersion_rescore,
        dispersion_summary,
        paper_examples_table,
    )

    if equations not in EQUATIONS:
        raise ClozeError(f"equations are one of {', '.join(EQUATIONS)}, not {equations!r}")
    source = Path(folder)
    results, dispersion_records, confidence_records = _read_part(source)
    recorded = str(results.get("embeddings") or "")
    vectors: WordVectors
    if recorded.startswith("glove:"):
        if not embeddings:
            raise ClozeError(
                f"{source}: the run used word vectors from {recorded}: give that file with --embeddings"
            )
        try:
            vectors = GloveVectors(embeddings)
        except EmbeddingFileError as exc:
            raise ClozeError(str(exc)) from exc
        if f"glove:{Path(embeddings).name}" != recorded.split(" ")[0]:
            raise ClozeError(f"{embeddings}: the run used {recorded}, not this file")
    else:
        if embeddings:
            raise ClozeError(f"{source}: the run used the model's own input embeddings, not a GloVe file")
        path = model_path or str(results.get("model") or "")
        try:
            model = load_cloze_model(path, start_token=results.get("start_token_id"))
        except ModelLoadError as exc:
            raise ClozeError(str(exc)) from exc
        vectors = ModelInputVectors(model.model, model.tokenizer, space_prefix=model.space_marked)
    seed = int(results["settings"].get("seed", 0))
    max_span = int(results["settings"].get("max_span_words", 3))
    started = time.perf_counter()
    dispersion_new = [dispersion_rescore(r, vectors, equations=equations) for r in dispersion_records]
    confidence_new = [
        confidence_rescore(r, vectors, seed=seed, equations=equations, max_span_words=max_span)
        for r in confidence_records
    ]
    dispersion = {**results["dispersion"], **dispersion_summary(dispersion_new), "equations": equations}
    confidence = {**results["confidence"], **confidence_summary(confidence_new), "equations": equations}
    examples = results.get("paper_examples")
    if examples:
        examples = paper_examples_table(
            [dispersion_rescore(r, vectors, equations=equations) for r in examples["records"]]
        )
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ClozeError(f"{out}: cannot create the output folder ({exc.strerror})") from exc
    settings = {**results["settings"], "equations": equations, "rescored_from": str(source)}
    new = {
        **results,
        "settings": settings,
        "equations": _equations_record(equations),
        "dispersion": dispersion,
        "confidence": confidence,
        "paper_examples": examples,
        **_score_lists(dispersion_new, confidence_new),
        "rescored_from": {
            "folder": str(source),
            "run": results.get("run"),
            "equations": _setting(results, "equations"),
        },
        "rescore_seconds": round(time.perf_counter() - started, 3),
    }
    return _finished_run_write(out, new, dispersion_new, confidence_new, user=user)


def _score_lists(
    dispersion_records: list[dict[str, Any]], confidence_records: list[dict[str, Any]]
) -> dict[str, Any]:
    """The per-statement scores and per-pair confidences behind the run page's violins."""
    return {
        "scores": {
            name: [r[name] for r in dispersion_records if r["accuracy_weighted"] is not None]
            for name in SCORES
        },
        "confidence_scores": {
            "predicted_right": [r["confidence_predicted"] for r in confidence_records if r.get("correct")],
            "predicted_wrong": [
                r["confidence_predicted"] for r in confidence_records if r["encoded"] and not r.get("correct")
            ],
        },
    }


def _finished_run_write(
    out: Path,
    results: dict[str, Any],
    dispersion_records: list[dict[str, Any]],
    confidence_records: list[dict[str, Any]],
    *,
    user: Actor | None,
) -> ClozeRun:
    """Write a run made from stored records (combined or re-scored) and record it as done."""
    for name, records in (("dispersion.jsonl", dispersion_records), ("confidence.jsonl", confidence_records)):
        writer = _JsonlWriter(out / name)
        for record in records:
            writer(record)
        writer.close()
    with transaction.atomic():
        run = ClozeRun.objects.create(
            release=str(results.get("release")),
            model_path=str(results.get("model")),
            model_kind=str(results.get("model_kind")),
            method=str(results.get("method")),
            embeddings=str(results.get("embeddings")),
            settings=results["settings"],
            out_dir=str(out),
            status=ClozeRunStatus.DONE,
            seconds=results.get("seconds"),
            finished_at=timezone.now(),
            created_by=account_of(user),
        )
        results["run"] = run.pk
        (out / "results.json").write_text(json.dumps(results, indent=2, ensure_ascii=False), encoding="utf-8")
        run.results = results
        run.save(update_fields=["results"])
    return run
