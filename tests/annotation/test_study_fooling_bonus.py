"""A study link's bonus per validated fooling item (adversarial writing, issue 27): set when
the link is opened (page and API), counted from the participant's adversarial items, added
to the payment report's bonus and to the lines for Prolific's bulk bonus box."""

from __future__ import annotations

import csv
import io
from decimal import Decimal

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.crowd import services as crowd
from annotation.crowd.selectors import participant_rows, payment_report
from annotation.errors import AnnotationError
from annotation.models import Campaign, StudyLink
from tests.evaluation.adversarial_factories import WRITING_TASK, make_item, make_participant, make_round


@pytest.fixture
def writer(db):
    """bob: a study-link participant (0.50 per validated fooling item, a curator's bonus of
    1.00) with two validated fooling items, one rejected, one validated that fooled nobody,
    one that fooled but waits for validators, and one retracted."""
    round_ = make_round("adv", 1, ("smollm2",))
    bob = make_participant("bob", reward="2.00", fooling_bonus="0.50", bonus="1.00")
    make_item(round_, bob.user, fooled=("smollm2",), validation="validated")
    make_item(round_, bob.user, fooled=("smollm2",), validation="validated")
    make_item(round_, bob.user, fooled=("smollm2",), validation="rejected")
    make_item(round_, bob.user, validation="validated")
    make_item(round_, bob.user, fooled=("smollm2",), validation="pending")
    make_item(round_, bob.user, status="retracted")
    return bob


def test_the_report_pays_the_bonus_per_validated_fooling_item_beside_the_curators(writer):
    campaign = writer.link.campaign
    (row,) = participant_rows(campaign=campaign)
    assert row["fooling_validated"] == 2 and row["fooling_bonus"] == Decimal("1.00")
    assert row["bonus"] == Decimal("1.00") and row["bonus_total"] == Decimal(
        "2.00"
    )  # the form's field stays the curator's
    header, rows = payment_report(campaign=campaign, kind="all")
    assert header is not None
    (line,) = [dict(zip(header, r, strict=True)) for r in rows]
    assert (line["fooling_validated"], line["fooling_bonus"], line["bonus"]) == ("2", "1.00", "2.00")
    assert payment_report(campaign=campaign, kind="prolific-bonus") == (None, [["PID-bob", "2.00"]])


def test_without_a_curators_bonus_the_fooling_items_alone_put_a_participant_in_the_bonus_lines(writer):
    writer.bonus = Decimal("0")
    writer.save()
    assert payment_report(campaign=writer.link.campaign, kind="prolific-bonus") == (
        None,
        [["PID-bob", "1.00"]],
    )
    StudyLink.objects.filter(pk=writer.link_id).update(fooling_bonus=Decimal("0"))
    assert payment_report(campaign=writer.link.campaign, kind="prolific-bonus") == (None, [])


def test_the_participants_page_and_its_download_show_it(client, curator, writer):
    client.force_login(curator)
    name = writer.link.campaign.name
    page = client.get(reverse("crowd:participants", args=[name])).content.decode()
    assert "for 2 validated fooling items: bonus 2.00" in page
    text = client.get(reverse("crowd:payment-report", args=[name, "all"])).content.decode()
    (line,) = list(csv.DictReader(io.StringIO(text)))
    assert line["bonus"] == "2.00" and line["fooling_bonus"] == "1.00"


@pytest.fixture
def campaign(db):
    return Campaign.objects.create(name="write", task=WRITING_TASK, judgments_per_item=1)


def test_a_curator_sets_the_rate_and_the_reward_on_the_page_and_in_the_api(client, curator, campaign):
    client.force_login(curator)
    response = client.post(
        reverse("crowd:links", args=[campaign.name]),
        {"platform": "prolific", "consent": "ok", "fooling_bonus": "0.25", "reward": "3.00"},
    )
    assert response.status_code in (200, 302)
    link = StudyLink.objects.get(campaign=campaign)
    assert (link.fooling_bonus, link.reward) == (Decimal("0.25"), Decimal("3.00"))
    api = APIClient()
    api.force_authenticate(curator)
    url = f"/api/annotation/campaigns/{campaign.name}/links/"
    created = api.post(url, {"platform": "link", "consent": "ok", "fooling_bonus": "0.10"}, format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["fooling_bonus"] == "0.10" and created.json()["reward"] is None
    refused = api.post(url, {"platform": "link", "consent": "ok", "fooling_bonus": "-1"}, format="json")
    assert refused.status_code == 400 and "fooling_bonus" in refused.json()
    assert StudyLink.objects.filter(campaign=campaign).count() == 2


def test_the_service_refuses_an_amount_out_of_range_and_writes_nothing(curator, campaign):
    refused = (("-0.5", None, "fooling bonus"), ("abc", None, "fooling bonus"), ("0", "5000", "reward"))
    for fooling_bonus, reward, named in refused:
        with pytest.raises(AnnotationError, match=named):
            crowd.study_link_create(
                campaign=campaign,
                platform="link",
                consent="ok",
                user=curator,
                fooling_bonus=fooling_bonus,
                reward=reward,
            )
    assert not StudyLink.objects.exists()
