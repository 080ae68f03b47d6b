"""Long unbroken text (a dataset card's lines, SHA-256 digests) wraps inside the page
instead of making it wider than the window."""

import pytest

from annotation.services import campaign_create
from tests.datasets.factories import SchemaFactory

pytestmark = pytest.mark.django_db(transaction=True)


def test_long_card_lines_and_digests_do_not_widen_the_page(page, live_server):
    page.set_viewport_size({"width": 1000, "height": 800})
    long_line = "| figure | " + "undefined (no item has at least two judgments) " * 40 + "|"
    digest = "a" * 64
    page.goto("/accounts/login/")  # same origin, so the stylesheet loads
    page.set_content(
        f"""<html><head><link rel="stylesheet" href="{live_server.url}/static/css/winnow.css"></head>
        <body><main><table><tr><td>README.md</td><td><code>{digest}{digest}</code></td></tr></table>
        <pre class="card">{long_line}</pre></main></body></html>""",
        wait_until="load",
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= 1000


def test_the_home_page_fits_a_phone_and_words_stay_whole(page, login, admin_user):
    SchemaFactory.create()
    campaign_create(name="a-campaign-with-a-long-name", task="switchability", items="schemas", k=1)
    admin_user.set_password("pw-admin")
    admin_user.save()
    page.set_viewport_size({"width": 390, "height": 800})
    login(page, admin_user, "pw-admin")
    page.goto("/")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    link = page.locator("main td a", has_text="Annotate")
    box = link.bounding_box()
    assert box is not None and box["height"] < 40  # one line, not broken letter by letter
