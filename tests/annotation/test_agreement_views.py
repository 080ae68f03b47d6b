"""Curator agreement pages and downloads; everyone else is turned away."""

import csv
import io
import json

import pytest
from django.urls import reverse

from annotation.models import CampaignItem, Judgment

from .agreement_data import campaign_with_votes

pytestmark = pytest.mark.django_db

VOTES = [
    ["plausible", "plausible", "plausible", "implausible", "plausible"],
    ["implausible", "implausible", "plausible", "implausible", "implausible"],
    ["plausible", "implausible", "plausible", "implausible", "plausible"],
]


@pytest.fixture
def campaign(django_user_model):
    return campaign_with_votes(django_user_model, "pl", "reason_plausibility", VOTES)


def _urls(name: str) -> list[str]:
    return [
        reverse("agreement:index"),
        reverse("agreement:detail", args=[name]),
        reverse("agreement:export", args=[name, "json"]),
        reverse("agreement:export", args=[name, "csv"]),
        reverse("agreement:chart-export", args=[name, "annotator-agreement", "csv"]),
        reverse("agreement:chart-export", args=[name, "plausibility-by-origin", "json"]),
        reverse("agreement:chart-export", args=[name, "cohen-pairs", "json"]),
    ]


@pytest.mark.parametrize("role", ["annotator", "researcher", "nobody"])
def test_only_curators_see_agreement_pages_and_downloads(client, campaign, role, request):
    client.force_login(request.getfixturevalue(role))
    for url in _urls(campaign.name):
        assert client.get(url).status_code == 403, url


def test_anonymous_visitors_are_sent_to_log_in(client, campaign):
    for url in _urls(campaign.name):
        response = client.get(url)
        assert response.status_code == 302 and reverse("login") in response["Location"], url


def test_curator_sees_figures_intervals_and_charts(client, curator, campaign):
    client.force_login(curator)
    for url in _urls(campaign.name):
        assert client.get(url).status_code == 200, url
    page = client.get(reverse("agreement:detail", args=[campaign.name])).content.decode()
    assert "Fleiss&#x27; kappa" in page or "Fleiss' kappa" in page
    assert 'data-figure="pairwise_agreement"' in page and "95% interval" in page
    assert 'data-chart="annotator-agreement"' in page and 'data-chart="plausibility-by-origin"' in page
    assert 'data-chart="knowledge-types"' not in page and "No chart: no knowledge types" in page
    assert "pl-rater-1" in page  # curators see who annotated


def test_summary_downloads_carry_the_same_figures(client, curator, campaign):
    client.force_login(curator)
    data = json.loads(client.get(reverse("agreement:export", args=[campaign.name, "json"])).content)
    rows = list(
        csv.DictReader(
            io.StringIO(client.get(reverse("agreement:export", args=[campaign.name, "csv"])).content.decode())
        )
    )
    kappa_row = next(r for r in rows if r["scope"] == "campaign" and r["figure"] == "fleiss_kappa")
    assert float(kappa_row["value"]) == pytest.approx(data["figures"]["fleiss_kappa"]["value"])
    assert float(kappa_row["ci_low"]) == pytest.approx(data["figures"]["fleiss_kappa"]["ci_low"])


def test_every_figure_on_the_page_is_a_row_of_the_figures_download(client, curator, campaign):
    """The per-answer table (shares among them) and the figures table come from the frame
    the CSV and JSON download, so each printed figure is a row of both."""
    client.force_login(curator)
    page = client.get(reverse("agreement:detail", args=[campaign.name])).content.decode()
    as_csv = list(
        csv.DictReader(
            io.StringIO(client.get(reverse("agreement:export", args=[campaign.name, "csv"])).content.decode())
        )
    )
    as_json = json.loads(client.get(reverse("agreement:export", args=[campaign.name, "json"])).content)
    assert [r["figure"] for r in as_csv] == [r["figure"] for r in as_json["rows"]]
    shares = {r["group"]: r for r in as_csv if r["scope"] == "answer" and r["figure"] == "share"}
    # 8 of 15 votes plausible, 7 implausible
    assert {k: (int(r["judgments"]), float(r["value"])) for k, r in shares.items()} == {
        "implausible": (7, pytest.approx(7 / 15)),
        "plausible": (8, pytest.approx(8 / 15)),
    }
    table = page[page.index('id="per-answer"') : page.index("</table>", page.index('id="per-answer"'))]
    assert '<td>Plausible</td><td class="num">8</td><td class="num">53.33%</td>' in table
    pairwise = next(
        r for r in as_json["rows"] if r["scope"] == "campaign" and r["figure"] == "pairwise_agreement"
    )
    row = page[page.index('data-figure="pairwise_agreement"') :]
    assert f'<span class="value">{pairwise["value"] * 100:.2f}%</span>' in row[: row.index("</tr>")]


