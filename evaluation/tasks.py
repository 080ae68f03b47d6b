"""Celery tasks of evaluation (routed to the ``models`` queue by CELERY_TASK_ROUTES)."""

from celery import shared_task

from evaluation.cloze.services import cloze_run_queued
from evaluation.models import ClozeRun, ClozeRunStatus, EvaluationRun, RunStatus
from evaluation.services import EvaluationError, evaluation_run


@shared_task(name="evaluation.tasks.evaluation_run_task", acks_late=True)
def evaluation_run_task(*, run_id: int) -> str:
    """Execute a queued run. Safe to run twice: a run already done or failed is left alone."""
    run = EvaluationRun.objects.filter(pk=run_id).first()
    if run is None:
        return "gone"
    if run.status in (RunStatus.DONE, RunStatus.FAILED):
        return str(run.status)
    try:
        run = evaluation_run(run=run)
    except EvaluationError:
        pass  # the run row holds the failure and its message
    run.refresh_from_db()
    return str(run.status)


@shared_task(name="evaluation.tasks.cloze_run_task", acks_late=True)
def cloze_run_task(*, run_id: int) -> str:
    """Run a cloze analysis the web queued. Safe to run twice: only a queued run starts."""
    run = ClozeRun.objects.filter(pk=run_id).first()
    if run is None:
        return "gone"
    if run.status != ClozeRunStatus.QUEUED:
        return str(run.status)
    return str(cloze_run_queued(run=run).status)
