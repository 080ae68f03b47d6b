"""A generation job through a real ``celery -A config worker`` on a real Redis broker (as
tests/test_lost_workers.py does for runs): the task is routed to the ``models`` queue, the
worker claims the job, writes its progress and stores the reasons once; a second delivery
of the finished job changes nothing."""

from __future__ import annotations

import pytest

from datasets.models import Reason
from evaluation.generation_jobs.services import generation_reasons_create
from evaluation.models import GenerationJob, GenerationStatus
from tests.evaluation.tiny_models import build_tiny_causal
from tests.releases.factories import make_schemas
from tests.test_lost_workers import _until, jobs  # noqa: F401 (fixture)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_a_real_worker_runs_a_generation_job_once(tmp_path, jobs, settings, monkeypatch, curator):  # noqa: F811
    models = tmp_path / "models"
    build_tiny_causal(models / "tiny-causal")
    settings.WINNOW_MODELS_DIR = models
    monkeypatch.setenv("WINNOW_MODELS_DIR", str(models))  # the worker reads its registry from here
    make_schemas(6, collection="mine")
    job = generation_reasons_create(
        collection="mine", model="tiny-causal", k=2, beams=2, max_new_tokens=4, created_by=curator
    )
    worker = jobs()
    jobs.broker.send("evaluation.tasks.generation_job_task", "models", job_id=job.pk)

    def finished() -> bool:
        job.refresh_from_db()
        return job.status in (GenerationStatus.DONE, GenerationStatus.FAILED)

    _until("the generation job to finish", finished, worker, every=0.1)
    assert job.status == GenerationStatus.DONE, job.error
    assert job.progress_done == job.progress_total == 6 and job.attempts == 1 and job.lease_owner == ""
    stored = Reason.objects.filter(origin="generated").count()
    assert stored == job.stored > 0
    jobs.broker.send("evaluation.tasks.generation_job_task", "models", job_id=job.pk)

    def second_seen() -> bool:
        return "generation_job_task" in worker.text() and worker.text().count("succeeded in") >= 2

    _until("the second delivery to be handled", second_seen, worker, every=0.1)
    again = GenerationJob.objects.get(pk=job.pk)
    assert (again.attempts, again.finished_at, Reason.objects.filter(origin="generated").count()) == (
        1,
        job.finished_at,
        stored,
    )
