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
from django.urls import reverse

from annotation import selectors as annotation_selectors
from annotation.crowd.services import participant_of
from annotation.models import Pipeline, PipelineStatus
from annotation.task_types import task_spec
from config.celery import app as celery_app
from core.auth import client_address
from core.cache import cache_probe
from core.roles import user_is_annotator, user_is_curator
from datasets.models import ComVEItem, Schema
from evaluation.models import EvaluationRun
from releases.models import Release, ReleaseStatus


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
        context["steps"] = _benchmark_steps()
    return render(request, "home.html", context)


def _benchmark_steps() -> list[dict[str, Any]]:
    """The curator's path to a benchmark, step by step, each with where it stands and the
    link that takes it on: import, pipeline, release, evaluate."""
    own = Schema.objects.exclude(collection="wsc273").order_by().values("collection")
    collections = sorted(
        {
            row["collection"]
            for row in own.union(ComVEItem.objects.exclude(collection="").order_by().values("collection"))
        }
    )
    # every count in one statement (the home page keeps to a few queries)
    pipeline, release, run = Pipeline._meta.db_table, Release._meta.db_table, EvaluationRun._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT (SELECT COUNT(*) FROM {pipeline} WHERE status <> %s),"  # noqa: S608 (tables from the models)
            f" (SELECT COUNT(*) FROM {pipeline} WHERE status = %s),"
            f" (SELECT name FROM {pipeline} ORDER BY CASE WHEN status = %s THEN 1 ELSE 0 END, id DESC LIMIT 1),"
            f" (SELECT COUNT(*) FROM {release}), (SELECT COUNT(*) FROM {release} WHERE status = %s),"
            f" (SELECT COUNT(*) FROM {run})",
            [
                PipelineStatus.DONE.value,
                PipelineStatus.DONE.value,
                PipelineStatus.DONE.value,
                ReleaseStatus.PUBLISHED.value,
            ],
        )
        running, finished, latest, releases, published, runs = cursor.fetchone()
    latest = latest or ""
    steps = [
        {
            "key": "import",
            "title": "Import your items",
            "done": bool(collections),
            "state": (
                f"{len(collections)} collection{'s' if len(collections) != 1 else ''} of your own: "
                + ", ".join(collections[:5])
                if collections
                else "nothing of your own yet"
            ),
            "url": reverse("datasets:import"),
            "action": "Import a data set",
        },
        {
            "key": "pipeline",
            "title": "Run a pipeline",
            "done": bool(finished),
            "state": f"{running} running, {finished} finished" if running or finished else "no pipeline yet",
            "url": (
                reverse("annotation:pipeline-detail", args=[latest])
                if latest
                else reverse("annotation:pipeline-list")
            ),
            "action": f"Open pipeline {latest}" if latest else "Start a pipeline",
        },
        {
            "key": "release",
            "title": "Release the items",
            "done": bool(published),
            "state": f"{published} published of {releases}" if releases else "no release yet",
            "url": reverse("releases:release-create"),
            "action": "Create a release",
        },
        {
            "key": "evaluate",
            "title": "Evaluate models on it",
            "done": bool(runs),
            "state": f"{runs} run{'s' if runs != 1 else ''}" if runs else "no run yet",
            "url": reverse("evaluation:run-list"),
            "action": "Evaluate a model",
        },
    ]
    # the suggested next step: the first not done
    for step in steps:
        step["next"] = False
    for step in steps:
        if not step["done"]:
            step["next"] = True
            break
    return steps


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
