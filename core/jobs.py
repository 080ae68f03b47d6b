"""Long jobs that survive lost workers (issue 16, items 2 and 3): a lease on the job's row.

Every long job (an evaluation run, a cloze run, a release build) has a row with a status
and the fields of ``core.models.JobLease``. A worker that starts the job *claims* it with
one conditional UPDATE (queued, or running with a heartbeat older than
``WINNOW_JOB_STALE_AFTER``) that writes its owner token; while it works a thread renews
``heartbeat_at`` every ``WINNOW_JOB_HEARTBEAT`` seconds, and every write of progress or
outcome is filtered by the owner token, so a copy that lost its lease writes nothing.

A second delivery of a job that another worker holds never waits for it (a worker slot
held for a stale window would be a slot lost): when the holder is a process of this host
that is gone (a pool process killed, its message requeued at once by
``task_reject_on_worker_lost``), the copy takes the job over at once; otherwise (a
duplicate of a job still running, the broker's visibility timeout passed, or a holder on
another host) it leaves the job to the holder and exits, and the sweep below queues the
job again if that holder is lost.

``jobs_sweep`` finds running jobs whose heartbeat stopped (the whole worker died, so no
message comes back until the visibility timeout) and queues them again, up to
``WINNOW_JOB_MAX_ATTEMPTS``, then fails them with the reason. Workers run it when they
start and every ``WINNOW_JOB_SWEEP_INTERVAL`` seconds (config/celery.py);
``manage.py jobs_sweep`` runs it by hand or from cron.

The apps register their kinds of job (``job_kind_register`` in ``AppConfig.ready``), so
this module, at the bottom of the layers, knows none of them.
"""

import logging
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection, models
from django.db.models import F, Q
from django.utils import timezone

logger = logging.getLogger(__name__)
EVENTS_KEPT = 20


@dataclass(frozen=True)
class JobKind:
    """How one kind of job is stored and sent again."""

    label: str  # "evaluation run", for messages
    model: type[models.Model]
    status_field: str
    queued: str
    running: str
    failed: str
    error_field: str
    # Sends the job's task again (None: the job cannot be requeued, e.g. a command's run).
    requeue: Callable[[int], object] | None = None
    # Called with the row's id once a job is failed by the sweep (temporary files).
    cleanup: Callable[[int], object] | None = None
    failed_fields: dict[str, Callable[[], Any]] = field(default_factory=dict)


_KINDS: dict[str, JobKind] = {}


def job_kind_register(kind: JobKind) -> None:
    _KINDS[kind.label] = kind


def job_kinds() -> list[JobKind]:
    return list(_KINDS.values())


def heartbeat_seconds() -> float:
    return float(getattr(settings, "WINNOW_JOB_HEARTBEAT", 30.0))


def stale_after() -> timedelta:
    return timedelta(seconds=float(getattr(settings, "WINNOW_JOB_STALE_AFTER", 120.0)))


def max_attempts() -> int:
    return int(getattr(settings, "WINNOW_JOB_MAX_ATTEMPTS", 3))


def owner_token() -> str:
    """Who holds a lease: host and process (for people reading the row), and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def owner_pid(owner: str) -> int | None:
    parts = owner.split(":")
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None


def _clock(moment: datetime | None) -> str:
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M:%S %Z") if moment else "an unknown time"


def event_add(kind: JobKind, pk: int, text: str, *, owner: str | None = None) -> None:
    """Append a line to the job's history (kept short); with ``owner``, only while it holds the lease."""
    rows = kind.model._default_manager.filter(pk=pk)
    if owner is not None:
        rows = rows.filter(lease_owner=owner)
    events = rows.values_list("job_events", flat=True).first()
    if events is None:
        return
    line = {"at": timezone.now().isoformat(timespec="seconds"), "text": text}
    rows.update(job_events=[*(events or []), line][-EVENTS_KEPT:])


# --- claim, heartbeat, finish -------------------------------------------------------------


