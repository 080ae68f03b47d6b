"""A run's lease (core.jobs) and its progress columns, which the run page polls."""

import time
from collections.abc import Callable

from django.utils import timezone

from core.jobs import JobKind, job_update
from evaluation.models import EvaluationRun, RunPhase, RunStatus

Progress = Callable[[int, int], None]

# The run's lease (core.jobs); evaluation.apps registers it with the task that requeues it.
EVALUATION_RUN_JOB = JobKind(
    label="evaluation run",
    model=EvaluationRun,
    status_field="status",
    queued=RunStatus.QUEUED,
    running=RunStatus.RUNNING,
    failed=RunStatus.FAILED,
    error_field="error",
    failed_fields={"finished_at": timezone.now},
)


class RunProgress:
    """Keeps the run's progress columns current (at most one write per second or step), in
    items (WSC: schemas, whatever their variants). The run's phase turns from loading to
    scoring once the first item is scored, so that the page says "loading the model" until
    then instead of "0 / N"."""

    def __init__(self, run: EvaluationRun, extra: Progress | None, owner: str | None = None) -> None:
        self.run = run
        self.owner = owner
        self.on_progress = extra
        self.offset = 0
        self.total = 0
        self._last = 0.0
        self.scoring = False

    def stage(self, offset: int, size: int) -> Progress:
        """A callback for a scorer covering ``size`` of our items from ``offset``; the scorer
        counts in its own units (e.g. one request per candidate), mapped onto ours."""

        def report(done: int, total: int) -> None:
            self(offset + (size * done // total if total else size))

        self(offset)  # the page shows "0 / N" while the first batch runs
        return report

    def __call__(self, done: int) -> None:
        now = time.monotonic()
        first = done > 0 and not self.scoring
        if first or done == 0 or done >= self.total or now - self._last >= 1.0:
            self._last = now
            phase = {"phase": RunPhase.SCORING} if first else {}
            self.scoring = self.scoring or first
            # only while this copy holds the run's lease: a copy that lost it never moves
            # the progress back
            job_update(
                EVALUATION_RUN_JOB,
                self.run.pk,
                self.owner,
                progress_done=done,
                progress_total=self.total,
                **phase,
            )
        if self.on_progress is not None:
            self.on_progress(done, self.total)
