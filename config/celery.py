"""The Celery app.

Embedded default: a filesystem broker under ``var/celery`` so that a worker runs with
no outside server (``./winnow up`` starts one). Production: set ``REDIS_URL`` (or
``CELERY_BROKER_URL``) and run any number of workers; model jobs go to the ``models``
queue so that machines with accelerators can serve only that queue.
"""

import logging
import os
from typing import Any

from celery import Celery
from celery.signals import worker_init, worker_ready, worker_shutdown

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("winnow")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()  # every installed app's tasks.py (releases, evaluation)


_sweeper: list[Any] = []

#: Queues whose tasks run models (CELERY_TASK_ROUTES): a worker serving one of them imports
#: the model libraries when it starts.
MODEL_QUEUES = ("models", "verdicts")


def _serves_models(worker: Any) -> bool:
    queues = worker.app.amqp.queues
    names = set(queues.consume_from or queues)  # consume_from is None without -Q: every queue
    return bool(names & set(MODEL_QUEUES))


@worker_init.connect
def _import_model_libraries(sender: Any = None, **kwargs: Any) -> None:
    """A worker of the model queues imports torch and transformers before it takes a job
    (in the main process: prefork's children inherit the modules; the solo pool runs jobs
    there), so a new worker's first run does not wait the seconds they take to import.
    The setting WINNOW_IMPORT_MODEL_LIBRARIES=false turns it off."""
    from django.conf import settings

    if sender is not None and settings.WINNOW_IMPORT_MODEL_LIBRARIES and _serves_models(sender):
        from evaluation.lm.modeling import import_model_libraries

        seconds = import_model_libraries()
        logging.getLogger(__name__).info("model worker: torch and transformers imported in %.1f s", seconds)


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
