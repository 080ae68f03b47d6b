"""A health endpoint for monitors, and a 503 page when the database cannot be reached
(issue 16, item 12; the health endpoint of item 8): anonymous callers get a cached up/down
answer only (study integrity, item 7), staff and configured addresses the detail."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import OperationalError
from django.urls import reverse

from config.views import minimal_health

pytestmark = pytest.mark.django_db
MONITOR = "192.0.2.10"


@pytest.fixture(autouse=True)
def _monitor(settings: Any) -> Any:
    """The tests of the detail call from a configured monitor's address (the Django test
    client's own address, 127.0.0.1, stays anonymous); no cached answer carries over."""
    settings.WINNOW_HEALTH_DETAIL_ADDRESSES = [MONITOR]
    minimal_health.forget()
    yield
    minimal_health.forget()


def test_anonymous_health_is_a_cached_up_or_down_without_any_name(client, monkeypatch):
    probes: list[str] = []

    def counted(name: str) -> Any:
        def probe() -> None:
            probes.append(name)

        return probe

    monkeypatch.setattr("config.views._database", counted("database"))
    monkeypatch.setattr("config.views._broker", counted("broker"))

    def no_workers() -> Any:
        raise AssertionError("an anonymous call pinged the workers")

    monkeypatch.setattr("config.views._workers", no_workers)
    for _ in range(20):
        response = client.get(reverse("health"))
        assert response.status_code == 200 and response.json() == {"ok": True}
    assert probes == ["database", "broker"]  # once for all twenty calls
    minimal_health.forget()  # the cache ran out

    def down() -> None:
        raise OperationalError("could not connect to server")

    monkeypatch.setattr("config.views._database", down)
    response = client.get(reverse("health"))
    assert response.status_code == 503 and response.json() == {"ok": False}


def test_anonymous_health_carries_no_worker_or_host_name(client, monkeypatch):
    monkeypatch.setattr("config.views._workers", lambda: {"workers": ["celery@worker-host-7"]})
    body = client.get(reverse("health")).content.decode()
    assert "worker" not in body and "celery@" not in body and "ms" not in body
    detail = client.get(reverse("health"), REMOTE_ADDR=MONITOR).json()
    assert detail["workers"] == {
        "ok": True,
        "ms": detail["workers"]["ms"],
        "workers": ["celery@worker-host-7"],
    }


def test_staff_and_curators_get_the_detail_signed_in(client, curator, annotator):
    client.force_login(annotator)
    assert set(client.get(reverse("health")).json()) == {"ok"}
    client.force_login(curator)
    assert set(client.get(reverse("health")).json()) == {"ok", "database", "cache", "broker", "workers"}


def test_health_reports_each_component_to_a_monitor_without_signing_in(client):
    response = client.get(reverse("health"), REMOTE_ADDR=MONITOR)
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
    response = client.get(reverse("health"), REMOTE_ADDR=MONITOR)
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
    response = client.get(reverse("health"), REMOTE_ADDR=MONITOR)
    assert response.status_code == 503
    assert response.json()["broker"]["ok"] is False and response.json()["database"]["ok"] is True


def test_health_with_a_real_redis_broker_and_cache(client, monkeypatch, settings, redis_url):
    url = redis_url
    from django.core.cache import caches
    from django.core.cache.backends.redis import RedisCache

    from config.celery import app

    monkeypatch.setattr(app.conf, "broker_url", url)
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}}
    assert isinstance(caches["default"], RedisCache)  # Django renews the handler on the change
    body = client.get(reverse("health"), REMOTE_ADDR=MONITOR).json()
    assert body["broker"]["ok"] is True and body["cache"]["ok"] is True and body["ok"] is True
