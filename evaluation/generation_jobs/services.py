"""Generation jobs: create one (checked, queued), run it under a lease (core.jobs).

``generation_job_create`` validates a curator's request and stores a queued
:class:`~evaluation.models.GenerationJob`; ``generation_job_run`` does the work under the
job's lease, writing its progress as it goes:

- kind ``reasons``: WinoWhy's prompt for each question of a collection, the k best of a
  beam search, empty and duplicate outputs dropped and counted, the rest stored as reasons
  of origin ``generated`` (``datasets.services.generated_reasons_add``; one import batch
  naming the model and the decoding settings, seed included);
- kind ``explanations``: the subtask-C explanations a finished evaluation run generated
  (its ``predictions.jsonl``, variant ``c``) stored as ``datasets.Explanation`` rows and made
  the items of a new ``explanation_plausibility`` campaign with K judgments each.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.text import slugify

from annotation.errors import CampaignError
from annotation.models import Task
from annotation.services import campaign_create
from core.jobs import Heartbeat, JobKind, job_claim, job_update, owner_token
from core.roles import Actor, account_of, user_is_curator
from datasets.models import ComVEItem, Explanation, Reason, Schema
from datasets.services import DatasetImportError, generated_reasons_add
from evaluation.lm import model_cache
from evaluation.lm.generation import REASON_PROMPT, generate_reasons, keep_reasons, reason_prompt
from evaluation.lm.scorers.types import MODEL_METHODS
from evaluation.models import (
    EvaluationRun,
    GenerationJob,
    GenerationKind,
    GenerationStatus,
    RunStatus,
)
from evaluation.runs.errors import EvaluationError
from evaluation.selectors import model_get
from releases.dataset import Dataset
from releases.models import Release, ReleaseItem

logger = logging.getLogger(__name__)

#: Questions per batch of the beam search (16: less than half the CPU time a question of 4 a batch,
#: bench/generate_reasons.py): the job's progress moves once per batch.
REASON_BATCH = 16
#: Explanations stored per progress step.
EXPLANATION_BATCH = 50
DEFAULT_K = 5
DEFAULT_BEAMS = 5
DEFAULT_MAX_NEW_TOKENS = 20
DEFAULT_JUDGMENTS = 3


class GenerationError(EvaluationError):
    """A generation job that cannot be created or run; ``field`` names the form field (an
    EvaluationError: its field and status, as the audit's errors)."""


GENERATION_JOB = JobKind(
    label="generation job",
    model=GenerationJob,
    status_field="status",
    queued=GenerationStatus.QUEUED,
    running=GenerationStatus.RUNNING,
    failed=GenerationStatus.FAILED,
    error_field="error",
    failed_fields={"finished_at": timezone.now},
)


def generation_claim_fields() -> dict[str, Any]:
    """What a start (or a restart) of a job resets on its row."""
    return {"started_at": timezone.now(), "error": "", "progress_done": 0, "finished_at": None}


# --- create -------------------------------------------------------------------------------


def schema_collections() -> list[str]:
    return sorted(set(Schema.objects.values_list("collection", flat=True)))


def _whole(name: str, value: Any, low: int, high: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise GenerationError(f"{name}: {value!r} is not a whole number", field=name) from None
    if not low <= number <= high:
        raise GenerationError(f"{name}: {number} is not between {low} and {high}", field=name)
    return number


def _curator(user: Actor) -> Any:
    if not user_is_curator(user):
        raise GenerationError("only curators start generation jobs", status=403)
    return account_of(user)


def generation_reasons_create(
    *,
    collection: str,
    model: str,
    k: Any = DEFAULT_K,
    beams: Any = DEFAULT_BEAMS,
    max_new_tokens: Any = DEFAULT_MAX_NEW_TOKENS,
    seed: Any = 0,
    limit: Any = None,
    created_by: Actor,
) -> GenerationJob:
    """A queued job asking ``model`` (a causal model of the registry) for ``k`` candidate
    reasons per question of ``collection``. Bad input raises GenerationError naming the
    field; nothing is written then."""
    account = _curator(created_by)
    if not Schema.objects.filter(collection=collection).exists():
        raise GenerationError(f"collection: no schemas in collection {collection!r}", field="collection")
    entry = model_get(name=model)
    if entry is None:
        raise GenerationError(f"model: no model {model!r} in the registry", field="model")
    if entry.kind != "causal":
        raise GenerationError(
            f"model: {entry.name} is a {entry.kind} model; generating reasons needs a causal one",
            field="model",
        )
    k = _whole("k", k, 1, 10)
    beams = _whole("beams", beams, 1, 20)
    if beams < k:
        raise GenerationError(
            f"beams: {beams} beams cannot give {k} reasons; use at least {k}", field="beams"
        )
    max_new_tokens = _whole("max_new_tokens", max_new_tokens, 1, 100)
    seed = _whole("seed", seed, 0, 2**32 - 1)
    settings: dict[str, Any] = {
        "k": k,
        "num_beams": beams,
        "max_new_tokens": max_new_tokens,
        "seed": seed,
        "decoding": "beam search",
        "prompt": REASON_PROMPT,
    }
    if limit not in (None, ""):
        settings["limit"] = _whole("limit", limit, 1, 100000)
    return GenerationJob.objects.create(
        kind=GenerationKind.REASONS,
        collection=collection,
        model_name=entry.name,
        settings=settings,
        created_by=account,
    )


def explanations_of_run(run: EvaluationRun) -> list[tuple[str, str]]:
    """(ComVE id, explanation) of each subtask-C item the run generated an explanation for,
    in the run's order (its ``predictions.jsonl``, variant ``c``)."""
    path = Path(run.results_dir) / "predictions.jsonl" if run.results_dir else None
    if path is None or not path.is_file():
        raise GenerationError(f"run: run #{run.pk} has no predictions file", field="run")
    out = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                record = json.loads(line)
                if record.get("variant") == "c":
                    out.append((str(record["id"]), str(record.get("prediction") or "")))
    return out


def _run_generated_explanations(run: EvaluationRun) -> str | None:
    """Why the run's explanations cannot be judged; None when they can."""
    if run.status != RunStatus.DONE:
        return f"run #{run.pk} is {run.status}, not done"
    if run.dataset != Dataset.COMVE:
        return f"run #{run.pk} scored {run.get_dataset_display()}; explanations are ComVE subtask C's"
    if run.method not in MODEL_METHODS or not (run.settings or {}).get("generate_explanations"):
        return f"run #{run.pk} generated no explanations (start a causal-LM run with 'generate explanations')"
    if not ((run.metrics or {}).get("c") or {}).get("computed"):
        return f"run #{run.pk} has no subtask C items"
    return None


def run_explanations_judgeable(run: EvaluationRun) -> bool:
    return _run_generated_explanations(run) is None


def generation_explanations_create(
    *, run: EvaluationRun, k: Any = DEFAULT_JUDGMENTS, created_by: Actor
) -> GenerationJob:
    """A queued job turning the explanations ``run`` generated into the items of a new
    plausibility campaign with ``k`` judgments each."""
    account = _curator(created_by)
    why = _run_generated_explanations(run)
    if why:
        raise GenerationError(f"run: {why}", field="run")
    k = _whole("k", k, 1, 25)
    earlier = (
        GenerationJob.objects.filter(run=run, kind=GenerationKind.EXPLANATIONS)
        .exclude(status=GenerationStatus.FAILED)
        .first()
    )
    if earlier is not None:
        raise GenerationError(
            f"run: run #{run.pk}'s explanations have a job already (generation #{earlier.pk}, {earlier.status})",
            field="run",
        )
    return GenerationJob.objects.create(
        kind=GenerationKind.EXPLANATIONS,
        run=run,
        model_name=run.model_label,
        model_sha256=str((run.model_identity or {}).get("sha256") or "")[:64],
        settings={"judgments_per_item": k, "task": Task.EXPLANATION_PLAUSIBILITY},
        created_by=account,
    )


# --- run ----------------------------------------------------------------------------------


def generation_job_run(*, job: GenerationJob, owner: str | None = None) -> GenerationJob:
    """Do a queued job under its lease (claimed here when ``owner`` is None: a command or a
    test). A failure marks the job failed with its message and raises GenerationError."""
    if job.status == GenerationStatus.DONE:
        return job
    if owner is None:
        owner = owner_token()
        if not job_claim(
            GENERATION_JOB,
            job.pk,
            owner=owner,
            claimable=(GenerationStatus.QUEUED, GenerationStatus.FAILED),
            **generation_claim_fields(),
        ):
            raise GenerationError(f"generation #{job.pk} is running on a worker already")
    job.refresh_from_db()
    work = _reasons if job.kind == GenerationKind.REASONS else _explanations
    try:
        if transaction.get_connection().in_atomic_block:
            work(job, owner)
        else:
            with Heartbeat(GENERATION_JOB, job.pk, owner):
                work(job, owner)
    except (GenerationError, CampaignError, DatasetImportError, ValueError, OSError, ImportError) as exc:
        message = getattr(exc, "message", "") or str(exc)
        _fail(job, message, owner)
        raise GenerationError(message) from exc
    except BaseException as exc:  # a job never stays "running" after a crash
        _fail(job, f"{type(exc).__name__}: {exc}", owner)
        raise
    job.refresh_from_db()
    return job


def _fail(job: GenerationJob, message: str, owner: str) -> None:
    job_update(
        GENERATION_JOB,
        job.pk,
        owner,
        status=GenerationStatus.FAILED,
        error=message[:5000],
        finished_at=timezone.now(),
        lease_owner="",
    )


def _progress(job: GenerationJob, owner: str, done: int, total: int) -> None:
    job_update(GENERATION_JOB, job.pk, owner, progress_done=done, progress_total=total)


def _reasons(job: GenerationJob, owner: str) -> None:
    import torch

    settings = dict(job.settings)
    entry = model_get(name=job.model_name)
    if entry is None:
        raise GenerationError(f"model {job.model_name!r} is no longer in the registry")
    schemas: list[Schema] = list(Schema.objects.filter(collection=job.collection).order_by("id"))
    if settings.get("limit"):
        schemas = schemas[: int(settings["limit"])]
    if not schemas:
        raise GenerationError(f"no schemas in collection {job.collection!r}")
    _progress(job, owner, 0, len(schemas))
    loaded = model_cache.load(entry.path)
    sha256 = str(loaded.settings.get("sha256", ""))
    job_update(GENERATION_JOB, job.pk, owner, model_sha256=sha256[:64])
    # beam search draws no random numbers, but the seed is recorded and applied all the
    # same, so that a sampling setting added later is reproducible too
    torch.manual_seed(int(settings.get("seed", 0)))
    existing: dict[int, list[str]] = {}
    for schema_id, text in Reason.objects.filter(schema__in=schemas).values_list("schema_id", "text"):
        existing.setdefault(schema_id, []).append(text)
    kept: dict[str, list[str]] = {}
    outputs = empty = duplicates = 0
    for start in range(0, len(schemas), REASON_BATCH):
        batch = schemas[start : start + REASON_BATCH]
        texts = generate_reasons(
            loaded,
            [reason_prompt(s.sentence, s.pronoun, s.correct_candidate) for s in batch],
            k=int(settings["k"]),
            num_beams=int(settings["num_beams"]),
            max_new_tokens=int(settings["max_new_tokens"]),
            batch_size=REASON_BATCH,
        )
        for schema, out in zip(batch, texts, strict=True):
            keep, e, d = keep_reasons(out, existing.get(schema.pk, []))
            kept[schema.external_id] = keep
            outputs, empty, duplicates = outputs + len(out), empty + e, duplicates + d
        job_update(
            GENERATION_JOB,
            job.pk,
            owner,
            progress_done=start + len(batch),
            outputs=outputs,
            empty=empty,
            duplicates=duplicates,
        )
    model = {"name": entry.name, "sha256": sha256, "kind": entry.kind}
    with transaction.atomic():
        stored = generated_reasons_add(
            collection=job.collection,
            reasons=kept,
            model=model,
            settings={**settings, "job": job.pk},
            user=job.created_by,
        )
        if not job_update(
            GENERATION_JOB,
            job.pk,
            owner,
            status=GenerationStatus.DONE,
            stored=stored.created,
            import_batch=stored.batch,
            finished_at=timezone.now(),
            lease_owner="",
        ):
            # the lease went to another worker meanwhile: store nothing twice
            transaction.set_rollback(True)


def _comve_items_of(run: EvaluationRun, ids: list[str]) -> dict[str, ComVEItem]:
    """The ComVE items behind the ids of a run's release: its items' keys
    (``dataset[/collection]/split:id``) name them."""
    release = Release.objects.filter(name=run.release_name, version=run.release_version).first()
    if release is None:
        raise GenerationError(
            f"run #{run.pk} read {run.release_label}, which is not a release of this server: "
            "its explanations cannot be matched to items"
        )
    wanted = set(ids)
    found: dict[str, ComVEItem] = {}
    for key in ReleaseItem.objects.filter(release=release).order_by("position").values_list("key", flat=True):
        where, _, external_id = key.rpartition(":")
        if external_id not in wanted or external_id in found:
            continue
        parts = where.split("/")
        dataset, split = parts[0], parts[-1]
        collection = parts[1] if len(parts) == 3 else ""
        item = ComVEItem.objects.filter(
            dataset=dataset, collection=collection, split=split, external_id=external_id
        ).first()
        if item is not None:
            found[external_id] = item
    missing = sorted(wanted - set(found))
    if missing:
        raise GenerationError(
            f"run #{run.pk}: no ComVE item {missing[0]!r} in {run.release_label} "
            f"({len(missing)} of {len(wanted)} explanations unmatched)"
        )
    return found


def _explanations(job: GenerationJob, owner: str) -> None:
    run = job.run
    if run is None:
        raise GenerationError("the job's run was deleted")
    pairs = explanations_of_run(run)
    _progress(job, owner, 0, len(pairs))
    items = _comve_items_of(run, [i for i, _ in pairs])
    model_name = run.model_label
    outputs = empty = duplicates = 0
    seen: set[int] = set()
    for start in range(0, len(pairs), EXPLANATION_BATCH):
        for external_id, text in pairs[start : start + EXPLANATION_BATCH]:
            outputs += 1
            text = " ".join(text.split())
            item = items[external_id]
            if not text:
                empty += 1
                continue
            if item.pk in seen:
                duplicates += 1
                continue
            seen.add(item.pk)
            # get_or_create: a second delivery (or a restart) finds the rows it stored
            Explanation.objects.get_or_create(
                run_id=run.pk, comve_item=item, defaults={"text": text, "model_name": model_name}
            )
        job_update(
            GENERATION_JOB,
            job.pk,
            owner,
            progress_done=min(start + EXPLANATION_BATCH, len(pairs)),
            outputs=outputs,
            empty=empty,
            duplicates=duplicates,
        )
    if not seen:
        raise GenerationError(f"run #{run.pk} generated no explanation with a word in it")
    k = int(job.settings.get("judgments_per_item") or DEFAULT_JUDGMENTS)
    name = slugify(f"explanations-run-{run.pk}-job-{job.pk}")
    with transaction.atomic():
        campaign = campaign_create(
            name=name,
            task=Task.EXPLANATION_PLAUSIBILITY,
            items="explanations",
            filters={"run_id": run.pk},
            ids=sorted(_explanation_ids(run.pk, seen)),
            k=k,
            created_by=job.created_by,
        )
        if not job_update(
            GENERATION_JOB,
            job.pk,
            owner,
            status=GenerationStatus.DONE,
            stored=campaign.items.count(),
            campaign=campaign,
            finished_at=timezone.now(),
            lease_owner="",
        ):
            transaction.set_rollback(True)


def _explanation_ids(run_id: int, comve_ids: set[int]) -> QuerySet[Explanation, int]:
    return Explanation.objects.filter(run_id=run_id, comve_item_id__in=comve_ids).values_list("pk", flat=True)
