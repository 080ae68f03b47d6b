"""With Redis down, signing in and every page keep working from the database; with Redis
up, sessions and roles are read from it (issue 16, item 8, the cache half).

The cache and session settings are the ones config/settings.py gives production for a
``REDIS_URL``, read in a subprocess, so these tests follow the settings."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.sessions.models import Session
from django.core.cache import caches
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.services import campaign_create
from core.cache import FallbackRedisCache
from tests.datasets.factories import SchemaFactory

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent
NOTHING_LISTENS = "redis://127.0.0.1:1/0"  # port 1: a refused connection at once


def _production_cache_settings(redis_url: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_") and k != "DATABASE_URL"}
    env["REDIS_URL"] = redis_url
    code = (
        "import json; from django.conf import settings as s;"
        "print(json.dumps({'CACHES': s.CACHES, 'SESSION_ENGINE': s.SESSION_ENGINE}))"
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture
def redis_settings(settings):
    def apply(url: str) -> None:
        production = _production_cache_settings(url)
        settings.CACHES = production["CACHES"]
        settings.SESSION_ENGINE = production["SESSION_ENGINE"]

    return apply


def _sign_in(client, user) -> Any:
    return client.post(
        reverse("login"), {"username": user.username, "password": "pw-" + user.username}, follow=True
    )


def test_sign_in_and_pages_work_while_redis_is_down_and_it_is_logged_once(
    client, annotator, redis_settings, caplog
):
    redis_settings(NOTHING_LISTENS)
    cache = caches["default"]
    assert isinstance(cache, FallbackRedisCache)
    cache.retry_seconds = 0  # ask Redis on every call: still one warning
    SchemaFactory.create()
    campaign_create(name="sw", task="switchability", items="schemas", k=1)
    client.raise_request_exception = False
    with caplog.at_level(logging.WARNING, logger="winnow.cache"):
        response = _sign_in(client, annotator)
        assert response.status_code == 200
        assert response.wsgi_request.user == annotator  # signed in, the session from the database
        assert Session.objects.count() == 1
        for url in (
            reverse("home"),
            reverse("annotation:campaign-list"),
            reverse("annotation:campaign-annotate", args=["sw"]),
            reverse("releases:release-list"),
        ):
            assert client.get(url).status_code == 200, url
        # roles still decide: the curator's pages stay closed to an annotator
        assert client.get(reverse("datasets:import")).status_code == 403
    warnings = [r for r in caplog.records if r.name == "winnow.cache"]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    assert "cache unreachable (ConnectionError" in warnings[0].getMessage()


def test_health_still_reports_the_cache_down(client, redis_settings, settings):
    redis_settings(NOTHING_LISTENS)
    settings.WINNOW_HEALTH_DETAIL_ADDRESSES = ["127.0.0.1"]  # a monitor on the machine
    body = client.get(reverse("health")).json()
    assert body["cache"]["ok"] is False and body["cache"]["error"] == "ConnectionError"
    assert body["database"]["ok"] is True


def test_sessions_and_roles_are_read_from_a_real_redis_when_it_is_up(
    client, annotator, redis_settings, redis_url
):
    redis_settings(redis_url)
    cache = caches["default"]
    assert isinstance(cache, FallbackRedisCache)
    assert _sign_in(client, annotator).status_code == 200
    session_key = client.cookies["sessionid"].value
    try:
        assert cache.get("django.contrib.sessions.cached_db" + session_key) is not None
        client.get(reverse("releases:release-list"))  # roles now cached too
        assert cache.get(f"winnow:roles:{annotator.pk}") == ["annotator"]
        # a page read without the session or roles queries: both come from Redis
        with CaptureQueriesContext(connection) as queries:
            assert client.get(reverse("releases:release-list")).status_code == 200
        tables = " ".join(q["sql"] for q in queries.captured_queries)
        assert "django_session" not in tables and "auth_group" not in tables
        assert cache.is_down is False
    finally:
        cache.delete_many(["django.contrib.sessions.cached_db" + session_key, f"winnow:roles:{annotator.pk}"])
