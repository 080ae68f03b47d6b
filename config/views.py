import threading
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.cache import caches
from django.db import connection
from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect, JsonResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static

from annotation import selectors as annotation_selectors
from annotation.crowd.services import participant_of
from annotation.task_types import task_spec
from config.celery import app as celery_app
from core.auth import client_address
from core.cache import cache_probe
from core.roles import user_is_annotator, user_is_curator


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """The start page: links to what the user's roles allow; an annotator also sees the
    campaigns open to them, each with their own progress; a curator the items awaiting
    review and a link to the dashboard. A crowd participant goes on with their study."""
    participant = participant_of(request.user)  # None without a query for everyone else
    if participant is not None:
        return redirect("annotation:campaign-annotate", name=participant.link.campaign.name)
    context: dict[str, Any] = {}
    if user_is_annotator(request.user):
        context["my_campaigns"] = [
            {
                "campaign": campaign,
                "title": task_spec(campaign.task).title,
                "mine": annotation_selectors.my_progress(campaign=campaign, annotator=request.user),
            }
            for campaign in annotation_selectors.campaign_list(user=request.user).filter(
                status="active", imported=False
            )
        ]
    if user_is_curator(request.user):
        overview = annotation_selectors.campaign_overview(user=request.user)
        context["curator_summary"] = {
            "campaigns": len(overview),
            "active": sum(1 for row in overview if row.campaign.status == "active"),
            "awaiting": sum(row.progress["awaiting"] for row in overview),
        }
    return render(request, "home.html", context)


def _check(probe: Callable[[], Any]) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        detail = probe()
    except Exception as error:  # a health check reports any failure instead of failing itself
        return {"ok": False, "error": type(error).__name__, "ms": _ms(started)}
    return {"ok": True, "ms": _ms(started), **(detail or {})}


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)


def _database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def _cache() -> None:
    cache_probe(caches["default"])  # the pages do without an unreachable cache; the monitor is told


def _broker() -> None:
    with celery_app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=2)


def _workers() -> dict[str, Any]:
    replies = celery_app.control.ping(timeout=1.0) or []
    names = sorted(name for reply in replies for name in reply)
    if not names:
        raise RuntimeError("no worker answered")
    return {"workers": names}


class _MinimalHealth:
    """The anonymous answer, kept for ``WINNOW_HEALTH_CACHE`` seconds in each process: one
    caller probes the database and the broker, the callers that come meanwhile wait for it
    and share its answer (a burst of anonymous calls costs one probe, not one each)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._until = 0.0
        self._ok = False

    def get(self) -> bool:
        with self._lock:
            now = time.monotonic()
            if now >= self._until:
                self._ok = bool(_check(_database)["ok"] and _check(_broker)["ok"])
                self._until = time.monotonic() + settings.WINNOW_HEALTH_CACHE
            return self._ok

    def forget(self) -> None:
        with self._lock:
            self._until = 0.0


minimal_health = _MinimalHealth()


def _health_detail_allowed(request: HttpRequest) -> bool:
    user = request.user
    if user.is_authenticated and (user.is_staff or user_is_curator(user)):
        return True
    return client_address(request) in settings.WINNOW_HEALTH_DETAIL_ADDRESSES


def health(request: HttpRequest) -> JsonResponse:
    """For a load balancer or a monitor, without signing in: 200 while the database and the
    Celery broker answer (the site works and jobs queue up), else 503. Anonymous callers get
    ``{"ok": ...}`` only, from a cache of a few seconds (``WINNOW_HEALTH_CACHE``): no host,
    no worker names, no timings, and a burst of calls costs one probe. Staff, curators and
    the addresses in ``WINNOW_HEALTH_DETAIL_ADDRESSES`` get each component (database,
    cache, broker, workers), probed afresh."""
    if not _health_detail_allowed(request):
        healthy = minimal_health.get()
        return JsonResponse({"ok": healthy}, status=200 if healthy else 503)
    report = {
        "database": _check(_database),
        "cache": _check(_cache),
        "broker": _check(_broker),
        "workers": _check(_workers),
    }
    healthy = report["database"]["ok"] and report["broker"]["ok"]
    return JsonResponse({"ok": healthy, **report}, status=200 if healthy else 503)


def favicon(request: HttpRequest) -> HttpResponse:
    """``/favicon.ico``, which browsers ask for on their own: the SVG icon every page links."""
    return HttpResponsePermanentRedirect(static("favicon.svg"))
