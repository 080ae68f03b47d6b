"""No leaked markup anywhere: every page of every role, and the htmx fragments those pages
fetch, show no template syntax (``{#``, ``#}``, ``{%``, ``{{``): a comment or a tag not
closed where Django reads it reaches the page as text.

The site is the demo one (`./winnow up`: every role finds something on its pages), with
what the demo lacks made as the app makes it with tiny models (a generation job, a cloze
run, an audit, a release awaiting publication, two finished runs to compare). Each
demo account opens every page reachable from its home page by links (the admin: its index
only), every fragment a page asks for by ``hx-get``, and an annotator page with an item
in hand; a crowd participant opens the study pages the curator's links lead to. The URL
patterns are walked too: a page-serving pattern no role reached fails the test, so a new
page cannot escape it."""

from __future__ import annotations

import re
from collections import deque
from html import unescape
from io import StringIO
from urllib.parse import urldefrag, urlparse

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve
from django.urls.exceptions import Resolver404

from datasets.models import Schema
from tests.annotation.test_task_types import TEMPLATE_SYNTAX

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

#: Links that are files, not pages (downloads), or that sign out.
NOT_PAGES = (
    "/api/",
    ".jsonl",
    ".csv",
    ".json",
    ".txt",
    ".md",
    ".zip",
    ".svg",
    "/download",
    "/logout",
    "format=",
)
HX_GET = re.compile(r'hx-get="([^"]+)"')
HREF = re.compile(r'href="([^"]+)"')
STUDY_URL = re.compile(r"(/study/[\w:-]+/(?:\?[^\s<\"]*)?)")
PLATFORM_PLACEHOLDER = re.compile(r"\{\{%[A-Z_]+%\}\}")

#: Patterns that serve no page to a GET: POST-only actions (their GET is 405 or a redirect
#: to a page checked here), files, JSON, the health probe, the API and the admin.
NOT_A_PAGE = {
    "evaluation:audit-filtered-release",  # POST only
    "favicon",
    "health",
    "logout",
    "api-schema",
    # files
    "agreement:chart-export",
    "cloze:run-table",
    "evaluation:audit-table",
    "adversarial-figures:table",
    "evaluation:leaderboard-table",
    "evaluation:run-compare-table",
    "evaluation:run-table",
    "agreement:export",
    "annotation:campaign-export",
    "crowd:payment-report",
    "evaluation:run-file",
    "releases:release-bundle",
    "releases:release-download",
    # POST-only actions (a GET is refused, or sent to a page checked here)
    "annotation:annotator-pause",
    "annotation:campaign-aggregate",
    "annotation:campaign-agreement-compute",
    "annotation:campaign-reopen",
    "annotation:campaign-skip",
    "annotation:campaign-lower-k",
    "annotation:item-adjudicate",
    "annotation:item-change",
    "annotation:pipeline-advance",
    "crowd:link-close",
    "releases:release-approve",
    "adversarial:check",
    "adversarial:keep",
    "adversarial:retract",
    "adversarial:again",
}
NOT_A_PAGE_NAMESPACES = {
    "admin",
    "annotation-api",
    "datasets-api",
    "releases-api",
    "evaluation-api",
    "crowd-api",
    "api",
}


def _leaks(html: str) -> list[str]:
    """Each template token found, with the text around its first place (a study link's
    platform placeholders, Prolific's ``{{%PROLIFIC_PID%}}``, are its text, not a leak)."""
    html = PLATFORM_PLACEHOLDER.sub("", html)
    found = []
    for token in TEMPLATE_SYNTAX:
        at = html.find(token)
        if at >= 0:
            found.append(f"{token} in …{html[max(0, at - 60) : at + 60]}…")
    return found


def _same_site(href: str) -> str | None:
    url, _ = urldefrag(unescape(href))
    parsed = urlparse(url)
    if parsed.scheme or parsed.netloc or not parsed.path.startswith("/"):
        return None
    if parsed.path.startswith("/static/") or any(marker in url for marker in NOT_PAGES):
        return None
    return url


def _name(url: str) -> str | None:
    try:
        match = resolve(urlparse(url).path)
    except Resolver404:
        return None
    return match.view_name


