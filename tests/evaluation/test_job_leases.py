"""Runs that survive lost workers and a lost broker, without a worker process (issue 16,
items 2 and 8): the sweep, the lease that keeps a second copy from writing, and a run
started while the broker is down. The real-worker tests are in tests/test_lost_workers.py."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from core.jobs import job_claim, jobs_sweep, owner_token
from evaluation.cloze.services import CLOZE_RUN_JOB
from evaluation.models import ClozeRun, ClozeRunStatus, EvaluationRun, RunStatus
from evaluation.runs.create import evaluation_run_create
from evaluation.runs.progress import EVALUATION_RUN_JOB
from evaluation.runs.progress import RunProgress as _ProgressWriter
from tests.evaluation.factories import write_wsc_release
from tests.releases.factories import make_schemas, published_release

pytestmark = pytest.mark.django_db


def _lost(run: EvaluationRun, settings, *, attempts: int) -> EvaluationRun:
    """The run as a worker that died mid-run leaves it: running, its heartbeat stopped."""
    silent = timezone.now() - timedelta(seconds=settings.WINNOW_JOB_STALE_AFTER + 10)
    EvaluationRun.objects.filter(pk=run.pk).update(
        status=RunStatus.RUNNING, lease_owner="host:4242:dead", heartbeat_at=silent, attempts=attempts
    )
    return run


@pytest.fixture
def queued_run(tmp_path) -> EvaluationRun:
    return evaluation_run_create(
        release=str(write_wsc_release(tmp_path / "r")), method="first", out_dir=str(tmp_path / "o")
    )


def test_the_sweep_queues_a_run_whose_worker_was_lost_again_and_it_finishes(queued_run, settings):
    _lost(queued_run, settings, attempts=1)
    report = jobs_sweep()  # eager Celery: the requeued run executes at once
    assert report == [f"evaluation run {queued_run.pk}: queued again (attempt 2)"]
    run = EvaluationRun.objects.get(pk=queued_run.pk)
    assert run.status == RunStatus.DONE and run.attempts == 2 and run.lease_owner == ""
    texts = [e["text"] for e in run.job_events]
    assert "the worker was lost (last heartbeat" in texts[0] and "queued again for attempt 2 of 3" in texts[0]
    assert jobs_sweep() == []  # nothing left to sweep


def test_a_run_whose_worker_was_lost_every_time_fails_with_the_reason_on_its_page(
    client, researcher, queued_run, settings
):
    _lost(queued_run, settings, attempts=settings.WINNOW_JOB_MAX_ATTEMPTS)
    call_command("jobs_sweep")
    run = EvaluationRun.objects.get(pk=queued_run.pk)
    assert run.status == RunStatus.FAILED and run.finished_at is not None
    assert "the worker was lost" in run.error and "failed after 3 attempts" in run.error
    client.force_login(researcher)
    html = client.get(reverse("evaluation:run-detail", args=[run.pk])).content.decode()
    assert "failed after 3 attempts" in html and "Started 3 times" in html


def test_a_live_workers_run_is_not_swept(queued_run):
    owner = owner_token()
    assert job_claim(EVALUATION_RUN_JOB, queued_run.pk, owner=owner, claimable=(RunStatus.QUEUED,))
    assert jobs_sweep() == []
    run = EvaluationRun.objects.get(pk=queued_run.pk)
    assert (run.status, run.lease_owner, run.attempts) == (RunStatus.RUNNING, owner, 1)


def test_a_copy_that_lost_its_lease_never_moves_the_progress_back(queued_run, settings):
    first = owner_token()
    assert job_claim(EVALUATION_RUN_JOB, queued_run.pk, owner=first, claimable=(RunStatus.QUEUED,))
    # a second copy finds the run running on a live worker: it cannot claim it
    assert not job_claim(
        EVALUATION_RUN_JOB, queued_run.pk, owner=owner_token(), claimable=(RunStatus.QUEUED,)
    )
    _lost(queued_run, settings, attempts=1)
    EvaluationRun.objects.filter(pk=queued_run.pk).update(lease_owner=first)
    second = owner_token()
    assert job_claim(EVALUATION_RUN_JOB, queued_run.pk, owner=second, claimable=(RunStatus.QUEUED,))
    ahead = _ProgressWriter(queued_run, None, second)
    ahead.total = 10
    ahead(8)
    behind = _ProgressWriter(queued_run, None, first)  # the first copy, still running somewhere
    behind.total = 10
    behind(0)
    behind(3)
    run = EvaluationRun.objects.get(pk=queued_run.pk)
    assert (run.progress_done, run.lease_owner, run.attempts) == (8, second, 2)
    assert "the worker was lost" in run.job_events[-1]["text"] and "attempt 2" in run.job_events[-1]["text"]


def test_a_cloze_run_whose_process_was_lost_is_marked_failed(settings, tmp_path):
    silent = timezone.now() - timedelta(seconds=settings.WINNOW_JOB_STALE_AFTER + 10)
    run = ClozeRun.objects.create(
        release="wsc@1.0.0",
        model_path="m",
        out_dir=str(tmp_path),
        lease_owner="host:1:gone",
        heartbeat_at=silent,
        attempts=1,
    )
    assert jobs_sweep() == [
        f"{CLOZE_RUN_JOB.label} {run.pk}: failed (the worker was lost (last heartbeat "
        f"{timezone.localtime(silent).strftime('%Y-%m-%d %H:%M:%S %Z')}); it cannot be resumed: start it again)"
    ]
    run.refresh_from_db()
    assert run.status == ClozeRunStatus.FAILED and "start it again" in run.error and run.finished_at


def test_starting_a_run_with_the_broker_down_fails_it_with_a_message_naming_the_broker(
    client, researcher, curator, tmp_path, settings, monkeypatch, django_capture_on_commit_callbacks
):
    from config.celery import app

    settings.MEDIA_ROOT = tmp_path / "media"
    make_schemas(2)
    release = published_release(django_capture_on_commit_callbacks, user=curator, name="wsc-mini")
    monkeypatch.setattr(app.conf, "task_always_eager", False)
    monkeypatch.setattr(app.conf, "broker_url", "redis://127.0.0.1:1/0")  # nothing listens there
    # the connections and producers made for the broker of before are not reused
    monkeypatch.setattr(app, "_pool", None)
    monkeypatch.setattr(app.amqp, "_producer_pool", None)
    client.force_login(researcher)
    client.raise_request_exception = False
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("evaluation:run-list"),
            {"release": f"{release.name}@{release.version}", "method": "first", "seed": 0},
        )
    assert response.status_code == 302  # to the run's page, not a 500
    run = EvaluationRun.objects.get()
    assert run.status == RunStatus.FAILED  # never left "queued" for ever
    assert (
        "could not be queued" in run.error
        and "Celery broker (redis://" in run.error
        and "127.0.0.1:1/0)" in run.error
    )
    page = client.get(response["Location"])
    assert page.status_code == 200
    html = page.content.decode()
    assert "The run <strong>failed</strong>" in html and "127.0.0.1:1/0" in html


def test_a_second_delivery_of_a_running_run_leaves_it_at_once_without_holding_a_worker(
    queued_run, monkeypatch
):
    """Study integrity, item 9: the copy used to wait (asleep in a worker slot) for a whole
    stale window; now it leaves a job held by a live worker at once."""
    from core import jobs

    holder = owner_token()  # this very process: alive
    assert job_claim(EVALUATION_RUN_JOB, queued_run.pk, owner=holder, claimable=(RunStatus.QUEUED,))

    def no_sleep(seconds: float) -> None:
        raise AssertionError("a second delivery waited in its worker slot")

    monkeypatch.setattr(jobs.time, "sleep", no_sleep)
    taken = jobs.job_take(
        EVALUATION_RUN_JOB, queued_run.pk, claimable=(RunStatus.QUEUED,), finished=(RunStatus.DONE,)
    )
    assert taken is None
    run = EvaluationRun.objects.get(pk=queued_run.pk)
    assert (run.lease_owner, run.attempts) == (holder, 1)
    assert "left it to that worker" in run.job_events[-1]["text"]


def test_a_run_whose_holder_on_this_host_is_gone_is_taken_over_at_once(queued_run):
    import subprocess
    import sys

    from core import jobs

    finished = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    gone = f"{jobs.socket.gethostname()}:{int(finished.stdout)}:0123456789ab"  # a process that has exited
    assert jobs.holder_gone(gone) and not jobs.holder_gone(owner_token())
    assert not jobs.holder_gone(f"another-host:{int(finished.stdout)}:0123456789ab")
    EvaluationRun.objects.filter(pk=queued_run.pk).update(
        status=RunStatus.RUNNING, lease_owner=gone, heartbeat_at=timezone.now(), attempts=1
    )
    taken = jobs.job_take(
        EVALUATION_RUN_JOB, queued_run.pk, claimable=(RunStatus.QUEUED,), finished=(RunStatus.DONE,)
    )
    assert taken is not None
    run = EvaluationRun.objects.get(pk=queued_run.pk)
    assert (run.lease_owner, run.attempts) == (taken, 2)
    assert "the worker was lost" in run.job_events[-1]["text"]
