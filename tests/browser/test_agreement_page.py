"""A curator opens a campaign's agreement page in headless Chromium and finds figures and charts."""

import os
import shutil

import pytest
from django.contrib.auth.models import Group

from config.roles import Role
from tests.annotation.agreement_data import campaign_with_votes

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # playwright's sync API runs an event loop
CHROMIUM = os.environ.get("WINNOW_CHROMIUM", "/usr/bin/chromium")
VOTES = [
    ["plausible", "plausible", "plausible", "implausible", "plausible"],
    ["implausible", "implausible", "plausible", "implausible", "implausible"],
    ["plausible", "implausible", "plausible", "implausible", "plausible"],
    ["plausible", "plausible", "plausible", "plausible", "plausible"],
]


@pytest.fixture
def browser_page():  # type: ignore[no-untyped-def]
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        message = f"Chromium not found at {CHROMIUM} (apt-get install chromium)"
        if os.environ.get("WINNOW_REQUIRE_SERVICES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        page = browser.new_page()
        page.set_default_timeout(30_000)
        yield page
        browser.close()


@pytest.fixture
def agreement_curator(django_user_model):  # type: ignore[no-untyped-def]
    user = django_user_model.objects.create_user(username="cora-browser", password="pw-cora-browser")
    user.groups.add(Group.objects.get_or_create(name=Role.CURATOR.value)[0])
    return user


def test_curator_finds_figures_and_charts_on_the_agreement_page(  # type: ignore[no-untyped-def]
    live_server, browser_page, agreement_curator, django_user_model
):
    campaign = campaign_with_votes(django_user_model, "browser-pl", "reason_plausibility", VOTES)
    page = browser_page
    page.goto(f"{live_server.url}/annotation/campaigns/{campaign.name}/agreement/")
    # not logged in: the login page, which brings us back afterwards
    page.fill("input[name=username]", "cora-browser")
    page.fill("input[name=password]", "pw-cora-browser")
    page.click("button[type=submit]")
    page.wait_for_url(f"**/annotation/campaigns/{campaign.name}/agreement/")

    assert page.locator("h1").inner_text() == f"Agreement: {campaign.name}"
    kappa = page.locator('tr[data-figure="fleiss_kappa"] td.value').inner_text()
    float(kappa)  # a number, not "nan" or a dash
    pairwise = page.locator('tr[data-figure="pairwise_agreement"] td.value').inner_text()
    assert pairwise.endswith("%") and 0.0 <= float(pairwise.rstrip("%")) <= 100.0
    assert "–" in page.locator('tr[data-figure="fleiss_kappa"] td').nth(2).inner_text()  # an interval

    chart = page.locator('svg[data-chart="annotator-agreement"]')
    assert chart.is_visible()
    assert chart.locator("rect.bar").count() == 5  # one bar per annotator
    box = chart.bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 100
    bars = page.locator('svg[data-chart="plausibility-by-origin"] rect.bar')
    assert bars.count() == 6  # scores 0.0 .. 1.0 for the one origin these items have

    with page.expect_download() as download_info:
        page.locator("#chart-annotator-agreement a", has_text="CSV").click()
    path = download_info.value.path()
    lines = open(path, encoding="utf-8").read().splitlines()
    assert lines[0].startswith("annotator,judgments") and len(lines) == 6
