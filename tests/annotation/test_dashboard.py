"""The curator dashboard and the campaign list: progress, the agreement module's headline
figure, items awaiting review, in a bounded number of queries; time per item per annotator."""

from collections.abc import Callable
from typing import Any

import pytest
from django.urls import reverse

from annotation.agreement.services import campaign_agreement_summary
from annotation.models import AgreementHeadline, Campaign, CampaignItem, Judgment, Task
from annotation.selectors import campaign_annotators, campaign_overview
from annotation.services import (
    adjudication_record,
    assignment_next,
    campaign_aggregate,
    campaign_create,
    judgment_submit,
)
from tests.annotation.answering import answer_all
from tests.annotation.factories import campaign_for
from tests.datasets.factories import ReasonFactory, SchemaFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def sw(make_annotators):
    """Switchability, K = 3, four schemas: three fully judged (two split, one unanimous),
    one with a single judgment; aggregated, so the two split ones are flagged."""
    SchemaFactory.create_batch(4)
    campaign = campaign_create(name="sw", task="switchability", items="schemas", k=3)
    split: set[int] = set()

    def answer(item, i):
        # the first judgment of the first two items judged says no: those two are split
        if item.judgment_count == 0 and len(split) < 2:
            split.add(item.pk)
            return {"answer": "not_switchable"}
        return {"answer": "switchable"}

    answer_all(campaign, make_annotators(3), answer, limit=3)
    campaign_aggregate(campaign=campaign)
    return campaign


def test_dashboard_shows_progress_awaiting_review_and_links(client, curator, sw):
    items = CampaignItem.objects.filter(campaign=sw)
    judged = {i.pk: i.judgment_count for i in items}
    assert sorted(judged.values()) == [0, 3, 3, 3]  # three annotators, three items each
    flagged = list(items.filter(needs_review=True))
    assert len(flagged) == 2
    adjudication_record(item=flagged[0], curator=curator, decision="switchable")
    client.force_login(curator)
    response = client.get(reverse("annotation:dashboard"))
    assert response.status_code == 200
    (row,) = response.context["rows"]
    assert row.progress["judgments"] == 9 and row.progress["needed"] == 12
    assert row.progress["complete"] == 3 and row.progress["n"] == 4
    assert row.progress["flagged"] == 2 and row.progress["awaiting"] == 1
    assert row.progress["percent"] == 75
    html = response.content.decode()
    assert "9 / 12 judgments" in html and "3 of 4 items complete" in html
    assert f'href="{reverse("annotation:campaign-adjudicate", args=["sw"])}?show=awaiting">1</a>' in html
    assert "<strong>1</strong> item awaiting review" in html
    assert "not computed" in html and "Compute agreement" in html


def test_the_agreement_is_the_agreement_modules_headline_and_goes_stale(client, curator, sw, make_annotators):
    client.force_login(curator)
    response = client.post(reverse("annotation:campaign-agreement-compute", args=["sw"]), follow=True)
    assert "Agreement of sw computed on 9 judgments." in response.content.decode()
    headline = AgreementHeadline.objects.get(campaign=sw)
    figure = campaign_agreement_summary(campaign=sw)["figures"]["fleiss_kappa"]
    assert (headline.value, headline.ci_low, headline.ci_high) == (
        figure["value"],
        figure["ci_low"],
        figure["ci_high"],
    )
    assert headline.value is not None and headline.ci_low is not None
    html = client.get(reverse("annotation:dashboard")).content.decode()
    assert f"κ {headline.value:.4f}" in html and f"{headline.ci_low:.4f}–{headline.ci_high:.4f}" in html
    assert "<strong>out of date</strong>" not in html
    # one more judgment: the figure is marked out of date until computed again
    answer_all(sw, make_annotators(1, prefix="late"), lambda item, i: {"answer": "switchable"}, limit=1)
    html = client.get(reverse("annotation:dashboard")).content.decode()
    assert "<strong>out of date</strong>" in html and "Compute agreement" in html
    # the agreement page keeps what it shows, so a visit brings the dashboard up to date
    client.get(reverse("agreement:detail", args=["sw"]))
    assert AgreementHeadline.objects.get(campaign=sw).judgments == 10
    assert "<strong>out of date</strong>" not in client.get(reverse("annotation:dashboard")).content.decode()


def test_a_free_text_campaign_has_no_agreement_figure(client, curator):
    campaign_for(Task.REASON_WRITING, name="rw", k=1)
    client.force_login(curator)
    response = client.post(reverse("annotation:campaign-agreement-compute", args=["rw"]), follow=True)
    assert "rw has written answers, not categories: no agreement figure." in response.content.decode()
    assert not AgreementHeadline.objects.exists()
    assert "written answers" in client.get(reverse("annotation:dashboard")).content.decode()


def test_the_campaign_list_has_progress_and_agreement_columns(client, curator, sw):
    client.force_login(curator)
    client.post(reverse("annotation:campaign-agreement-compute", args=["sw"]))
    html = client.get(reverse("annotation:campaign-list")).content.decode()
    assert "<th>Progress</th>" in html and "Agreement" in html
    assert "9 / 12 judgments" in html
    assert f"κ {AgreementHeadline.objects.get().value:.4f}" in html


