"""Jobs that survive lost workers (issue 16, items 2 and 3): real ``celery -A config worker``
processes on a real Redis broker, a pool process killed with SIGKILL mid-job, and a job
delivered twice.

The worker sees the test's database: the pytest-django test database (these tests
commit, transaction=True), which on SQLite is a file (tests/conftest.py). A short
heartbeat and stale window (environment) make them take seconds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

from core.jobs import owner_pid
from evaluation.models import EvaluationRun, RunStatus
from evaluation.services import evaluation_run_create
from releases import services as release_services
from releases.exports import payload_digest
from releases.models import BuildStatus, Release, ReleaseItem
from tests.evaluation.factories import WSC_ROWS, write_wsc_release
from tests.evaluation.tiny_models import build_tiny_causal
from tests.releases.factories import create_release, make_schemas

REPO = Path(__file__).resolve().parents[1]
HEARTBEAT, STALE_AFTER = 0.3, 5.0
WAIT = 240  # seconds a whole job may take on a busy two-core machine before the test gives up

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _database_url() -> str:
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    return f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


class Broker:
    """The test's corner of the Redis broker (its own key prefix), and a way to send to it."""

    def __init__(self, url: str) -> None:
        from celery import Celery

        self.url = url
        self.prefix = f"winnow-test-{uuid.uuid4().hex[:10]}:"
        self.app = Celery("winnow-test-sender", broker=url)  # current while the test runs
        self.app.conf.broker_transport_options = {"global_keyprefix": self.prefix}

    def send(self, name: str, queue: str, **kwargs: Any) -> None:
        self.app.send_task(name, kwargs=kwargs, queue=queue)

    def close(self) -> None:
        import redis

        client = redis.Redis.from_url(self.url)
        for key in client.scan_iter(f"{self.prefix}*"):
            client.delete(key)
        self.app.close()
        # Winnow's app current again: shared tasks of later tests in this process (a
        # release build on commit) would otherwise still go to this test's broker
        from config.celery import app

        app.set_current()


class Worker:
    """A ``celery -A config worker`` subprocess in its own process group (killed as a group)."""

    def __init__(self, broker: Broker, media: Path, log: Path, *, concurrency: int = 1) -> None:
        self.log_path = log
        env = {
            **os.environ,
            "DATABASE_URL": _database_url(),
            "CELERY_BROKER_URL": broker.url,
            "WINNOW_BROKER_KEY_PREFIX": broker.prefix,
            "WINNOW_MEDIA_ROOT": str(media),
            "WINNOW_JOB_HEARTBEAT": str(HEARTBEAT),
            "WINNOW_JOB_STALE_AFTER": str(STALE_AFTER),
            "WINNOW_JOB_SWEEP_INTERVAL": "1",
            "CELERY_TASK_ALWAYS_EAGER": "0",
            "OMP_NUM_THREADS": "1",
        }
        env.pop("REDIS_URL", None)
        env.pop("WINNOW_TEST_DATABASE_NAME", None)
        command = [
            *(sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "default,models"),
            *("--concurrency", str(concurrency), "--pool", "prefork", "--loglevel", "INFO"),
            *("-n", f"lost-{uuid.uuid4().hex[:8]}@%h", "--without-gossip", "--without-mingle"),
        ]
        self.log = log.open("w")
        self.process = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def text(self) -> str:
        return self.log_path.read_text(errors="replace")[-6000:]

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # the pool processes too, whatever happened
        except ProcessLookupError:
            pass
        self.process.wait(timeout=15)
        self.log.close()


@pytest.fixture
def jobs(tmp_path: Path, settings: Any, redis_url: str) -> Iterator[Callable[..., Worker]]:
    """Starts workers on the test's broker corner; every one is killed at the end, pass or fail."""
    broker = Broker(redis_url)
    media = tmp_path / "media"
    media.mkdir()
    settings.MEDIA_ROOT = media
    workers: list[Worker] = []

    def start(concurrency: int = 1) -> Worker:
        worker = Worker(broker, media, tmp_path / f"worker-{len(workers)}.log", concurrency=concurrency)
        workers.append(worker)
        return worker

    start.broker = broker  # type: ignore[attr-defined]
    try:
        yield start
    finally:
        for worker in workers:
            worker.stop()
        broker.close()


