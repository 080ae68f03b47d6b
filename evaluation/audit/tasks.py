"""Celery tasks of audits. Their names start ``evaluation.tasks.`` so that
CELERY_TASK_ROUTES sends them to the ``models`` queue; ``evaluation.tasks`` imports this
module so the workers register them."""

from celery import shared_task

from core.jobs import job_enqueue, job_send, job_take
from evaluation.audit.services import AUDIT_JOB, CHUNK_JOB, audit_analyse, audit_chunk_run
from evaluation.models import Audit, AuditChunk, AuditStatus, ChunkStatus


@shared_task(name="evaluation.tasks.audit_chunk_task", acks_late=True, reject_on_worker_lost=True)
def audit_chunk_task(*, chunk_id: int) -> str:
    """Compute one chunk of an audit's features; the worker that finishes the last one
    analyses the audit. Safe to run twice: a chunk done is left alone, one running on a
    live worker too."""
    owner = job_take(
        CHUNK_JOB, chunk_id, claimable=(ChunkStatus.QUEUED,), finished=(ChunkStatus.DONE, ChunkStatus.FAILED)
    )
    if owner is None:
        return "left"
    last = audit_chunk_run(chunk_id=chunk_id, owner=owner)
    if last:
        audit_id = AuditChunk.objects.values_list("audit_id", flat=True).get(pk=chunk_id)
        return audit_analyse_task(audit_id=audit_id)
    return "chunk done"


@shared_task(name="evaluation.tasks.audit_analyse_task", acks_late=True, reject_on_worker_lost=True)
def audit_analyse_task(*, audit_id: int) -> str:
    """The baselines, cartography and AfLite of an audit whose features are all computed."""
    owner = job_take(
        AUDIT_JOB,
        audit_id,
        claimable=(AuditStatus.FEATURES,),
        finished=(AuditStatus.DONE, AuditStatus.FAILED),
    )
    if owner is None:
        return "left"
    return str(audit_analyse(audit_id=audit_id, owner=owner).status)


def audit_enqueue(*, audit_id: int) -> bool:
    """Send every chunk of an audit to the model workers; a broker that cannot take them
    fails the audit with a message naming the broker."""
    chunk_ids = list(
        AuditChunk.objects.filter(audit_id=audit_id).order_by("index").values_list("pk", flat=True)
    )

    def send() -> None:
        for chunk_id in chunk_ids:
            audit_chunk_task.delay(chunk_id=chunk_id)

    def failed(message: str) -> None:
        Audit.objects.filter(pk=audit_id).update(status=AuditStatus.FAILED, error=message)

    return job_send(send, on_error=failed)


def audit_chunk_enqueue(*, chunk_id: int) -> bool:
    return job_enqueue(CHUNK_JOB, chunk_id, lambda: audit_chunk_task.delay(chunk_id=chunk_id))


def audit_analyse_enqueue(*, audit_id: int) -> bool:
    return job_enqueue(AUDIT_JOB, audit_id, lambda: audit_analyse_task.delay(audit_id=audit_id))
