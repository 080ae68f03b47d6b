"""The Celery app.

Embedded default: a filesystem broker under ``var/celery`` so that a worker runs with
no outside server (``./winnow up`` starts one). Production: set ``REDIS_URL`` (or
``CELERY_BROKER_URL``) and run any number of workers; model jobs go to the ``models``
queue so that machines with accelerators can serve only that queue.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("winnow")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()  # every installed app's tasks.py (releases, evaluation)
