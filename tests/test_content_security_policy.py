"""The Content-Security-Policy header on every response, with no unsafe-inline or
unsafe-eval; a report-only switch; templates that need neither (issue 16, item 11).
tests/browser/test_content_security_policy.py opens every page in Chromium under it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


def _directives(value: str) -> dict[str, list[str]]:
    parts = [d.split() for d in value.split(";") if d.strip()]
    return {p[0]: p[1:] for p in parts}


def test_every_kind_of_response_carries_the_policy_without_unsafe_sources(client, curator):
    client.force_login(curator)
    responses = {
        "page": client.get(reverse("home")),
        "fragment": client.get(reverse("releases:release-list"), HTTP_HX_REQUEST="true"),
        "not found": client.get("/no-such-page/"),
        "static file": client.get("/static/css/winnow.css"),
        "api": client.get(reverse("api-schema")),
        "admin": client.get(reverse("admin:index")),
    }
    for kind, response in responses.items():
        assert "Content-Security-Policy-Report-Only" not in response, kind
        value = response["Content-Security-Policy"]
        directives = _directives(value)
        assert directives["default-src"] == ["'self'"], kind
        assert directives["script-src"] == ["'self'"] and directives["style-src"] == ["'self'"], kind
        assert directives["frame-ancestors"] == ["'none'"] and directives["object-src"] == ["'none'"], kind
        assert "unsafe-eval" not in value and "unsafe-inline" not in value, kind


def test_an_api_url_opened_in_a_browser_is_json_not_a_page_with_inline_styles(client, curator):
    """DRF's browsable pages carry inline styles the policy refuses: the API answers JSON
    even to a browser's Accept header (the schema is browsable at /api/docs/)."""
    client.force_login(curator)
    browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
    for url in ("/api/schemas/", "/api/annotation/campaigns/", "/api/releases/"):
        response = client.get(url, HTTP_ACCEPT=browser)
        assert response.status_code == 200, url
        assert response["Content-Type"] == "application/json", url
        assert "style=" not in response.content.decode() and "<html" not in response.content.decode(), url


def test_report_only_is_a_switch(client, settings):
    settings.WINNOW_CSP_REPORT_ONLY = True
    settings.WINNOW_CSP_REPORT_URI = "https://reports.example/csp"
    response = client.get(reverse("login"))
    assert "Content-Security-Policy" not in response
    value = response["Content-Security-Policy-Report-Only"]
    assert _directives(value)["report-uri"] == ["https://reports.example/csp"]
    assert "unsafe-eval" not in value


def test_htmx_runs_without_eval_or_script_tags(client, annotator):
    client.force_login(annotator)
    html = client.get(reverse("home")).content.decode()
    meta = re.search(r"<meta name=\"htmx-config\" content='([^']+)'>", html)
    assert meta is not None
    config = json.loads(meta.group(1))
    assert config["allowEval"] is False and config["allowScriptTags"] is False
    assert config["includeIndicatorStyles"] is False  # its inline <style> would be refused


def test_no_template_needs_inline_script_style_or_eval():
    offending = []
    for path in TEMPLATES.rglob("*.html"):
        text = path.read_text()
        text = re.sub(r"{% comment %}.*?{% endcomment %}|{#.*?#}", "", text, flags=re.S)
        for pattern in (
            r"\sstyle=",
            r"<style",
            r"<script(?![^>]*\ssrc=)",
            r"\shx-on",
            r"hx-vars",
            r"js:",
            r"\son\w+=",
        ):
            if re.search(pattern, text):
                offending.append(f"{path.relative_to(TEMPLATES)}: {pattern}")
    assert offending == []


def test_the_api_docs_script_comes_from_a_url_not_inline(client, researcher):
    client.force_login(researcher)
    html = client.get(reverse("api-docs")).content.decode()
    scripts = re.findall(r"<script([^>]*)>", html)
    assert scripts and all("src=" in attrs for attrs in scripts)
    script = client.get(reverse("api-docs") + "?script=")
    assert script.status_code == 200 and script["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle" in script.content.decode()
