"""Docs pages and release cards write a table column's alignment as a class, never as the
inline style the content security policy refuses."""

import pytest

from core import markdown
from core.docs import doc_html
from releases.card_html import card_html

TABLE = "| name | left | centre | right |\n|---|:---|:---:|---:|\n| a | b | c | 1.5 |\n"


@pytest.mark.parametrize("to_html", [doc_html, card_html])
def test_aligned_columns_become_classes(to_html) -> None:
    html = to_html(TABLE)
    assert "style" not in html
    assert '<th class="align-left">left</th>' in html
    assert '<th class="align-center">centre</th>' in html
    assert '<td class="align-right">1.5</td>' in html
    assert "<th>name</th>" in html and "<td>a</td>" in html  # no alignment, no class


def test_only_alignment_styles_are_kept_as_classes() -> None:
    md = markdown.parser()
    tokens = md.parse(TABLE)
    cell = next(t for t in tokens if t.type == "td_open" and t.attrGet("style"))
    cell.attrSet("style", "color:red")  # not an alignment: dropped, not turned into a class
    html = markdown.render(md, tokens)
    assert "style" not in html and "color" not in html
