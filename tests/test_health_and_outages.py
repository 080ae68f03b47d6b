"""A health endpoint for monitors, and a 503 page when the database cannot be reached
(issue 16, item 12; the health endpoint of item 8)."""

from __future__ import annotations

import os
from typing import Any

import pytest
from django.db import OperationalError
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_health_reports_each_component_without_signing_in(client):
    response = client.get(reverse("health"))
    body = response.json()
    assert set(body) == {"ok", "database", "cache", "broker", "workers"}
    assert body["database"]["ok"] is True and body["cache"]["ok"] is True
    assert response.status_code == (200 if body["broker"]["ok"] else 503)
    assert body["ok"] is (response.status_code == 200)
    # no worker runs beside the tests: reported, and not a reason for 503 by itself
    assert body["workers"]["ok"] is False and body["workers"]["error"]


def test_health_is_503_when_the_database_is_down(client, monkeypatch):
    def down(*args: Any, **kwargs: Any) -> Any:
        raise OperationalError("could not connect to server")

    monkeypatch.setattr("config.views._database", down)
    response = client.get(reverse("health"))
    assert response.status_code == 503
    body = response.json()
    assert body["ok"] is False
    assert body["database"] == {"ok": False, "error": "OperationalError", "ms": body["database"]["ms"]}
    assert "could not connect" not in response.content.decode()  # no detail for the world


def test_a_database_outage_gives_a_503_page_that_asks_to_retry(client, annotator, monkeypatch):
    client.force_login(annotator)
    client.raise_request_exception = False

    def down(*args: Any, **kwargs: Any) -> Any:
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr("config.views.user_is_annotator", down)
    response = client.get(reverse("home"))
    assert response.status_code == 503
    assert response["Retry-After"] == "30"
    html = response.content.decode()
    assert "Winnow is unavailable for a moment" in html and "try again" in html


def test_any_other_error_is_still_a_500(client, annotator, monkeypatch):
    client.force_login(annotator)
    client.raise_request_exception = False

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr("config.views.user_is_annotator", broken)
    response = client.get(reverse("home"))
    assert response.status_code == 500
    assert "Something went wrong" in response.content.decode()


def test_health_is_503_when_the_broker_is_down(client, monkeypatch):
    from config.celery import app

    monkeypatch.setattr(app.conf, "broker_url", "redis://127.0.0.1:1/0")  # nothing listens there
    response = client.get(reverse("health"))
    assert response.status_code == 503
    assert response.json()["broker"]["ok"] is False and response.json()["database"]["ok"] is True


def test_health_with_a_real_redis_broker_and_cache(client, monkeypatch, settings):
    url = os.environ.get("WINNOW_TEST_REDIS_URL", "")
    if not url:
        message = "needs Redis: set WINNOW_TEST_REDIS_URL=redis://127.0.0.1:6379/15"
        if os.environ.get("WINNOW_REQUIRE_SERVICES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    from django.core.cache import caches

    from config.celery import app

    monkeypatch.setattr(app.conf, "broker_url", url)
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}}
    assert type(caches["default"]).__name__ == "RedisCache"  # Django renews the handler on the change
    body = client.get(reverse("health")).json()
    assert body["broker"]["ok"] is True and body["cache"]["ok"] is True and body["ok"] is True