def test_an_annotator_sees_the_list_without_curator_columns(client, annotator, sw):
    client.force_login(annotator)
    html = client.get(reverse("annotation:campaign-list")).content.decode()
    assert "<th>Progress</th>" not in html and "judgments" not in html


def _always(answer: str) -> Callable[[Any, int], dict[str, Any]]:
    return lambda item, i: {"answer": answer}


def _twenty_campaigns(make_annotators):
    SchemaFactory.create_batch(3)
    ReasonFactory.create_batch(2)
    annotators = make_annotators(2)
    for n in range(20):
        task, kind = ("switchability", "schemas") if n % 2 else ("knowledge_type", "reasons")
        campaign = campaign_create(name=f"c{n}", task=task, items=kind, k=2)
        if n % 3 == 0:
            answer_all(
                campaign,
                annotators,
                _always("switchable" if task == Task.SWITCHABILITY else "Object"),
                limit=1,
            )
        if n % 4 == 0:
            AgreementHeadline.objects.create(
                campaign=campaign,
                figure="fleiss_kappa",
                value=0.5,
                judgments=1,
                computed_at="2026-01-01T00:00Z",
            )


def test_the_dashboard_and_the_list_take_a_bounded_number_of_queries(
    client, curator, make_annotators, django_assert_max_num_queries
):
    _twenty_campaigns(make_annotators)
    client.force_login(curator)
    client.get(reverse("home"))  # the session and the roles read once
    with django_assert_max_num_queries(10):
        response = client.get(reverse("annotation:dashboard"))
    assert len(response.context["rows"]) == 20
    assert sum(r.progress["judgments"] for r in response.context["rows"]) == Judgment.objects.count() > 0
    with django_assert_max_num_queries(10):
        assert client.get(reverse("annotation:campaign-list")).status_code == 200
    with django_assert_max_num_queries(10):
        html = client.get(reverse("home")).content.decode()
    assert "Open the curator dashboard" in html
    with django_assert_max_num_queries(10):  # the API's list as the page's
        listed = client.get(reverse("annotation-api:campaign-list")).json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    assert len(rows) == 20
    assert sum(r["progress"]["judgments"] for r in rows) == Judgment.objects.count()


def test_overview_progress_matches_each_campaigns_own_figures(curator, make_annotators):
    _twenty_campaigns(make_annotators)
    rows = campaign_overview(user=curator)
    assert [r.campaign.name for r in rows] == list(Campaign.objects.values_list("name", flat=True))
    for row in rows:
        c = row.campaign
        items = CampaignItem.objects.filter(campaign=c, is_gold=False)
        assert row.progress["judgments"] == Judgment.objects.filter(campaign_item__campaign=c).count()
        assert row.progress["needed"] == items.count() * c.judgments_per_item
        assert row.progress["complete"] == items.filter(judgment_count__gte=c.judgments_per_item).count()
        assert (row.agreement is not None) == (int(c.name[1:]) % 4 == 0)


@pytest.mark.parametrize("role", ["researcher", "nobody", "annotator"])
def test_only_curators_see_the_dashboard_or_compute_agreement(client, role, request, sw):
    client.force_login(request.getfixturevalue(role))
    assert client.get(reverse("annotation:dashboard")).status_code == 403
    assert client.post(reverse("annotation:campaign-agreement-compute", args=["sw"])).status_code == 403
    assert not AgreementHeadline.objects.exists()
    assert "Dashboard</a>" not in client.get(reverse("home")).content.decode()


def test_time_per_item_is_the_median_and_mean_of_recorded_durations(client, curator, make_annotators):
    SchemaFactory.create_batch(4)
    campaign = campaign_create(name="sw", task="switchability", items="schemas", k=2)
    fast, slow = make_annotators(2)
    plan: dict[Any, list[int | None]] = {fast: [1000, 3000, 8000, None], slow: [20000, 31000]}
    for user, durations in plan.items():
        for ms in durations:
            lease = assignment_next(campaign=campaign, annotator=user)
            judgment = judgment_submit(annotator=user, assignment=lease, answer="switchable").judgment
            # the recorded time, set exactly (None: a judgment with no time recorded)
            Judgment.objects.filter(pk=judgment.pk).update(duration_ms=ms)
    rows = {r["username"]: r for r in campaign_annotators(campaign=campaign)}
    assert rows[fast.username]["timed"] == 3 and rows[fast.username]["judgments"] == 4
    assert rows[fast.username]["median_seconds"] == pytest.approx(3.0)
    assert rows[fast.username]["mean_seconds"] == pytest.approx(4.0)
    assert rows[slow.username]["median_seconds"] == pytest.approx(25.5)
    assert rows[slow.username]["mean_seconds"] == pytest.approx(25.5)
    client.force_login(curator)
    html = client.get(reverse("annotation:campaign-detail", args=["sw"])).content.decode()
    assert "Seconds per item" in html
    assert '"median-seconds">3.0<' in html and '"mean-seconds">4.0<span class="interval">3 timed' in html
    assert '"median-seconds">25.5<' in html
