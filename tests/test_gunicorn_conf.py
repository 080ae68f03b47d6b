"""config/gunicorn.conf.py: the settings gunicorn reads, and the worker hook."""

import gc
import runpy
from pathlib import Path

CONF = Path(__file__).resolve().parent.parent / "config" / "gunicorn.conf.py"


def test_gunicorn_settings_name_the_app_and_gthread_workers(monkeypatch) -> None:
    monkeypatch.setenv("WEB_CONCURRENCY", "6")
    conf = runpy.run_path(str(CONF))
    assert conf["wsgi_app"] == "config.wsgi:application"
    assert conf["worker_class"] == "gthread"
    assert conf["workers"] == 6 and conf["threads"] == 4


def test_the_worker_hook_imports_the_urls_and_freezes_what_is_loaded() -> None:
    conf = runpy.run_path(str(CONF))
    gc.unfreeze()
    try:
        conf["post_worker_init"](object())
        assert gc.get_freeze_count() > 10_000  # Django, DRF and every view module
    finally:
        gc.unfreeze()
