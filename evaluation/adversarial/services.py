"""Adversarial writing's writes: a writer's tries, the models' verdicts, keep and retract,
and the re-scoring of earlier rounds' items by a later round's models.

The web process only stores a try and sends it to the ``models`` queue
(``evaluation.adversarial.tasks``); the worker loads the round's models through the
process-wide cache (``evaluation.lm.model_cache``, warm between tries) and writes the
verdict (``evaluation.adversarial.verdict``). A try no worker answers stays on record: its
writer is told and may send the same try again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.answers import ADVERSARIAL_KEPT, ADVERSARIAL_RETRACTED
from annotation.models import (
    AdversarialItem,
    AdversarialRound,
    AdversarialScore,
    AdversarialStatus,
    AdversarialTry,
    Assignment,
    AssignmentStatus,
    PipelineKind,
    Task,
    TryStatus,
)
from annotation.services import judgment_submit
from annotation.task_types import task_spec
from annotation.task_types.adversarial import adversarial_round_of, try_lost
from core.errors import WinnowError
from core.roles import Actor, signed_in
from evaluation.adversarial import verdict as verdicts
from evaluation.lm import model_cache
from evaluation.selectors import model_get

logger = logging.getLogger(__name__)


class AdversarialError(WinnowError):
    """A writer's action that cannot be done; the message says why."""

    status = 400


#: The writing task of each adversarial pipeline kind.
WRITING_TASKS = {
    PipelineKind.ADVERSARIAL_WINOGRAD: Task.ADVERSARIAL_WINOGRAD,
    PipelineKind.ADVERSARIAL_COMVE: Task.ADVERSARIAL_COMVE,
}


def _writing(assignment: Assignment, writer: Actor) -> tuple[AdversarialRound, str]:
    """The round and the task of the writer's own slot, still in hand."""
    user = signed_in(writer)
    if assignment.annotator_id != user.pk:
        raise AdversarialError("This slot was given to someone else.", status=404)
    campaign = assignment.campaign_item.campaign
    if campaign.task not in (Task.ADVERSARIAL_WINOGRAD, Task.ADVERSARIAL_COMVE):
        raise AdversarialError("This campaign is not adversarial writing.")
    found = adversarial_round_of(campaign.pk)
    if found is None:
        raise AdversarialError("This writing campaign belongs to no round of an adversarial pipeline.")
    if assignment.status != AssignmentStatus.LEASED:
        raise AdversarialError("This slot is no longer in your hands (kept, retracted or skipped).")
    return found, campaign.task


def content_check(task: str, raw: Mapping[str, Any]) -> dict[str, Any]:
    """The writer's content checked by the task (``annotation.adversarial_content``);
    ContentError (naming each field) when something cannot be checked by the models."""
    clean = task_spec(task).content_clean
    assert clean is not None
    return clean(raw)


def adversarial_try_create(
    *, writer: Actor, assignment: Assignment, raw: Mapping[str, Any]
) -> AdversarialTry:
    """Check the writer's content, keep it as the item's next try (the item is created on
    the first) and send it to the round's models once the transaction commits. Bad content
    raises ContentError and writes nothing."""
    found, task = _writing(assignment, writer)
    content = content_check(task, raw)
    now = timezone.now()
    with transaction.atomic():
        item, _ = AdversarialItem.objects.select_for_update().get_or_create(
            assignment=assignment, defaults={"round": found, "writer_id": assignment.annotator_id}
        )
        if item.status != AdversarialStatus.WRITING:
            raise AdversarialError(f"This item was {item.get_status_display()} already.")
        item.tries += 1
        item.save(update_fields=["tries"])
        attempt = AdversarialTry.objects.create(
            item=item, number=item.tries, content=content, status=TryStatus.QUEUED, queued_at=now
        )
        transaction.on_commit(lambda: adversarial_try_enqueue(try_id=attempt.pk))
    return attempt


def adversarial_try_enqueue(*, try_id: int) -> bool:
    """Send a try to the model workers; a broker that cannot take it fails the try with a
    message naming the broker (the try is kept, to be checked again)."""
    from core.jobs import job_send
    from evaluation.adversarial.tasks import adversarial_try_task

    def failed(message: str) -> None:
        AdversarialTry.objects.filter(pk=try_id, status=TryStatus.QUEUED).update(
            status=TryStatus.FAILED, error=message
        )

    return job_send(lambda: adversarial_try_task.delay(try_id=try_id), on_error=failed)


