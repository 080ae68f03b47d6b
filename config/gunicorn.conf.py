"""Gunicorn settings for Winnow: `gunicorn -c config/gunicorn.conf.py` (command-line
options override these; every value can also come from GUNICORN_* style flags).

Measured with bench/annotation_load.py (docs/annotation.md): gthread workers, and the
objects of the loaded application frozen out of the cyclic garbage collector in each
worker. Without the freeze a full collection walks ~150,000 long-lived objects (Django,
DRF, the URL configuration with numpy and scipy behind the metrics pages) and stalls
whichever request triggers it for 70 ms or more.
"""

import gc
import os

wsgi_app = "config.wsgi:application"
bind = os.environ.get("WINNOW_BIND", "127.0.0.1:8000")
worker_class = "gthread"
workers = int(os.environ.get("WEB_CONCURRENCY", "4"))
threads = int(os.environ.get("WINNOW_THREADS", "4"))
keepalive = 30
backlog = 2048


def post_worker_init(worker):
    """Import everything a request needs, then freeze: what exists now lives as long as
    the worker, and the garbage collector need never walk it again."""
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 - imports every view module
    gc.collect()
    gc.freeze()
