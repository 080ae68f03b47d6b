"""Winnow's documentation pages (docs/*.md of the checkout) served as pages, so that help
texts link to a page instead of naming a file of the repository.

CommonMark with tables (markdown-it-py), raw HTML off, images off; a link to another page
of docs/ (``formats.md#anchor``) becomes that page's address, a link into the rest of the
source tree its text. Headings get ids (GitHub's way: lowercase, spaces as hyphens) so
that the anchors the docs link to work.
"""

import re
from pathlib import Path

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.safestring import mark_safe
from markdown_it.token import Token

from core import markdown

_MD = markdown.parser()
_DOC_LINK = re.compile(r"^(?:\./)?(?:docs/)?([a-z0-9-]+)\.md(#[-\w]*)?$")
_KEPT = ("http://", "https://", "mailto:", "#")


def docs_dir() -> Path:
    return Path(settings.BASE_DIR) / "docs"


def doc_pages() -> list[str]:
    """The names of the pages (docs/NAME.md)."""
    return sorted(p.stem for p in docs_dir().glob("*.md"))


def _slug(text: str) -> str:
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def _rewrite(tokens: list[Token]) -> None:
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and index + 1 < len(tokens):
            token.attrSet("id", _slug(tokens[index + 1].content))
        if token.type != "inline" or not token.children:
            continue
        kept: list[Token] = []
        dropped = 0
        for child in token.children:
            if child.type == "link_open":
                href = str(child.attrGet("href") or "")
                match = _DOC_LINK.match(href)
                if match:
                    child.attrSet("href", reverse("doc", args=[match.group(1)]) + (match.group(2) or ""))
                elif not href.startswith(_KEPT):
                    dropped += 1
                    continue
            if child.type == "link_close" and dropped:
                dropped -= 1
                continue
            kept.append(child)
        token.children = kept


def doc_html(text: str) -> str:
    """A docs page as HTML, safe to put in a page as is (markdown-it escapes the text)."""
    tokens = _MD.parse(text)
    _rewrite(tokens)
    return markdown.render(_MD, tokens)


@login_required
def doc_page(request: HttpRequest, page: str) -> HttpResponse:
    if page not in doc_pages():
        raise Http404("no such page")
    text = (docs_dir() / f"{page}.md").read_text(encoding="utf-8")
    title = next((line.lstrip("# ").strip() for line in text.splitlines() if line.startswith("#")), page)
    body = mark_safe(doc_html(text))  # noqa: S308 -- raw HTML is off: markdown-it escapes every character
    return render(request, "core/doc_page.html", {"title": title, "body": body, "pages": doc_pages()})
