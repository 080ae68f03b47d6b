"""python manage.py jobs_sweep: queue again (or fail) the jobs whose worker was lost."""

from typing import Any

from django.core.management.base import BaseCommand

from core.jobs import jobs_sweep, jobs_sweep_every, max_attempts, stale_after


class Command(BaseCommand):
    help = (
        "Find running jobs (evaluation runs, cloze runs, release builds) whose heartbeat "
        "stopped for WINNOW_JOB_STALE_AFTER seconds, i.e. whose worker was lost, and queue "
        "them again, or mark them failed after WINNOW_JOB_MAX_ATTEMPTS starts (a cloze run, "
        "started by a command, is marked failed). Every worker already does this when it "
        "starts and every WINNOW_JOB_SWEEP_INTERVAL seconds; run it by hand or from cron when "
        "no worker runs."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--every", type=float, help="sweep again every this many seconds, until stopped")
        parser.add_argument(
            "--parent", type=int, help="with --every: stop when this process id is no longer the parent"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["every"]:
            jobs_sweep_every(every=options["every"], parent=options["parent"])
            return
        lines = jobs_sweep()
        for line in lines:
            self.stdout.write(line)
        self.stdout.write(
            f"{len(lines)} job(s) moved (stale after {stale_after().total_seconds():g} s, "
            f"at most {max_attempts()} attempts)"
        )