def _crawl(client: Client, start: list[str], leaks: list[str], reached: set[str]) -> list[str]:
    """Open every page reachable by links from ``start`` and every fragment they ask for."""
    queue = deque(start)
    seen: set[str] = set()
    study: list[str] = []
    while queue:
        url = queue.popleft()
        if url in seen:
            continue
        seen.add(url)
        response = client.get(url)
        if response.status_code in (301, 302):
            queue.append(response["Location"])
            continue
        if "text/html" not in response.get("Content-Type", ""):
            continue
        html = response.content.decode()
        name = _name(url)
        if response.status_code == 200 and name:
            reached.add(name)
        if found := _leaks(html):
            leaks.append(f"{url} ({response.status_code}): {found}")
        for fragment in HX_GET.findall(html):
            target = _same_site(fragment)
            if target is None:
                continue
            part = client.get(target, headers={"HX-Request": "true"})
            if part.status_code == 200 and (fragment_name := _name(target)):
                reached.add(fragment_name)
            if "text/html" in part.get("Content-Type", "") and (found := _leaks(part.content.decode())):
                leaks.append(f"{target} (htmx, {part.status_code}): {found}")
        path = urlparse(url).path
        if path.startswith("/admin/") and path != "/admin/":
            continue  # the admin: its index and what it links to, not deeper
        # a study link is shown as text (to paste into the platform), not as a link
        # (the platform's placeholders filled, as the platform does)
        shown = PLATFORM_PLACEHOLDER.sub(lambda m: m.group(0).strip("{%}").lower() + "-1", unescape(html))
        study += [m for m in STUDY_URL.findall(shown) if m != url]
        for href in HREF.findall(html):
            target = _same_site(href)
            if target is None or target in seen:
                continue
            if urlparse(target).path.startswith("/study/"):
                study.append(target)
                continue
            queue.append(target)
    return study


def _patterns(resolver: URLResolver | None = None, namespace: str = "") -> list[str]:
    names: list[str] = []
    for entry in (resolver or get_resolver()).url_patterns:
        if isinstance(entry, URLResolver):
            inner = (
                f"{namespace}:{entry.namespace}"
                if namespace and entry.namespace
                else entry.namespace or namespace
            )
            names += _patterns(entry, inner or "")
        elif isinstance(entry, URLPattern) and entry.name:
            names.append(f"{namespace}:{entry.name}" if namespace else entry.name)
    return names


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    """A models folder with a tiny causal LM (generation, audits) and a tiny masked one (cloze)."""
    from tests.evaluation.cloze_models import build_masked
    from tests.evaluation.tiny_models import build_tiny_causal

    folder = tmp_path_factory.mktemp("models")
    build_tiny_causal(folder / "tiny-causal")
    build_masked(folder / "cloze-bert")
    return folder


def _what_the_demo_lacks(captured, tiny_models) -> None:
    """The objects whose pages the demo has nothing for, made as the app makes them (tiny
    models instead of SmolLM2): a finished generation job, a cloze run on a ComVE release,
    an audit of the demo's WSC release, a release approved and not yet published (its
    publish page), two finished runs on one release (their comparison links each item's
    page), and an adversarial round with a writer's try waiting for the models."""
    from evaluation.audit.services import audit_create, audit_run_here, source_of_release
    from evaluation.cloze.services import ClozeSettings, cloze_run_queue, cloze_run_queued
    from evaluation.generation_jobs.services import generation_job_run, generation_reasons_create
    from evaluation.models import AuditStatus, ClozeRunStatus, GenerationStatus, RunStatus
    from evaluation.services import evaluation_run, evaluation_run_create
    from releases.models import Release
    from releases.services import release_approve
    from tests.releases.factories import create_release, make_comve, published_release

    curator = get_user_model().objects.get(username="curator")
    researcher = get_user_model().objects.get(username="researcher")
    collection = Schema.objects.order_by("pk").values_list("collection", flat=True).first()
    assert collection is not None
    job = generation_reasons_create(
        collection=collection, model="tiny-causal", k=1, max_new_tokens=3, limit=2, created_by=curator
    )
    assert generation_job_run(job=job).status == GenerationStatus.DONE, job.error
    make_comve(3)
    comve = published_release(captured, user=curator, name="leak-comve", dataset="comve", split="test")
    cloze = cloze_run_queue(
        release=f"{comve.name}@{comve.version}",
        model_name="cloze-bert",
        settings=ClozeSettings(k=3, pairs=2, limit=1, paper_examples=False),
        user=researcher,
    )
    assert cloze_run_queued(run=cloze).status == ClozeRunStatus.DONE, cloze.error
    wsc = Release.objects.filter(dataset="wsc", status="published").order_by("pk").first()
    assert wsc is not None
    audit = audit_create(
        source=source_of_release(f"{wsc.name}@{wsc.version}"),
        model="tiny-causal",
        folds=2,
        epochs=2,
        repeats=1,
        aflite={"m": 4, "t": 2, "k": 2, "tau": 0.6, "target_n": 4},
        created_by=curator,
    )
    assert audit_run_here(audit=audit).status == AuditStatus.DONE, audit.error
    release_approve(release=create_release(captured, user=curator, name="leak-approved"), user=curator)
    for method in ("first", "random"):
        run = evaluation_run_create(release=f"{wsc.name}@{wsc.version}", method=method, created_by=researcher)
        assert evaluation_run(run=run).status == RunStatus.DONE
    # an adversarial round (tiny model in the loop) whose writer annotator1 has a try waiting
    # for the models (its panel asks again: the try's fragment), as the round's page shows it
    from annotation.models import Task
    from annotation.services import assignment_next
    from evaluation.adversarial.rounds.services import round_start
    from evaluation.adversarial.services import adversarial_try_create
    from tests.adversarial.factories import TWINS

    found = round_start(
        curator=curator,
        kind="adversarial_winograd",
        collection="leak-adversarial",
        model_names=["tiny-causal"],
        method="partial",
        slots=2,
    )
    writing = found.pipeline.stages.get(key="write").campaign
    assert writing is not None and writing.task == Task.ADVERSARIAL_WINOGRAD
    writer = get_user_model().objects.get(username="annotator1")
    slot = assignment_next(campaign=writing, annotator=writer)
    assert slot is not None
    adversarial_try_create(writer=writer, assignment=slot, raw=TWINS)  # left queued: no worker here


