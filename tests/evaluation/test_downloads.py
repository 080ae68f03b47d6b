"""The tables of the run page, the leaderboard and the comparison as CSV and JSON: the same
frames as the pages, and only for researchers and curators."""

import csv
import io
import json

import pytest
from django.urls import reverse

from core.tables import frame_csv
from evaluation import selectors
from evaluation.analysis.items import ITEM_COMPARISON_COLUMNS
from evaluation.models import EvaluationRun
from evaluation.services import evaluation_run, evaluation_run_create
from tests.evaluation.factories import write_comve_release, write_winowhy_release

pytestmark = pytest.mark.django_db


def _download_urls(runs: tuple[EvaluationRun, EvaluationRun]) -> list[str]:
    a, b = runs
    urls = []
    for fmt in ("csv", "json"):
        urls += [
            reverse("evaluation:run-table", args=[a.pk, fmt]),
            reverse("evaluation:leaderboard-table", args=[a.release_name, a.release_version, fmt]),
            reverse("evaluation:run-compare-table", args=[fmt]) + f"?a={a.pk}&b={b.pk}",
        ]
    return urls


@pytest.mark.parametrize("role", ["annotator", "nobody"])
def test_annotators_and_users_without_a_role_are_denied_every_table_download(client, request, role, two_runs):
    client.force_login(request.getfixturevalue(role))
    for url in _download_urls(two_runs):
        assert client.get(url).status_code == 403, url


def test_anonymous_users_are_sent_to_login_from_every_table_download(client, two_runs):
    for url in _download_urls(two_runs):
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"], url


@pytest.mark.parametrize("role", ["researcher", "curator"])
def test_researchers_and_curators_download_every_table_as_an_attachment(client, request, role, two_runs):
    client.force_login(request.getfixturevalue(role))
    for url in _download_urls(two_runs):
        response = client.get(url)
        assert response.status_code == 200, url
        assert response["Content-Disposition"].startswith("attachment; filename=")
        fmt = url.split("?")[0].rsplit(".", 1)[1]
        assert response["Content-Type"].startswith("text/csv" if fmt == "csv" else "application/json")


def test_the_run_table_download_is_the_frame_the_page_shows_and_equals_results_json(
    client, researcher, two_runs
):
    run = two_runs[0]
    client.force_login(researcher)
    page = client.get(reverse("evaluation:run-detail", args=[run.pk])).content.decode()
    for fmt in ("csv", "json"):
        assert reverse("evaluation:run-table", args=[run.pk, fmt]) in page
    text = client.get(reverse("evaluation:run-table", args=[run.pk, "csv"])).content.decode()
    assert text == frame_csv(selectors.run_table(run=run), index=True)
    rows = {r["key"]: r for r in csv.DictReader(io.StringIO(text))}
    assert rows["all"]["n"] == str(run.metrics["all"]["n"])
    assert float(rows["all"]["accuracy"]) == run.metrics["all"]["accuracy"]
    assert float(rows["consistency"]["accuracy"]) == run.metrics["switchable"]["consistency"]
    body = json.loads(client.get(reverse("evaluation:run-table", args=[run.pk, "json"])).content)
    assert body["run"] == run.pk and body["dataset"] == "wsc" and body["columns"][0] == "key"
    by_key = {r["key"]: r for r in body["rows"]}
    assert by_key["all"]["correct"] == run.metrics["all"]["correct"]
    assert [by_key["all"]["wilson_low"], by_key["all"]["wilson_high"]] == run.metrics["significance"]["all"][
        "wilson_95"
    ]
    # every figure on the page is the table's
    assert f"{by_key['switchable_after']['accuracy']:.4f}" in page


def test_the_leaderboard_download_ranks_the_runs_with_every_charted_figure(client, researcher, two_runs):
    first, other = two_runs
    client.force_login(researcher)
    url = reverse("evaluation:leaderboard-table", args=[first.release_name, first.release_version, "json"])
    body = json.loads(client.get(url).content)
    assert body["release"] == f"{first.release_name}@{first.release_version}"
    assert [r["run"] for r in body["rows"]] == [
        r.pk for r in sorted(two_runs, key=lambda r: (-r.metrics["all"]["accuracy"], r.pk))
    ]
    assert {"rank", "label", "accuracy", "lucky_draw", "unswitched", "switched", "consistency"} <= set(
        body["columns"]
    )
    assert any(c.startswith("type:") for c in body["columns"])
    page = client.get(reverse("evaluation:leaderboard", args=[first.release_name, first.release_version]))
    assert url.encode() in page.content
    text = client.get(url.replace(".json", ".csv")).content.decode()
    assert len(text.splitlines()) == 3 and text.startswith("rank,run,label,")


