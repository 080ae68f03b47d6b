"""Every page of every role passes Winnow's Content-Security-Policy in Chromium: no inline
script or style, no eval (issue 16, item 11).

The site is the demo one `./winnow up` builds (every role finds something on its pages);
each demo account signs in through the form and opens every page reachable from its home
page by links (the admin: its index and the pages it links to), presses Start on an
annotator page and answers an item (htmx fragments), and waits for the API docs to draw.
Chromium fires ``securitypolicyviolation`` for anything the policy blocks, and each
response from Winnow (pages, fragments, static files) must carry the header."""

from __future__ import annotations

import importlib
from collections import deque
from io import StringIO
from urllib.parse import urldefrag, urlparse

import pytest
from django.core.management import call_command
from django.db import connection

from annotation.models import Judgment

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

RECORD_VIOLATIONS = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push(`${e.effectiveDirective} blocked ${e.blockedURI || "inline"} at ${e.sourceFile}:${e.lineNumber}`);
});
"""
#: Links that are files, not pages (downloads), or that sign out.
NOT_PAGES = (
    "/api/schema/",
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


@pytest.fixture
def demo_site(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    for command, args in (
        ("seed_demo", ()),
        ("annotation_demo", ()),
        ("release_demo", ()),
        ("pipeline_demo", ()),
        ("evaluation_demo", ("--no-model",)),
    ):
        call_command(command, *args, stdout=StringIO())
    yield
    if connection.vendor == "sqlite":
        # The test database is emptied by DELETE on SQLite, which the published-release
        # triggers refuse: turn the demo's published releases back into drafts underneath.
        guards = importlib.import_module("datasets.migrations.0004_release_published_guards")
        with connection.cursor() as cursor:
            for statement in guards._sqlite_backward():
                cursor.execute(statement)
            cursor.execute("UPDATE datasets_release SET status = 'draft' WHERE status = 'published'")
            for statement in guards._sqlite_forward():
                cursor.execute(statement)


def _watch(page, live_server, seen: dict[str, list[str]]) -> None:
    """Record every violation and every Winnow response without the header."""
    page.add_init_script(RECORD_VIOLATIONS)

    def console(message) -> None:
        if "Content Security Policy" in message.text:
            seen["console"].append(f"{page.url}: {message.text}")

    def response(resp) -> None:
        # (the live server serves static files before the middleware, unlike whitenoise in
        # production: tests/test_content_security_policy.py checks those)
        ours = resp.url.startswith(live_server.url) and "/static/" not in resp.url
        if ours and "content-security-policy" not in resp.headers:
            seen["no header"].append(resp.url)

    page.on("console", console)
    page.on("response", response)


def _violations(page) -> list[str]:
    return [f"{page.url}: {v}" for v in page.evaluate("window.__csp || []")]


def _links(page, origin: str) -> list[str]:
    hrefs = page.eval_on_selector_all("a[href]", "els => els.map(a => a.href)")
    found = []
    for href in hrefs:
        url, _ = urldefrag(href)
        parsed = urlparse(url)
        if (
            url.startswith(origin)
            and not parsed.path.startswith("/static/")
            and not any(marker in url for marker in NOT_PAGES)
        ):
            found.append(url)
    return found


def _crawl(page, live_server) -> tuple[list[str], list[str]]:
    """Open every page reachable by links from home; returns (pages, violations)."""
    origin = live_server.url
    queue = deque([origin + "/"])
    visited: list[str] = []
    violations: list[str] = []
    while queue:
        url = queue.popleft()
        if url in visited:
            continue
        visited.append(url)
        response = page.goto(url)
        assert response is not None and response.status == 200, (url, response and response.status)
        violations += _violations(page)
        admin_below_index = urlparse(url).path.startswith("/admin/") and urlparse(url).path != "/admin/"
        if not admin_below_index:  # the admin: its index and what it links to, not deeper
            queue.extend(link for link in _links(page, origin) if link not in visited)
    return visited, violations


@pytest.mark.parametrize("account", ["admin", "curator", "annotator1", "researcher"])
def test_every_page_of_every_role_passes_the_policy(demo_site, page, live_server, account):
    seen: dict[str, list[str]] = {"console": [], "no header": []}
    _watch(page, live_server, seen)
    page.goto("/accounts/login/")
    violations = _violations(page)
    page.fill("input[name=username]", account)
    page.fill("input[name=password]", account)
    page.click("form button[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)

    visited, crawled = _crawl(page, live_server)
    violations += crawled
    paths = {urlparse(u).path for u in visited}
    if account in ("admin", "researcher", "curator"):
        assert "/api/docs/" in paths and "/evaluation/" in paths
        page.goto("/api/docs/")
        page.wait_for_selector(".swagger-ui .opblock")  # drawn by its script, from a file
        violations += _violations(page)
    if account in ("admin", "curator"):
        assert "/admin/" in paths and "/annotation/agreement/" in paths
    if account == "annotator1":
        annotate = sorted(p for p in paths if p.startswith("/annotation/campaigns/"))
        assert annotate, paths
        # htmx with eval and script tags off: Start, then an answer by keyboard, no reload
        page.goto("/annotation/campaigns/demo-switchability/")
        page.evaluate("window.__sameDocument = true")
        page.locator("#start-form button").click()
        page.wait_for_selector("#annotate-form")
        before = Judgment.objects.filter(annotator__username=account).count()
        shown = page.locator("#progress-text").inner_text()
        page.locator("#item").click(position={"x": 2, "y": 2})
        page.keyboard.press("y")
        page.keyboard.press("Enter")
        page.wait_for_function("t => document.querySelector('#progress-text').textContent !== t", arg=shown)
        assert Judgment.objects.filter(annotator__username=account).count() == before + 1
        assert page.evaluate("window.__sameDocument === true")
        violations += _violations(page)
    assert len(visited) >= 5, visited
    assert violations == [], violations
    assert seen["console"] == [], seen["console"]
    assert seen["no header"] == [], seen["no header"]