def test_chart_csv_and_json_have_the_same_rows(client, curator, campaign):
    client.force_login(curator)
    args = [campaign.name, "annotator-agreement"]
    as_json = json.loads(client.get(reverse("agreement:chart-export", args=[*args, "json"])).content)
    response = client.get(reverse("agreement:chart-export", args=[*args, "csv"]))
    assert response["Content-Type"].startswith("text/csv")
    assert 'filename="pl-annotator-agreement.csv"' in response["Content-Disposition"]
    as_csv = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert (
        [r["annotator"] for r in as_csv]
        == [r["annotator"] for r in as_json["rows"]]
        == [
            "pl-rater-1",
            "pl-rater-2",
            "pl-rater-3",
            "pl-rater-4",
            "pl-rater-5",
        ]
    )
    assert [int(r["judgments"]) for r in as_csv] == [3, 3, 3, 3, 3]


def test_unknown_campaign_chart_or_format_is_404(client, curator, campaign):
    client.force_login(curator)
    assert client.get(reverse("agreement:detail", args=["nope"])).status_code == 404
    assert client.get(reverse("agreement:export", args=[campaign.name, "xml"])).status_code == 404
    assert (
        client.get(reverse("agreement:chart-export", args=[campaign.name, "pies", "csv"])).status_code == 404
    )


def _page_with_an_annotator_named(username, client, curator, campaign, django_user_model) -> str:
    """The campaign's agreement page, as the curator sees it, once ``username`` has answered."""
    evil = django_user_model.objects.create_user(username=username)
    item = CampaignItem.objects.filter(campaign=campaign).first()
    assert item is not None
    Judgment.objects.create(campaign_item=item, annotator=evil, answer="plausible")
    client.force_login(curator)
    return client.get(reverse("agreement:detail", args=[campaign.name])).content.decode()


def test_crowd_text_in_names_is_escaped_in_the_page_and_the_svg(client, curator, campaign, django_user_model):
    page = _page_with_an_annotator_named("<b>x</b>", client, curator, campaign, django_user_model)
    assert "<b>x</b>" not in page
    assert "&lt;b&gt;x&lt;/b&gt;" in page


def test_a_script_as_an_annotator_name_is_escaped_in_the_chart_and_kept_in_its_numbers(
    client, curator, campaign, django_user_model
):
    evil = "<script>alert(1)</script>"
    page = _page_with_an_annotator_named(evil, client, curator, campaign, django_user_model)
    assert evil not in page
    chart = page[page.index('data-chart="annotator-agreement"') :]
    chart = chart[: chart.index("</svg>")]
    assert 'data-label="&lt;script&gt;alert(1)&lt;/script&gt;"' in chart
    assert "<title>&lt;script&gt;alert(1)&lt;/script&gt;</title>" in chart  # the label under its bar
    numbers = client.get(
        reverse("agreement:chart-export", args=[campaign.name, "annotator-agreement", "csv"])
    )
    assert "<script>alert(1)</script>" in numbers.content.decode()  # a CSV download, as the data is


def test_free_text_campaign_page_says_why_there_are_no_figures(client, curator, django_user_model):
    from annotation.models import Campaign

    Campaign.objects.create(name="wr", task="reason_writing", judgments_per_item=5)
    client.force_login(curator)
    page = client.get(reverse("agreement:detail", args=["wr"])).content.decode()
    assert 'id="not-applicable"' in page and "free-text" in page
