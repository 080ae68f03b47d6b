"""The run page, leaderboard and comparison, whose tables come from evaluation.analysis,
fit a phone: the results tables fit whole (an interval is a second line of its cell), the
download links stay on screen."""

import pytest
from django.urls import reverse

from evaluation.services import evaluation_run, evaluation_run_create
from tests.evaluation.factories import write_comve_release, write_winowhy_release, write_wsc_release

pytestmark = pytest.mark.django_db(transaction=True)


def test_result_pages_fit_a_phone_and_offer_their_tables_as_csv_and_json(
    page, login, researcher, tmp_path, settings
):
    settings.MEDIA_ROOT = tmp_path / "media"
    wsc = write_wsc_release(tmp_path / "wsc")
    a = evaluation_run(run=evaluation_run_create(release=str(wsc), method="first"))
    b = evaluation_run(run=evaluation_run_create(release=str(wsc), method="random", seed=1))
    w = evaluation_run(
        run=evaluation_run_create(release=str(write_winowhy_release(tmp_path / "w")), method="random")
    )
    c = evaluation_run(
        run=evaluation_run_create(release=str(write_comve_release(tmp_path / "c")), method="first")
    )
    login(page, researcher)
    urls = [
        reverse("evaluation:run-detail", args=[a.pk]),
        reverse("evaluation:run-detail", args=[w.pk]),
        reverse("evaluation:run-detail", args=[c.pk]),
        reverse("evaluation:leaderboard", args=[a.release_name, a.release_version]),
        reverse("evaluation:run-compare") + f"?a={a.pk}&b={b.pk}",
    ]
    for width, height in ((1366, 900), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        for url in urls:
            page.goto(url)
            assert page.evaluate("document.documentElement.scrollWidth") <= width, (url, width)
            links = page.locator("p.downloads a")
            assert links.all_inner_texts() == ["CSV", "JSON"], url
            box = links.first.bounding_box()
            assert box is not None and box["x"] + box["width"] <= width, url
            # the results tables fit a phone's width whole: no column hides behind a scroll
            tables = page.locator("table.figures, table.compare-items")
            assert tables.count() >= (0 if url == urls[2] else 1), url  # ComVE's figures are a list
            for i in range(tables.count()):
                overflow = tables.nth(i).evaluate("t => t.scrollWidth - t.clientWidth")
                assert overflow <= 0, (url, width, overflow)