def job_claim(
    kind: JobKind,
    pk: int,
    *,
    owner: str,
    claimable: tuple[str, ...],
    lost_owner: str | None = None,
    **fields: Any,
) -> bool:
    """Take the job with one conditional UPDATE: from one of the ``claimable`` statuses,
    or from ``running`` when its heartbeat stopped or its holder is ``lost_owner`` (known
    gone). Returns whether this owner holds it."""
    manager = kind.model._default_manager
    now = timezone.now()
    before = manager.filter(pk=pk).values("heartbeat_at", "attempts", kind.status_field).first()
    if before is None:
        return False
    lost = Q(heartbeat_at__lt=now - stale_after()) | Q(heartbeat_at__isnull=True)
    if lost_owner:
        lost |= Q(lease_owner=lost_owner)
    stale = Q(**{kind.status_field: kind.running}) & lost
    won = (
        manager.filter(pk=pk)
        .filter(Q(**{f"{kind.status_field}__in": claimable}) | stale)
        .update(
            **{kind.status_field: kind.running},
            lease_owner=owner,
            heartbeat_at=now,
            attempts=F("attempts") + 1,
            **fields,
        )
    )
    if not won:
        return False
    attempt = int(before["attempts"] or 0) + 1
    if before[kind.status_field] == kind.running:
        event_add(
            kind,
            pk,
            f"the worker was lost (last heartbeat {_clock(before['heartbeat_at'])}); "
            f"started again (attempt {attempt})",
            owner=owner,
        )
    elif attempt > 1:
        event_add(kind, pk, f"started again (attempt {attempt})", owner=owner)
    return True


def holder_gone(owner: str) -> bool:
    """Whether the lease's holder is a process of this host that no longer runs (gone, or a
    zombie its parent has not reaped yet). False for a holder on another host: only its
    heartbeat tells, and the sweep reads that."""
    host = owner.split(":")[0]
    pid = owner_pid(owner)
    if pid is None or host != socket.gethostname():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state == "Z"


def job_take(
    kind: JobKind,
    pk: int,
    *,
    claimable: tuple[str, ...],
    finished: tuple[str, ...],
    **fields: Any,
) -> str | None:
    """Claim the job for this process, without waiting: a job whose holder is a process of
    this host that is gone is taken over at once; one held by a live worker (or by a worker
    of another host whose heartbeat is fresh) is left to it (the sweep queues it again if
    that worker is lost). Returns the owner token, or None when the job is finished, gone
    or held by another worker."""
    owner = owner_token()
    if job_claim(kind, pk, owner=owner, claimable=claimable, **fields):
        return owner
    row = kind.model._default_manager.filter(pk=pk).values(kind.status_field, "lease_owner").first()
    if row is None or row[kind.status_field] in finished or row[kind.status_field] != kind.running:
        return None
    holder = str(row["lease_owner"] or "")
    if holder and holder_gone(holder):
        if job_claim(kind, pk, owner=owner, claimable=claimable, lost_owner=holder, **fields):
            return owner
    event_add(
        kind,
        pk,
        "a second delivery found the job running on another worker and left it to that worker "
        "(the sweep queues it again if that worker is lost)",
    )
    return None


def job_update(kind: JobKind, pk: int, owner: str | None, **fields: Any) -> bool:
    """Write progress or the outcome while this owner holds the lease (renewing it);
    ``owner`` None writes unconditionally (no lease in play)."""
    rows = kind.model._default_manager.filter(pk=pk)
    if owner is not None:
        rows = rows.filter(lease_owner=owner)
        fields.setdefault("heartbeat_at", timezone.now())
    return bool(rows.update(**fields))


class Heartbeat:
    """A thread that renews the lease every ``heartbeat_seconds()`` while the job runs
    (a model load or a long batch writes no progress for minutes)."""

    def __init__(self, kind: JobKind, pk: int, owner: str) -> None:
        self.kind, self.pk, self.owner = kind, pk, owner
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"heartbeat-{kind.label}-{pk}", daemon=True)

    def __enter__(self) -> "Heartbeat":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _beat(self) -> None:
        try:
            while not self._stop.wait(heartbeat_seconds()):
                try:
                    if not job_update(self.kind, self.pk, self.owner):
                        self.lost = True  # the sweep or another worker took the job over
                        return
                except Exception:  # a database blip: the next beat tries again
                    logger.warning("heartbeat of %s %s failed", self.kind.label, self.pk, exc_info=True)
        finally:
            connection.close()


# --- the sweep --------------------------------------------------------------------------


