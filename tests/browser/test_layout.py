"""Long unbroken text (a dataset card's lines, SHA-256 digests) wraps inside the page
instead of making it wider than the window."""

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def test_long_card_lines_and_digests_do_not_widen_the_page(page, live_server):
    page.set_viewport_size({"width": 1000, "height": 800})
    long_line = "| figure | " + "undefined (no item has at least two judgments) " * 40 + "|"
    digest = "a" * 64
    page.goto("/accounts/login/")  # same origin, so the stylesheet loads
    page.set_content(
        f"""<html><head><link rel="stylesheet" href="{live_server.url}/static/css/winnow.css"></head>
        <body><main><table><tr><td>README.md</td><td>{digest}{digest}</td></tr></table>
        <pre class="card">{long_line}</pre></main></body></html>""",
        wait_until="load",
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= 1000
