"""Artifact audits: create one (checked), compute its features in chunks, analyse them.

``audit_create`` checks a curator's request (the source's items and labels, the model in
the registry, the parameters against the number of items) and stores a queued
:class:`~evaluation.models.Audit` with its :class:`~evaluation.models.AuditChunk` rows; bad
input raises :class:`AuditError` naming the setting, and nothing is written.

Each chunk is a job of its own on the ``models`` queue under a lease (``core.jobs``), so
any number of model workers share an audit: ``audit_chunk_run`` loads the model (the
worker's model cache keeps it), reads the cache (``FeatureVector``: model SHA-256 and text
SHA-256), computes only the texts it misses and stores them. The worker that finishes the
last chunk moves the audit to ``analysing`` with one conditional UPDATE and runs
``audit_analyse``: the baselines, cartography and AfLite (``evaluation.audit.analysis``)
over the features read back from the cache.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from core.errors import WinnowError
from core.jobs import Heartbeat, JobKind, job_claim, job_update, owner_token
from core.roles import Actor, account_of, user_is_curator
from evaluation.audit.aflite import AfliteParams
from evaluation.audit.errors import AuditInputError
from evaluation.audit.frozen import (
    TextFeatures,
    compute_features,
    hidden_bytes,
    hidden_from_bytes,
    text_sha256,
    view_arrays,
)
from evaluation.audit.inputs import SPECS, AuditInput, audit_input
from evaluation.lm import model_cache
from evaluation.lm.modeling import model_sha256
from evaluation.models import Audit, AuditChunk, AuditStatus, ChunkStatus, FeatureVector
from evaluation.runs.errors import EvaluationError
from evaluation.selectors import model_get
from releases import snapshot
from releases.models import Release, ReleaseItem

logger = logging.getLogger(__name__)

#: Texts per chunk: a chunk is what one worker takes at a time.
DEFAULT_CHUNK_TEXTS = 256
BATCH_SIZE = 32


class AuditError(EvaluationError):
    """An audit that cannot be created or run; ``field`` names the setting at fault (the
    evaluation errors' field, status 400)."""


AUDIT_JOB = JobKind(
    label="audit analysis",
    model=Audit,
    status_field="status",
    queued=AuditStatus.FEATURES,
    running=AuditStatus.ANALYSING,
    failed=AuditStatus.FAILED,
    error_field="error",
    failed_fields={"finished_at": timezone.now},
)

CHUNK_JOB = JobKind(
    label="audit features chunk",
    model=AuditChunk,
    status_field="status",
    queued=ChunkStatus.QUEUED,
    running=ChunkStatus.RUNNING,
    failed=ChunkStatus.FAILED,
    error_field="error",
)


# --- sources ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """What an audit reads: a release's frozen items, or a collection's current ones."""

    dataset: str
    label: str
    release: Release | None = None
    collection: str = ""
    split: str = ""

    def rows(self) -> Iterator[tuple[str, dict[str, Any]]]:
        if self.release is not None:
            yield from (
                ReleaseItem.objects.filter(release=self.release)
                .order_by("position")
                .values_list("key", "payload")
                .iterator(chunk_size=2000)
            )
            return
        selection: dict[str, Any] = {"collection": self.collection}
        if self.split:
            selection["split"] = self.split
        yield from snapshot.item_payloads(self.dataset, selection)


def source_of_release(ref: str) -> Source:
    name, _, version = ref.partition("@")
    release = Release.objects.filter(name=name, version=version).first() if version else None
    if release is None:
        raise AuditError(f"release: no release {ref!r} (write NAME@VERSION)", field="release")
    return Source(dataset=release.dataset, label=f"{release.name}@{release.version}", release=release)


def source_of_collection(dataset: str, collection: str, split: str = "") -> Source:
    if dataset not in SPECS:
        raise AuditError(
            f"dataset: {dataset!r} cannot be audited; choose one of {', '.join(SPECS)}", field="dataset"
        )
    if not collection:
        raise AuditError("collection: name the collection to audit", field="collection")
    where = "/".join(p for p in (dataset, collection, split) if p)
    return Source(dataset=dataset, label=where, collection=collection, split=split)


def source_parse(value: str) -> Source:
    """``release:NAME@VERSION`` or ``collection:DATASET/COLLECTION[/SPLIT]`` (the form's values)."""
    kind, _, rest = value.partition(":")
    if kind == "release":
        return source_of_release(rest)
    if kind == "collection":
        parts = rest.split("/")
        if len(parts) in (2, 3):
            return source_of_collection(parts[0], parts[1], parts[2] if len(parts) == 3 else "")
    raise AuditError(
        f"source: {value!r} is neither release:NAME@VERSION nor collection:DATASET/NAME", field="source"
    )


def audit_audit_input(audit: Audit) -> AuditInput:
    """The audit's input rebuilt from its source, narrowed to the keys it was created with."""
    if audit.release_id is not None:
        assert audit.release is not None
        source = Source(dataset=audit.dataset, label=audit.source_label, release=audit.release)
    else:
        source = Source(
            dataset=audit.dataset, label=audit.source_label, collection=audit.collection, split=audit.split
        )
    wanted = set(audit.item_keys)
    built = audit_input(audit.dataset, ((k, p) for k, p in source.rows() if k in wanted))
    if built.keys != list(audit.item_keys):
        raise AuditError(
            f"the items of {audit.source_label} changed since audit #{audit.pk} was created "
            f"({len(built.keys)} of {len(audit.item_keys)} found): start a new audit"
        )
    return built


# --- parameters ---------------------------------------------------------------------------


def _whole(name: str, value: Any, low: int, high: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise AuditError(f"{name}: {value!r} is not a whole number", field=name) from None
    if not low <= number <= high:
        raise AuditError(f"{name}: {number} is not between {low} and {high}", field=name)
    return number


def aflite_params_of(values: Mapping[str, Any]) -> AfliteParams:
    """AfLite's parameters from a request (defaults: WinoGrande's settings, as AfliteParams has them)."""
    try:
        return AfliteParams(**dict(values))
    except TypeError:
        names = ", ".join(f.name for f in dataclasses.fields(AfliteParams))
        unknown = ", ".join(sorted(set(values) - {f.name for f in dataclasses.fields(AfliteParams)}))
        raise AuditError(
            f"aflite: unknown parameter {unknown or '?'}; the parameters are {names}", field="aflite"
        ) from None


def check_sizes(built: AuditInput, *, folds: int, aflite: AfliteParams) -> None:
    """Refuse parameters the items are too few for, naming the setting."""
    n = built.size
    groups = len(set(built.groups)) if built.groups is not None else n
    if groups < folds:
        unit = "twin pairs" if built.twins else ("questions" if built.groups is not None else "items")
        raise AuditError(
            f"folds: {folds} folds need at least {folds} {unit}; {built.source_name} has {groups}",
            field="folds",
        )
    try:
        aflite.resolved(n)
    except AuditInputError as exc:
        name = exc.message.split(":", 1)[0]
        raise AuditError(
            f"aflite.{exc.message} ({built.source_name}: {n} items)", field=f"aflite.{name}"
        ) from None


# --- create -------------------------------------------------------------------------------


def audit_create(
    *,
    source: Source,
    model: str,
    folds: Any = 5,
    seed: Any = 0,
    epochs: Any = 6,
    repeats: Any = 5,
    aflite: Mapping[str, Any] | None = None,
    chunk_texts: Any = DEFAULT_CHUNK_TEXTS,
    created_by: Actor | None,
) -> Audit:
    """A queued audit of ``source`` with ``model`` (a registry name) and its chunks.
    Raises AuditError naming the setting at fault; nothing is written then."""
    if created_by is not None and not user_is_curator(created_by):
        raise AuditError("only curators start audits", status=403)
    entry = model_get(name=model)
    if entry is None:
        raise AuditError(f"model: no model {model!r} in the registry", field="model")
    folds = _whole("folds", folds, 2, 20)
    seed = _whole("seed", seed, 0, 2**32 - 1)
    epochs = _whole("epochs", epochs, 2, 100)
    repeats = _whole("repeats", repeats, 1, 50)
    chunk_texts = _whole("chunk_texts", chunk_texts, 1, 100_000)
    params_aflite = aflite_params_of({"seed": seed, **dict(aflite or {})})
    try:
        built = audit_input(source.dataset, source.rows())
    except AuditInputError as exc:
        raise AuditError(f"{exc.message} in {source.label}", field="dataset") from None
    built.source_name = source.label
    check_sizes(built, folds=folds, aflite=params_aflite)
    texts = built.texts()
    sha256 = model_sha256(entry.path)
    params = {
        "folds": folds,
        "seed": seed,
        "epochs": epochs,
        "repeats": repeats,
        "chunk_texts": chunk_texts,
        "aflite": params_aflite.as_dict(),
        "features": f"mean-pooled last hidden states ({entry.kind_label}) of the {built.full_view} input",
    }
    with transaction.atomic():
        audit = Audit.objects.create(
            release=source.release,
            source_label=source.label,
            dataset=source.dataset,
            collection=source.collection,
            split=source.split,
            model_name=entry.name,
            model_kind=entry.kind,
            model_sha256=sha256,
            params=params,
            item_keys=built.keys,
            chunks_total=(len(texts) + chunk_texts - 1) // chunk_texts,
            texts_total=len(texts),
            created_by=account_of(created_by),
        )
        AuditChunk.objects.bulk_create(
            AuditChunk(audit=audit, index=i, texts=texts[start : start + chunk_texts])
            for i, start in enumerate(range(0, len(texts), chunk_texts))
        )
    return audit


# --- the features ---------------------------------------------------------------------------


def cached_features(model_sha: str, texts: Iterable[str]) -> dict[str, TextFeatures]:
    """The cache's features of ``texts`` under the model (those it has)."""
    wanted = {text_sha256(t): t for t in texts}
    found: dict[str, TextFeatures] = {}
    keys = list(wanted)
    for start in range(0, len(keys), 500):
        rows = FeatureVector.objects.filter(model_sha256=model_sha, text_sha256__in=keys[start : start + 500])
        for row in rows.values_list("text_sha256", "dim", "hidden", "logprob", "tokens"):
            found[wanted[row[0]]] = TextFeatures(hidden_from_bytes(row[2], row[1]), row[3], row[4])
    return found


def _store(model_sha: str, computed: Mapping[str, TextFeatures]) -> None:
    FeatureVector.objects.bulk_create(
        [
            FeatureVector(
                model_sha256=model_sha,
                text_sha256=text_sha256(text),
                dim=int(f.hidden.shape[0]),
                hidden=hidden_bytes(f.hidden),
                logprob=f.logprob,
                tokens=f.tokens,
            )
            for text, f in computed.items()
        ],
        ignore_conflicts=True,  # another worker's chunk stored the same text meanwhile
        batch_size=500,
    )


def _fail_audit(audit_id: int, message: str) -> None:
    Audit.objects.filter(pk=audit_id).exclude(status__in=(AuditStatus.DONE, AuditStatus.FAILED)).update(
        status=AuditStatus.FAILED, error=message[:5000], finished_at=timezone.now(), lease_owner=""
    )


def audit_chunk_run(*, chunk_id: int, owner: str | None = None) -> bool:
    """Compute one chunk's features under its lease (claimed here when ``owner`` is None).
    Returns True when this was the audit's last chunk and the caller should analyse it."""
    chunk = AuditChunk.objects.select_related("audit").filter(pk=chunk_id).first()
    if chunk is None or chunk.status == ChunkStatus.DONE:
        return False
    if owner is None:
        owner = owner_token()
        if not job_claim(
            CHUNK_JOB, chunk.pk, owner=owner, claimable=(ChunkStatus.QUEUED, ChunkStatus.FAILED)
        ):
            return False
    audit = chunk.audit
    if audit.status in (AuditStatus.FAILED, AuditStatus.DONE):
        job_update(
            CHUNK_JOB, chunk.pk, owner, status=ChunkStatus.FAILED, error="the audit was over", lease_owner=""
        )
        return False
    Audit.objects.filter(pk=audit.pk, status=AuditStatus.QUEUED).update(status=AuditStatus.FEATURES)
    started = time.monotonic()
    try:
        if transaction.get_connection().in_atomic_block:
            computed, cached = _chunk_features(chunk, owner)
        else:
            with Heartbeat(CHUNK_JOB, chunk.pk, owner):
                computed, cached = _chunk_features(chunk, owner)
    except BaseException as exc:
        message = getattr(exc, "message", "") or f"{type(exc).__name__}: {exc}"
        job_update(
            CHUNK_JOB, chunk.pk, owner, status=ChunkStatus.FAILED, error=message[:5000], lease_owner=""
        )
        _fail_audit(audit.pk, f"chunk {chunk.index}: {message}")
        if isinstance(exc, AuditError | ValueError | OSError | ImportError):
            return False
        raise
    with transaction.atomic():
        if not job_update(
            CHUNK_JOB,
            chunk.pk,
            owner,
            status=ChunkStatus.DONE,
            computed=computed,
            cached=cached,
            worker=":".join(owner.split(":")[:2]),
            seconds=time.monotonic() - started,
            lease_owner="",
        ):
            return False  # another worker took the chunk over; it counts it
        Audit.objects.filter(pk=audit.pk).update(
            texts_done=F("texts_done") + len(chunk.texts), texts_cached=F("texts_cached") + cached
        )
    left = AuditChunk.objects.filter(audit_id=audit.pk).exclude(status=ChunkStatus.DONE).exists()
    if left:
        return False
    return bool(
        Audit.objects.filter(pk=audit.pk, status=AuditStatus.FEATURES, features_done_at__isnull=True).update(
            features_done_at=timezone.now()
        )
    )


def _chunk_features(chunk: AuditChunk, owner: str) -> tuple[int, int]:
    audit = chunk.audit
    texts = list(chunk.texts)
    have = cached_features(audit.model_sha256, texts)
    missing = [t for t in texts if t not in have]
    if missing:
        entry = model_get(name=audit.model_name)
        if entry is None:
            raise AuditError(f"model: {audit.model_name!r} is no longer in the registry", field="model")
        loaded = model_cache.load(entry.path, threads=settings.WINNOW_AUDIT_THREADS or None)
        sha = str(loaded.settings.get("sha256", ""))
        if sha != audit.model_sha256:
            raise AuditError(
                f"model: {audit.model_name}'s files changed since the audit started "
                f"(SHA-256 {sha[:12]}..., not {audit.model_sha256[:12]}...): start a new audit",
                field="model",
            )
        features = compute_features(loaded, missing, batch_size=BATCH_SIZE)
        _store(audit.model_sha256, dict(zip(missing, features, strict=True)))
    return len(missing), len(texts) - len(missing)


# --- the analysis ---------------------------------------------------------------------------


def audit_features(audit: Audit, built: AuditInput | None = None) -> dict[str, Any]:
    """Every view's feature arrays of a finished feature job, read from the cache."""
    built = built or audit_audit_input(audit)
    lookup = cached_features(audit.model_sha256, built.texts())
    missing = [t for t in built.texts() if t not in lookup]
    if missing:
        raise AuditError(
            f"audit #{audit.pk}: {len(missing)} texts have no features in the cache (first: {missing[0][:80]!r})"
        )
    return view_arrays(built, lookup)


def audit_analyse(*, audit_id: int, owner: str | None = None) -> Audit:
    """Run the baselines, cartography and AfLite over a finished feature job (under the
    audit's lease, claimed here when ``owner`` is None) and store the results."""
    from evaluation.audit.analysis import audit_analyse_features

    if owner is None:
        owner = owner_token()
        if not job_claim(AUDIT_JOB, audit_id, owner=owner, claimable=(AuditStatus.FEATURES,)):
            audit = Audit.objects.get(pk=audit_id)
            if audit.status != AuditStatus.DONE:
                raise AuditError(f"audit #{audit_id} is {audit.status}: its analysis cannot start now")
            return audit
    audit = Audit.objects.select_related("release").get(pk=audit_id)
    try:
        with Heartbeat(AUDIT_JOB, audit.pk, owner):
            built = audit_audit_input(audit)
            arrays = audit_features(audit, built)
            params = audit.params
            results, per_item = audit_analyse_features(
                built, arrays, params=params, aflite_params=aflite_params_of(params.get("aflite") or {})
            )
    except BaseException as exc:
        message = getattr(exc, "message", "") or f"{type(exc).__name__}: {exc}"
        job_update(
            AUDIT_JOB,
            audit.pk,
            owner,
            status=AuditStatus.FAILED,
            error=message[:5000],
            finished_at=timezone.now(),
            lease_owner="",
        )
        if isinstance(exc, WinnowError | ValueError):
            audit.refresh_from_db()
            return audit
        raise
    job_update(
        AUDIT_JOB,
        audit.pk,
        owner,
        status=AuditStatus.DONE,
        results=results,
        per_item=per_item,
        finished_at=timezone.now(),
        lease_owner="",
    )
    audit.refresh_from_db()
    return audit


def audit_run_here(*, audit: Audit) -> Audit:
    """Every chunk, then the analysis, in this process (``manage.py audit`` without
    ``--queue``, and tests)."""
    for chunk_id in AuditChunk.objects.filter(audit=audit).order_by("index").values_list("pk", flat=True):
        if audit_chunk_run(chunk_id=chunk_id):
            return audit_analyse(audit_id=audit.pk)
    audit.refresh_from_db()
    if audit.status == AuditStatus.FEATURES and audit.features_done_at is not None:
        return audit_analyse(audit_id=audit.pk)
    return audit


# --- AfLite again, and the filtered release -------------------------------------------------


@dataclass(frozen=True)
class AfliteRun:
    """AfLite over an audit's cached features: its summary and each item's iteration of
    removal (None: kept)."""

    summary: dict[str, Any]
    removed_in: list[int | None]
    keys: list[str]

    @property
    def removed(self) -> list[str]:
        return [k for k, r in zip(self.keys, self.removed_in, strict=True) if r is not None]


def audit_aflite(*, audit: Audit, aflite: Mapping[str, Any] | None = None) -> AfliteRun:
    """AfLite's result of a finished audit: the stored one, or (with other ``aflite``
    parameters) a new run over the cached features; no model is loaded."""
    from evaluation.audit.aflite import aflite as run_aflite

    if audit.status != AuditStatus.DONE:
        raise AuditError(f"audit #{audit.pk} is {audit.status}, not done", field="audit")
    stored = dict(audit.params.get("aflite") or {})
    wanted = aflite_params_of({**stored, **dict(aflite or {})}).as_dict()
    keys = list(audit.per_item.get("key") or [])
    if wanted == stored:
        return AfliteRun(
            dict(audit.results.get("aflite") or {}), list(audit.per_item["aflite_removed_in"]), keys
        )
    built = audit_audit_input(audit)
    check_sizes(built, folds=int(audit.params["folds"]), aflite=aflite_params_of(wanted))
    arrays = audit_features(audit, built)
    result = run_aflite(arrays[built.full_view].hidden, built.labels, params=aflite_params_of(wanted))
    from evaluation.audit.analysis import aflite_summary

    summary, removed_in = aflite_summary(result, built.full_view)
    return AfliteRun(summary, removed_in, keys)


def audit_filtered_release_create(
    *,
    audit: Audit,
    name: str,
    version: str = "1.0.0",
    aflite: Mapping[str, Any] | None = None,
    user: Actor | None,
) -> Release:
    """A draft release of the items AfLite kept, beside the full one: its card states the
    filter, its diff (against the full release) names every removed item."""
    from releases.services import FilteredFrom, release_create

    if user is not None and not user_is_curator(user):
        raise AuditError("only curators make releases", status=403)
    run = audit_aflite(audit=audit, aflite=aflite)
    if audit.release is not None:
        full = audit.release
        dataset, split = full.dataset, full.split
        collection = str((full.selection or {}).get("collection") or "")
        label_sources = dict((full.selection or {}).get("label_sources") or {})
    else:
        raise AuditError(
            "release: a filtered release is made beside a full release; audit a release of the collection first",
            field="release",
        )
    description = {
        "method": "AfLite (Le Bras et al. 2020, Algorithm 1)",
        "full": f"{full.name}@{full.version}",
        "full_items": len(run.keys),
        "removed_count": len(run.removed),
        "audit": audit.pk,
        "model": audit.model_name,
        "model_sha256": audit.model_sha256,
        "features": audit.params.get("features", ""),
        "seed": run.summary.get("params", {}).get("seed", audit.params.get("seed")),
        "params": run.summary.get("params", {}),
        "iterations": run.summary.get("iterations", []),
    }
    release = release_create(
        name=name,
        dataset=dataset,
        version=version,
        split=split,
        collection=collection,
        label_sources=label_sources or None,
        changelog=f"The items AfLite kept of {full.name}@{full.version} (audit #{audit.pk}).",
        user=user,
        filtered=FilteredFrom(full=full, removed=tuple(run.removed), description=description),
    )
    Audit.objects.filter(pk=audit.pk).update(filtered_release=release)
    return release


def lm_accuracy_on(audit: Audit, keep: Iterable[str] | None = None) -> dict[str, Any] | None:
    """The model's own accuracy (per-option log-probabilities) on the audit's items, or on
    the ``keep`` ones only, with its Wilson interval."""
    from evaluation.audit.analysis import accuracy_row

    column = audit.per_item.get("lm_correct")
    if column is None:
        return None
    import numpy as np

    keys = audit.per_item["key"]
    wanted = None if keep is None else set(keep)
    flags = np.asarray([bool(c) for k, c in zip(keys, column, strict=True) if wanted is None or k in wanted])
    if flags.size == 0:
        return None
    chance = 0.5
    return accuracy_row(flags, chance)