def adversarial_try_again(*, writer: Actor, attempt: AdversarialTry) -> AdversarialTry:
    """Send a try that failed, or that no worker answered in time, to the models again
    (the same try: its number and content stay)."""
    user = signed_in(writer)
    item = attempt.item
    if item.writer_id != user.pk:
        raise AdversarialError("This try is someone else's.", status=404)
    if item.status != AdversarialStatus.WRITING:
        raise AdversarialError(f"This item was {item.get_status_display()} already.")
    if attempt.status == TryStatus.SCORED:
        raise AdversarialError("The models have scored this try already.")
    if attempt.status == TryStatus.QUEUED and not try_lost(attempt):
        raise AdversarialError("This try is still waiting for the models.")
    with transaction.atomic():
        AdversarialTry.objects.filter(pk=attempt.pk).update(
            status=TryStatus.QUEUED, error="", queued_at=timezone.now()
        )
        transaction.on_commit(lambda: adversarial_try_enqueue(try_id=attempt.pk))
    attempt.refresh_from_db()
    return attempt


# --- the models (in the worker) ----------------------------------------------------------


Score = Callable[[Any, Mapping[str, Any]], dict[str, Any]]


def _scorer(found: AdversarialRound) -> Score:
    """How one model scores an item of the round's kind, with the round's method."""
    if found.pipeline.kind == PipelineKind.ADVERSARIAL_COMVE:
        return lambda model, content: verdicts.comve_verdict(model, content, method=found.method or None)
    method = found.method or "partial"
    return lambda model, content: verdicts.winograd_verdict(model, content, method=method)


#: Where each registry model was found, per worker process: the registry is read again only
#: for a name not seen yet or whose files are gone (a scan reads every model's header).
_REGISTRY_PATHS: dict[str, Path] = {}


def _model(name: str) -> Any:
    """The registry model ``name`` through the model cache (loaded once per worker and
    kept while its files are unchanged: `model_sha256` reads them again only when their
    stat signature changes), with the verdict's own thread count
    (``WINNOW_VERDICT_THREADS``)."""
    path = _REGISTRY_PATHS.get(name)
    if path is None or not path.exists():
        entry = model_get(name=name)
        if entry is None:
            _REGISTRY_PATHS.pop(name, None)
            raise AdversarialError(f"model {name!r} is not in this server's registry (any more)")
        path = _REGISTRY_PATHS[name] = entry.path
    return model_cache.load(path, threads=settings.WINNOW_VERDICT_THREADS)


def models_score(
    found: AdversarialRound, content: Mapping[str, Any], *, models: list[dict[str, Any]] | None = None
) -> dict[str, dict[str, Any]]:
    """Each model of the round (or ``models``) on ``content``: its verdict, with the SHA-256
    of the files it was loaded from and the seconds its scoring took (``seconds``)."""
    score = _scorer(found)
    out: dict[str, dict[str, Any]] = {}
    for entry in models if models is not None else found.models_in_loop:
        name = str(entry["name"])
        model = _model(name)
        start = time.perf_counter()
        result = score(model, content)
        seconds = round(time.perf_counter() - start, 4)
        out[name] = {
            "sha256": str(model.settings.get("sha256") or entry.get("sha256") or ""),
            **result,
            "seconds": seconds,
        }
    return out


def adversarial_try_score(*, try_id: int) -> AdversarialTry | None:
    """Score a queued try with its round's models and write the verdict (a try scored
    already, or gone, is left alone). A failure is written on the try with its reason."""
    attempt = AdversarialTry.objects.select_related("item__round__pipeline").filter(pk=try_id).first()
    if attempt is None or attempt.status != TryStatus.QUEUED:
        return attempt
    try:
        per_model = models_score(attempt.item.round, attempt.content)
    except Exception as exc:  # noqa: BLE001 (any failure of a model is the writer's message, never a silent spinner)
        logger.exception("adversarial try %s failed", try_id)
        message = str(exc) if isinstance(exc, WinnowError) else f"{type(exc).__name__}: {exc}"
        AdversarialTry.objects.filter(pk=try_id, status=TryStatus.QUEUED).update(
            status=TryStatus.FAILED, error=f"The models could not score this try: {message}"[:2000]
        )
        attempt.refresh_from_db()
        return attempt
    verdict, _ = verdicts.item_verdict(per_model)
    AdversarialTry.objects.filter(pk=try_id, status=TryStatus.QUEUED).update(
        status=TryStatus.SCORED, verdicts=per_model, verdict=verdict, error="", scored_at=timezone.now()
    )
    attempt.refresh_from_db()
    return attempt


# --- keep or retract ---------------------------------------------------------------------


@dataclass(frozen=True)
class Finished:
    item: AdversarialItem
    judgment_id: int