def _until(what: str, check: Callable[[], Any], worker: Worker, *, every: float = 0.02) -> Any:
    """Poll until ``check`` returns something true; fail with the worker's log after WAIT s."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        if worker.process.poll() is not None:
            pytest.fail(f"the worker exited while waiting for {what}:\n{worker.text()}")
        time.sleep(every)
    pytest.fail(f"gave up waiting for {what}:\n{worker.text()}")


def _wsc_rows(copies: int) -> list[dict[str, Any]]:
    return [{**row, "id": f"{row['id']}-{n}"} for n in range(copies) for row in WSC_ROWS]


def _run(tmp_path: Path, copies: int = 8) -> EvaluationRun:
    model = build_tiny_causal(tmp_path / "model")
    release = write_wsc_release(tmp_path / "release", rows=_wsc_rows(copies))
    return evaluation_run_create(
        release=str(release),
        method="full",
        model_path=str(model),
        out_dir=str(tmp_path / "out"),
        batch_size=1,
    )


def test_a_run_whose_pool_process_is_killed_finishes_once_after_the_pool_replaces_it(tmp_path, jobs):
    run = _run(tmp_path)
    worker = jobs()
    jobs.broker.send("evaluation.tasks.evaluation_run_task", "models", run_id=run.pk)

    def running() -> str:
        run.refresh_from_db()
        return run.lease_owner if run.status == RunStatus.RUNNING else ""

    owner = _until("the run to start", running, worker)
    pid = owner_pid(owner)
    assert pid is not None and pid != worker.process.pid  # the pool process, not the worker itself
    os.kill(pid, signal.SIGKILL)  # what the OOM killer does during a model load
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING and not (tmp_path / "out" / "results.json").exists(), (
        "the run finished before it could be killed: make it longer"
    )

    def finished() -> bool:
        run.refresh_from_db()
        return run.status in (RunStatus.DONE, RunStatus.FAILED)

    _until("the run to finish", finished, worker, every=0.1)
    assert run.status == RunStatus.DONE, run.error
    assert run.attempts == 2 and run.lease_owner == ""
    assert any("the worker was lost" in e["text"] for e in run.job_events), run.job_events
    records = [json.loads(line) for line in (tmp_path / "out" / "predictions.jsonl").read_text().splitlines()]
    assert len(records) == len({(r["id"], r["variant"]) for r in records})
    assert len({r["id"] for r in records}) == run.progress_total  # progress counts schemas
    assert run.progress_done == run.progress_total > 0
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["run"] == run.pk
    # exactly once: after it finished, nothing runs it again (the sweep and any late copy leave it)
    time.sleep(STALE_AFTER + 1)
    again = EvaluationRun.objects.get(pk=run.pk)
    assert (again.status, again.attempts, again.finished_at) == (RunStatus.DONE, 2, run.finished_at)


def test_a_second_delivery_of_a_running_run_does_not_run_it_twice(tmp_path, jobs):
    run = _run(tmp_path)
    worker = jobs(concurrency=2)
    for _ in range(2):  # the same job delivered twice (a visibility timeout shorter than the run)
        jobs.broker.send("evaluation.tasks.evaluation_run_task", "models", run_id=run.pk)
    seen: list[int] = []

    def finished() -> bool:
        row = EvaluationRun.objects.values("status", "progress_done").get(pk=run.pk)
        seen.append(row["progress_done"])
        return row["status"] in (RunStatus.DONE, RunStatus.FAILED)

    _until("the run to finish", finished, worker, every=0.05)
    run.refresh_from_db()
    assert run.status == RunStatus.DONE, run.error
    assert run.attempts == 1  # one copy ran it; the other left it to that copy
    assert seen == sorted(seen), seen  # progress never went backwards
    assert run.progress_done == run.progress_total > 0


def _big_release(curator: Any, captured: Any, count: int = 40_000) -> Release:
    """A built release given many frozen items (copies of its own), so that a build takes
    a few seconds; queued to be built again."""
    make_schemas(2)
    release = create_release(captured, user=curator)
    first = ReleaseItem.objects.filter(release=release).order_by("position").first()
    assert first is not None
    ReleaseItem.objects.filter(release=release).delete()
    ReleaseItem.objects.bulk_create(
        ReleaseItem(
            release=release,
            position=n,
            key=f"copy-{n}",
            payload=(payload := {**first.payload, "id": f"copy-{n}"}),
            digest=payload_digest(payload),
        )
        for n in range(count)
    )
    Release.objects.filter(pk=release.pk).update(item_count=count, build_status=BuildStatus.QUEUED)
    release.refresh_from_db()
    return release


def _build_midway(release: Release, worker: Worker) -> str:
    """Wait until the build runs and has written into its temporary folder; its lease owner."""
    folder = release_services.release_folder(release)

    def midway() -> str:
        row = Release.objects.values("build_status", "lease_owner").get(pk=release.pk)
        building = row["build_status"] == BuildStatus.RUNNING and any(folder.parent.glob(".*.build-*"))
        return row["lease_owner"] if building else ""

    return _until("the build to write its temporary folder", midway, worker, every=0.005)


def _built_once_again(release: Release, worker: Worker) -> None:
    """The build finished after its worker was lost, with no temporary folder left."""
    folder = release_services.release_folder(release)

    def finished() -> bool:
        release.refresh_from_db()
        return release.build_status in (BuildStatus.DONE, BuildStatus.FAILED)

    _until("the build to finish", finished, worker, every=0.1)
    assert release.build_status == BuildStatus.DONE, release.build_error
    assert release.attempts == 2 and any("the worker was lost" in e["text"] for e in release.job_events)
    assert sorted(p.name for p in folder.parent.iterdir()) == [release.version]  # no temp folder left
    lines = (folder / "wsc.jsonl").read_text().splitlines()
    assert (
        len(lines) == release.item_count and json.loads(lines[-1])["id"] == f"copy-{release.item_count - 1}"
    )
    assert release_services.verify_folder(manifest=release.manifest, folder=folder) == []


def test_a_release_build_killed_midway_is_finished_on_redelivery_without_a_leftover_temp_folder(
    tmp_path, jobs, curator, django_capture_on_commit_callbacks
):
    release = _big_release(curator, django_capture_on_commit_callbacks)
    worker = jobs()
    jobs.broker.send("releases.build", "default", release_id=release.pk)
    pid = owner_pid(_build_midway(release, worker))
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    release.refresh_from_db()
    assert release.build_status == BuildStatus.RUNNING, "the build finished before it could be killed"
    assert any(release_services.release_folder(release).parent.glob(".*.build-*"))  # what it left
    _built_once_again(release, worker)


def test_a_release_build_whose_whole_worker_died_is_built_by_the_next_worker_before_the_visibility_timeout(
    tmp_path, jobs, curator, django_capture_on_commit_callbacks
):
    """The whole worker killed: its message stays unacknowledged in Redis for the
    visibility timeout (hours); the next worker's sweep queues the build again."""
    release = _big_release(curator, django_capture_on_commit_callbacks)
    first = jobs()
    jobs.broker.send("releases.build", "default", release_id=release.pk)
    _build_midway(release, first)
    os.killpg(first.process.pid, signal.SIGKILL)  # the worker, its pool and its sweeper at once
    first.process.wait(timeout=30)
    release.refresh_from_db()
    assert release.build_status == BuildStatus.RUNNING, "the build finished before it could be killed"
    second = jobs()
    _built_once_again(release, second)
    assert any("queued again for attempt 2" in e["text"] for e in release.job_events), release.job_events
