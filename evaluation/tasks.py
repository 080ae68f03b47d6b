"""Celery tasks of evaluation (routed to the ``models`` queue by CELERY_TASK_ROUTES).

A run is claimed with a lease before it starts (core.jobs): a second delivery of a run
that a live worker holds leaves it alone, one whose worker was lost takes it over.
"""

from celery import shared_task

from core.jobs import job_enqueue, job_take
from evaluation.adversarial import tasks as adversarial_tasks  # noqa: F401  (registers adversarial writing's task with the workers)
from evaluation.audit import tasks as audit_tasks  # noqa: F401  (registers the audit tasks with the workers)
from evaluation.cloze.services import CLOZE_RUN_JOB, cloze_run_queued
from evaluation.generation_jobs.services import (
    GENERATION_JOB,
    GenerationError,
    generation_claim_fields,
    generation_job_run,
)
from evaluation.models import (
    ClozeRun,
    ClozeRunStatus,
    EvaluationRun,
    GenerationJob,
    GenerationStatus,
    RunStatus,
)
from evaluation.runs.errors import EvaluationError
from evaluation.runs.execute import evaluation_run, evaluation_run_claim_fields
from evaluation.runs.progress import EVALUATION_RUN_JOB


@shared_task(name="evaluation.tasks.evaluation_run_task", acks_late=True, reject_on_worker_lost=True)
def evaluation_run_task(*, run_id: int) -> str:
    """Execute a queued run. Safe to run twice: a run already done or failed is left alone,
    and one running on a live worker too."""
    owner = job_take(
        EVALUATION_RUN_JOB,
        run_id,
        claimable=(RunStatus.QUEUED,),
        finished=(RunStatus.DONE, RunStatus.FAILED),
        **evaluation_run_claim_fields(),
    )
    run = EvaluationRun.objects.filter(pk=run_id).first()
    if run is None:
        return "gone"
    if owner is None:
        return str(run.status)
    try:
        run = evaluation_run(run=run, owner=owner)
    except EvaluationError:
        pass  # the run row holds the failure and its message
    run.refresh_from_db()
    return str(run.status)


def evaluation_run_enqueue(*, run_id: int) -> bool:
    """Send the run to a worker; a broker that cannot take it fails the run with a message
    that names the broker (never a 500, never a run left queued)."""
    return job_enqueue(EVALUATION_RUN_JOB, run_id, lambda: evaluation_run_task.delay(run_id=run_id))


@shared_task(name="evaluation.tasks.cloze_run_task", acks_late=True, reject_on_worker_lost=True)
def cloze_run_task(*, run_id: int) -> str:
    """Run a cloze analysis the web queued. Safe to run twice: only a queued run starts."""
    run = ClozeRun.objects.filter(pk=run_id).first()
    if run is None:
        return "gone"
    if run.status != ClozeRunStatus.QUEUED:
        return str(run.status)
    return str(cloze_run_queued(run=run).status)


def cloze_run_enqueue(*, run_id: int) -> bool:
    """Send a cloze run the web queued to a worker; a broker that cannot take it fails the
    run with a message that names the broker."""
    return job_enqueue(CLOZE_RUN_JOB, run_id, lambda: cloze_run_task.delay(run_id=run_id))


@shared_task(name="evaluation.tasks.generation_job_task", acks_late=True, reject_on_worker_lost=True)
def generation_job_task(*, job_id: int) -> str:
    """Do a queued generation job (reasons or explanations). Safe to run twice: a job done
    or failed is left alone, one running on a live worker too."""
    owner = job_take(
        GENERATION_JOB,
        job_id,
        claimable=(GenerationStatus.QUEUED,),
        finished=(GenerationStatus.DONE, GenerationStatus.FAILED),
        **generation_claim_fields(),
    )
    job = GenerationJob.objects.filter(pk=job_id).first()
    if job is None:
        return "gone"
    if owner is None:
        return str(job.status)
    try:
        job = generation_job_run(job=job, owner=owner)
    except GenerationError:
        pass  # the job's row holds the failure and its message
    job.refresh_from_db()
    return str(job.status)


def generation_job_enqueue(*, job_id: int) -> bool:
    """Send a generation job to a worker; a broker that cannot take it fails the job with a
    message naming the broker."""
    return job_enqueue(GENERATION_JOB, job_id, lambda: generation_job_task.delay(job_id=job_id))
