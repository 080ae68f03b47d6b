"""A curator opens a campaign's agreement page in headless Chromium and finds figures and charts."""

import pytest

from tests.annotation.agreement_data import campaign_with_votes

pytestmark = pytest.mark.django_db(transaction=True)

VOTES = [
    ["plausible", "plausible", "plausible", "implausible", "plausible"],
    ["implausible", "implausible", "plausible", "implausible", "implausible"],
    ["plausible", "implausible", "plausible", "implausible", "plausible"],
    ["plausible", "plausible", "plausible", "plausible", "plausible"],
]


def test_curator_finds_figures_and_charts_on_the_agreement_page(page, curator, django_user_model):
    campaign = campaign_with_votes(django_user_model, "browser-pl", "reason_plausibility", VOTES)
    page.goto(f"/annotation/campaigns/{campaign.name}/agreement/")
    # not logged in: the login page, which brings us back afterwards (so not the login
    # fixture, which starts at /accounts/login/)
    page.fill("input[name=username]", curator.get_username())
    page.fill("input[name=password]", f"pw-{curator.get_username()}")
    page.click("button[type=submit]")
    page.wait_for_url(f"**/annotation/campaigns/{campaign.name}/agreement/")

    assert page.locator("h1").inner_text() == f"Agreement: {campaign.name}"
    kappa = page.locator('tr[data-figure="fleiss_kappa"] .value').inner_text()
    float(kappa)  # a number, not "nan" or a dash
    pairwise = page.locator('tr[data-figure="pairwise_agreement"] .value').inner_text()
    assert pairwise.endswith("%") and 0.0 <= float(pairwise.rstrip("%")) <= 100.0
    assert "–" in page.locator('tr[data-figure="fleiss_kappa"] .interval').inner_text()  # an interval
    # on a phone the figures tables fit whole: no column hides behind a scroll
    page.set_viewport_size({"width": 390, "height": 844})
    tables = page.locator("table.figures")
    assert tables.count() >= 2
    for i in range(tables.count()):
        assert tables.nth(i).evaluate("t => t.scrollWidth - t.clientWidth") <= 0, i

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