@pytest.fixture
def demo_site(settings, tmp_path, tiny_models, django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.WINNOW_MODELS_DIR = tiny_models
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    for command, args in (
        ("seed_demo", ()),
        ("annotation_demo", ()),
        ("release_demo", ()),
        ("pipeline_demo", ()),
        ("evaluation_demo", ("--no-model",)),
    ):
        call_command(command, *args, stdout=StringIO())
    _what_the_demo_lacks(django_capture_on_commit_callbacks, tiny_models)


def test_no_page_of_any_role_nor_fragment_leaks_template_syntax(demo_site, django_user_model):
    leaks: list[str] = []
    reached: set[str] = set()
    study: list[str] = []
    for account in ("admin", "curator", "annotator1", "researcher"):
        client = Client()
        client.force_login(django_user_model.objects.get(username=account))
        study += _crawl(client, ["/"], leaks, reached)
        if account == "annotator1":
            # an item in hand, by htmx (the fragment) and as a whole page
            for campaign in re.findall(
                r'href="(/annotation/campaigns/[\w-]+/)"', client.get("/").content.decode()
            ):
                started = client.post(campaign, {"start": "1"}, headers={"HX-Request": "true"})
                recent = client.get(f"{campaign}recent/")  # the fold's list, fetched when opened
                reached.add(_name(f"{campaign}recent/") or "")
                for html in (
                    started.content.decode(),
                    client.get(campaign).content.decode(),
                    recent.content.decode(),
                ):
                    if found := _leaks(html):
                        leaks.append(f"{campaign} with an item in hand: {found}")
    # a crowd participant: the study pages the curator's links lead to, without an account:
    # the landing page, then in (a POST), the consent, an item, the finish and the end
    for landing in sorted(set(study)):
        participant = Client()
        _crawl(participant, [landing], leaks, reached)
        entered = participant.post(landing, follow=True)
        token = urlparse(landing).path.split("/")[2]
        _crawl(participant, [f"/study/{token}/consent/"], leaks, reached)
        participant.post(f"/study/{token}/consent/", {"agree": "yes"})
        pages = [entered.redirect_chain[-1][0] if entered.redirect_chain else landing]
        _crawl(participant, [*pages, f"/study/{token}/finish/"], leaks, reached)
        participant.post(f"/study/{token}/finish/", {"confirm": "yes"}, follow=True)
        _crawl(participant, [f"/study/{token}/done/"], leaks, reached)
    # signed out: the sign-in page, the API docs, a missing page
    for url in ("/accounts/login/", "/api/docs/", "/no-such-page/"):
        response = Client().get(url)
        if response.status_code == 200 and (name := _name(url)):
            reached.add(name)
        if found := _leaks(response.content.decode()):
            leaks.append(f"{url}: {found}")
    assert leaks == []

    # every pattern that serves a page was reached by some role
    served = {
        name
        for name in _patterns()
        if name not in NOT_A_PAGE and name.split(":")[0] not in NOT_A_PAGE_NAMESPACES
    }
    missed = sorted(served - reached)
    assert missed == [], "\n".join(missed)