def adversarial_keep(*, writer: Actor, assignment: Assignment) -> Finished:
    """Keep the item: its last scored try becomes its content (with its verdict and the
    models it fooled) and the slot's judgment is recorded (answer kept, that content)."""
    _writing(assignment, writer)
    with transaction.atomic():
        item = AdversarialItem.objects.select_for_update().filter(assignment=assignment).first()
        if item is None:
            raise AdversarialError("Check the item with the models before keeping it.")
        if item.status != AdversarialStatus.WRITING:
            raise AdversarialError(f"This item was {item.get_status_display()} already.")
        last = item.try_set.filter(status=TryStatus.SCORED).order_by("-number").first()
        if last is None:
            raise AdversarialError("No try has its verdict yet: wait for the models, or check again.")
        verdict, fooled = verdicts.item_verdict(last.verdicts)
        result = judgment_submit(
            annotator=writer,
            assignment=assignment,
            answer=ADVERSARIAL_KEPT,
            payload=dict(last.content),
            through_models=True,
        )
        _finish(item, AdversarialStatus.KEPT, content=last.content, verdict=verdict, fooled=fooled)
    return Finished(item=item, judgment_id=result.judgment.pk)


def adversarial_retract(*, writer: Actor, assignment: Assignment) -> Finished:
    """Retract the item: its tries are kept, the slot's judgment says retracted, and it
    makes no row, so it reaches neither validation nor a release."""
    found, _ = _writing(assignment, writer)
    with transaction.atomic():
        item, _ = AdversarialItem.objects.select_for_update().get_or_create(
            assignment=assignment, defaults={"round": found, "writer_id": assignment.annotator_id}
        )
        if item.status != AdversarialStatus.WRITING:
            raise AdversarialError(f"This item was {item.get_status_display()} already.")
        result = judgment_submit(
            annotator=writer, assignment=assignment, answer=ADVERSARIAL_RETRACTED, through_models=True
        )
        _finish(item, AdversarialStatus.RETRACTED, content={}, verdict="", fooled=[])
    return Finished(item=item, judgment_id=result.judgment.pk)


def _finish(
    item: AdversarialItem, status: str, *, content: dict[str, Any], verdict: str, fooled: list[str]
) -> None:
    now = timezone.now()
    first = item.try_set.order_by("number").values_list("created_at", flat=True).first()
    item.status = status
    item.content = content
    item.verdict = verdict
    item.fooled = fooled
    item.finished_at = now
    item.seconds = (now - first).total_seconds() if first else None
    item.save(update_fields=["status", "content", "verdict", "fooled", "finished_at", "seconds"])


# --- re-scoring earlier rounds' items ------------------------------------------------------


@dataclass(frozen=True)
class Rescored:
    items: int
    created: int
    kept: int


def adversarial_rescore(
    *, round: AdversarialRound, progress: Callable[[int, int], None] | None = None
) -> Rescored:
    """Score the kept items of the earlier rounds of ``round``'s collection (and kind) with
    ``round``'s models, one AdversarialScore per item and model; the items are not
    rewritten, and a score there already is kept (safe to run again)."""
    earlier = list(
        AdversarialItem.objects.filter(
            round__pipeline__collection=round.pipeline.collection,
            round__pipeline__kind=round.pipeline.kind,
            round__number__lt=round.number,
            status=AdversarialStatus.KEPT,
        )
        .select_related("round__pipeline")
        .order_by("pk")
    )
    created = kept = 0
    for n, item in enumerate(earlier, start=1):
        done = set(AdversarialScore.objects.filter(item=item, round=round).values_list("model", flat=True))
        todo = [m for m in round.models_in_loop if m["name"] not in done]
        kept += len(round.models_in_loop) - len(todo)
        if todo:
            scored = models_score(round, item.content, models=todo)
            for name, result in scored.items():
                AdversarialScore.objects.get_or_create(
                    item=item,
                    round=round,
                    model=name,
                    defaults={
                        "sha256": result["sha256"],
                        "method": result["method"],
                        "result": result,
                        "verdict": result["verdict"],
                    },
                )
                created += 1
        if progress is not None:
            progress(n, len(earlier))
    return Rescored(items=len(earlier), created=created, kept=kept)


def adversarial_round_get(*, collection: str, number: int) -> AdversarialRound:
    found = (
        AdversarialRound.objects.filter(pipeline__collection=collection, number=number)
        .select_related("pipeline")
        .first()
    )
    if found is None:
        raise AdversarialError(f"round: no round {number} in the collection {collection!r}", status=404)
    return found