def jobs_sweep(*, now: datetime | None = None) -> list[str]:
    """Queue again (or fail, after the last attempt) every running job whose heartbeat
    stopped. Safe to run from several workers at once: each job moves by one conditional
    UPDATE. Returns a line per job it moved."""
    now = now or timezone.now()
    cutoff = now - stale_after()
    report: list[str] = []
    for kind in job_kinds():
        manager = kind.model._default_manager
        stale = manager.filter(**{kind.status_field: kind.running}).filter(
            Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True)
        )
        for row in stale.values("pk", "lease_owner", "heartbeat_at", "attempts"):
            pk, attempts, seen = row["pk"], int(row["attempts"] or 0), row["heartbeat_at"]
            same = manager.filter(
                pk=pk, lease_owner=row["lease_owner"], heartbeat_at=seen, **{kind.status_field: kind.running}
            )
            lost = f"the worker was lost (last heartbeat {_clock(seen)})"
            if kind.requeue is not None and attempts < max_attempts():
                if not same.update(**{kind.status_field: kind.queued}, lease_owner=""):
                    continue
                event_add(kind, pk, f"{lost}; queued again for attempt {attempts + 1} of {max_attempts()}")
                report.append(f"{kind.label} {pk}: queued again (attempt {attempts + 1})")
                kind.requeue(pk)
                continue
            reason = (
                f"{lost}; failed after {attempts} attempt{'s' if attempts != 1 else ''}"
                if kind.requeue is not None
                else f"{lost}; it cannot be resumed: start it again"
            )
            extra = {name: value() for name, value in kind.failed_fields.items()}
            if not same.update(
                **{kind.status_field: kind.failed, kind.error_field: reason}, lease_owner="", **extra
            ):
                continue
            event_add(kind, pk, reason)
            report.append(f"{kind.label} {pk}: failed ({reason})")
            if kind.cleanup is not None:
                kind.cleanup(pk)
    return report


def sweeper_start(*, interval: float | None = None) -> "subprocess.Popen[bytes]":
    """Start ``manage.py jobs_sweep --every N`` beside this process (a worker runs one).

    A process, not a thread: a Celery worker forks its pool processes, and a fork taken
    while a thread holds a lock (logging, the database driver) leaves the child hung. The
    sweeper exits when its parent does."""
    every = interval if interval is not None else float(getattr(settings, "WINNOW_JOB_SWEEP_INTERVAL", 60.0))
    manage = Path(settings.BASE_DIR) / "manage.py"
    return subprocess.Popen(
        [sys.executable, str(manage), "jobs_sweep", "--every", str(every), "--parent", str(os.getpid())],
        stdin=subprocess.DEVNULL,
    )


def jobs_sweep_every(*, every: float, parent: int | None = None) -> None:
    """Sweep now and then every ``every`` seconds, until the ``parent`` process is gone."""
    while parent is None or os.getppid() == parent:
        try:
            for line in jobs_sweep():
                logger.warning("job sweep: %s", line)
        except Exception:  # the database may be down for a moment: sweep again later
            logger.warning("job sweep failed", exc_info=True)
        finally:
            connection.close()
        time.sleep(every)


# --- sending a job ----------------------------------------------------------------------


def broker_label() -> str:
    """The Celery broker's address without its password, for messages."""
    from celery import current_app

    try:
        with current_app.connection_for_write() as conn:
            return str(conn.as_uri())
    except Exception:  # a malformed URL: say what the setting says, less any password
        return str(current_app.conf.broker_url).split("@")[-1]


def job_send(send: Callable[[], Any], *, on_error: Callable[[str], None]) -> bool:
    """Send a job's message; when the broker cannot take it, ``on_error`` gets a message
    naming the broker (the job is then marked failed, never left queued)."""
    from kombu.exceptions import KombuError

    try:
        send()
    except (OSError, KombuError) as error:
        message = (
            f"the job could not be queued: the Celery broker ({broker_label()}) did not take it "
            f"({type(error).__name__}: {error}); start it again once the broker is back"
        )
        logger.error(message)
        on_error(message)
        return False
    return True


def job_enqueue(kind: JobKind, pk: int, send: Callable[[], Any]) -> bool:
    """Send a job's message (``send``); when the broker cannot take it, the job's row is
    marked failed (``kind.failed``) with the message ``job_send`` writes, never left queued."""

    def failed(message: str) -> None:
        job_update(kind, pk, None, **{kind.status_field: kind.failed, kind.error_field: message})

    return job_send(send, on_error=failed)
