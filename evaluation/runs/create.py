"""Create a run: validate the request (release, method, model, predictions, settings) and
store it queued; nothing is scored yet (evaluation.runs.execute does that)."""

import uuid
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

from core.roles import Actor, account_of
from evaluation import release_data
from evaluation.evaluators import evaluator_for
from evaluation.lm.methods import METHOD_VALUES, MODEL_METHODS, Method
from evaluation.lm.modeling import NORMALIZATIONS, model_sha256
from evaluation.lm.scorers.types import PredictionsFileError, start_token_parse
from evaluation.models import EvaluationRun
from evaluation.runs.errors import EvaluationError, PredictionsRefused, public_message
from evaluation.selectors import model_get
from releases.dataset import DATASET_VALUES
from releases.errors import ReleaseIntegrityError
from releases.models import Release, ReleaseStatus
from releases.selectors import release_file_verified_path
from releases.services import release_folder

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
    normalization: str = "exact",
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
    if method not in METHOD_VALUES:
        raise EvaluationError(
            f"unknown method {method!r}; choose one of {', '.join(METHOD_VALUES)}", field="method"
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
            needed = Method(method).model_kind
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
    if normalization not in NORMALIZATIONS:
        raise EvaluationError(
            f"normalization {normalization!r}: one of {', '.join(NORMALIZATIONS)} expected",
            field="normalization",
        )
    if normalization != "exact" and Method(method).model_kind != "causal":
        raise EvaluationError(
            f"the {normalization} normalization applies to a causal LM's methods, not to "
            f"'{Method(method).label}'",
            field="normalization",
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
                **({"normalization": normalization} if normalization != "exact" else {}),
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


def method_unfit(method: str, dataset: str) -> str | None:
    """Why ``method`` cannot score a ``dataset`` release, or None when it can (or when no
    release, or one of no known data set, is chosen yet)."""
    if dataset not in DATASET_VALUES:
        return None
    reason = evaluator_for(dataset).unfit.get(Method(method))
    return f"the method '{Method(method).label}' {reason}" if reason else None


def _method_fits(method: str, dataset: str) -> None:
    reason = method_unfit(method, dataset)
    if reason:
        raise EvaluationError(reason, field="method")


def _predictions_check(folder: release_data.ReleaseFolder, path: Path, name: str) -> None:
    """Read the predictions as the run will (format, ids, labels of the release's items)."""
    try:
        evaluator_for(folder.dataset).predictions_check(folder, path)
    except (PredictionsFileError, EvaluationError, ValueError, OSError) as exc:
        raise PredictionsRefused(public_message(str(exc), {path: name})) from exc