def test_the_comparison_download_has_every_shared_item_and_the_pages_mcnemar(client, researcher, two_runs):
    a, b = two_runs
    client.force_login(researcher)
    query = f"?a={a.pk}&b={b.pk}"
    body = json.loads(client.get(reverse("evaluation:run-compare-table", args=["json"]) + query).content)
    compared = selectors.run_compare(run_a=a, run_b=b, show="all")
    assert body["mcnemar"] == compared["mcnemar"] and (body["a"], body["b"]) == (a.pk, b.pk)
    assert len(body["rows"]) == 6 and body["filter"] == "all"
    assert [r["text"] for r in body["rows"]] == compared["items"]["text"].tolist()
    assert body["columns"] == ITEM_COMPARISON_COLUMNS
    text = client.get(reverse("evaluation:run-compare-table", args=["csv"]) + query).content.decode()
    assert len(list(csv.reader(io.StringIO(text)))) == 1 + 6
    page = client.get(reverse("evaluation:run-compare") + query).content.decode()
    # the page's download link carries its filter (by default the items where one run is right)
    assert (
        reverse("evaluation:run-compare-table", args=["csv"]) + f"?a={a.pk}&amp;b={b.pk}&amp;show=differ"
        in page
    )


def test_unknown_formats_unfinished_runs_and_missing_runs_are_not_found(client, researcher, two_runs):
    a, b = two_runs
    client.force_login(researcher)
    assert client.get(reverse("evaluation:run-table", args=[a.pk, "xml"])).status_code == 404
    assert client.get(reverse("evaluation:run-compare-table", args=["csv"])).status_code == 404
    assert (
        client.get(reverse("evaluation:run-compare-table", args=["csv"]) + f"?a={a.pk}&b=999").status_code
        == 404
    )
    queued = evaluation_run_create(release=f"{a.release_name}@{a.release_version}", method="first")
    response = client.get(reverse("evaluation:run-table", args=[queued.pk, "csv"]))
    assert response.status_code == 404 and b"has no results yet" in response.content


def test_a_run_whose_files_are_gone_shows_why_it_has_no_table(client, researcher, two_runs):
    run = two_runs[0]
    (run.predictions_file or pytest.fail("no predictions file")).unlink()
    client.force_login(researcher)
    page = client.get(reverse("evaluation:run-detail", args=[run.pk]))
    assert page.status_code == 200 and b"The run's tables cannot be read" in page.content
    assert client.get(reverse("evaluation:run-table", args=[run.pk, "csv"])).status_code == 404


def test_winowhy_and_comve_run_pages_show_their_tables(client, researcher, tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    winowhy = evaluation_run(
        run=evaluation_run_create(release=str(write_winowhy_release(tmp_path / "w")), method="random")
    )
    comve = evaluation_run(
        run=evaluation_run_create(release=str(write_comve_release(tmp_path / "c")), method="first")
    )
    client.force_login(researcher)
    html = client.get(reverse("evaluation:run-detail", args=[winowhy.pk])).content.decode()
    best = winowhy.metrics["best_threshold"]
    assert f"Best-threshold accuracy: {best['accuracy']:.4f} ({best['correct']}/{best['n']}" in html
    assert "<td>Property</td>" in html
    html = client.get(reverse("evaluation:run-detail", args=[comve.pk])).content.decode()
    a = comve.metrics["a"]
    assert f"Subtask A accuracy: {a['accuracy']:.4f} ({a['correct']}/{a['n']})" in html
    assert f"Subtask C: BLEU {comve.metrics['c']['bleu_percent']}" in html
    body = json.loads(client.get(reverse("evaluation:run-table", args=[comve.pk, "json"])).content)
    assert [r["key"] for r in body["rows"]] == ["a", "b", "c"]
    assert body["rows"][2]["bleu_percent"] == comve.metrics["c"]["bleu_percent"]
