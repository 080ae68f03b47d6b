"""The Celery app.

Embedded default: a filesystem broker under ``var/celery`` so that a worker runs with
no outside server (``./winnow up`` starts one). Production: set ``REDIS_URL`` (or
``CELERY_BROKER_URL``) and run any number of workers; model jobs go to the ``models``
queue so that machines with accelerators can serve only that queue.
"""

import os
from typing import Any

from celery import Celery
from celery.signals import worker_ready, worker_shutdown

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("winnow")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()  # every installed app's tasks.py (releases, evaluation)


_sweeper: list[Any] = []


@worker_ready.connect
def _sweep_lost_jobs(**kwargs: Any) -> None:
    """Each worker sweeps when it starts and then every WINNOW_JOB_SWEEP_INTERVAL seconds:
    a running job whose heartbeat stopped (its worker was lost) is queued again or failed
    (core.jobs). This needs no beat scheduler, so the embedded setup's one worker does it
    too; several workers sweeping at once move each job once."""
    from core.jobs import sweeper_start

    _sweeper.append(sweeper_start())


@worker_shutdown.connect
def _stop_sweeping(**kwargs: Any) -> None:
    for process in _sweeper:
        process.terminate()
