"""Lower K for the items out of reach: the curator's action on the pipeline and dashboard
pages sets the stranded items' own K (``judgments_needed``), never below the judgments an
item already has, and those items are no longer out of reach."""

import re

import pytest
from django.urls import reverse

from annotation.models import CampaignItem, CampaignStatus
from annotation.pipelines.services import pipeline_create
from annotation.selectors import items_out_of_reach
from annotation.services import (
    CampaignError,
    assignment_next,
    assignment_skip,
    campaign_create,
    campaign_status_set,
    items_k_lower,
    judgment_submit,
)
from tests.annotation.test_task_types import TEMPLATE_SYNTAX
from tests.datasets.factories import SchemaFactory

pytestmark = pytest.mark.django_db


def _answer(campaign, annotator) -> None:
    lease = assignment_next(campaign=campaign, annotator=annotator)
    assert lease is not None
    judgment_submit(annotator=annotator, assignment=lease, answer="switchable")


def _skip(campaign, annotator) -> None:
    lease = assignment_next(campaign=campaign, annotator=annotator)
    assert lease is not None
    assignment_skip(annotator=annotator, assignment=lease)


def test_lowering_k_frees_the_stranded_items_and_never_goes_below_their_judgments(make_annotators):
    people = make_annotators(3)
    SchemaFactory.create_batch(2)
    campaign = campaign_create(name="sw", task="switchability", items="schemas", k=3)
    first, second = CampaignItem.objects.filter(campaign=campaign).order_by("pk")
    # the first item two judgments and a skip: three annotators, K = 3, out of reach
    for person in people[:2]:
        _answer(campaign, person)
    item = CampaignItem.objects.get(judgment_count=2)
    _skip(campaign, people[2])
    reach = items_out_of_reach(campaign=campaign)
    assert reach.item_ids == [item.pk] and reach.reachable == 2
    for k, refusal in (
        (
            1,
            rf"K = 1 is below the judgments some items already have \(item {item.pk} has 2\): choose at least 2",
        ),
        (0, "at least one judgment"),
        (4, "not lower than the campaign's K = 3"),
    ):
        with pytest.raises(CampaignError, match=refusal):
            items_k_lower(campaign=campaign, item_ids=reach.item_ids, k=k)
    other = campaign_create(name="other", task="switchability", items="schemas", k=1)
    stranger = CampaignItem.objects.filter(campaign=other).first()
    assert stranger is not None
    with pytest.raises(CampaignError, match=f"Not regular items of sw: {stranger.pk}"):
        items_k_lower(campaign=campaign, item_ids=[item.pk, stranger.pk], k=2)
    assert not CampaignItem.objects.exclude(judgments_needed=None).exists()  # nothing written

    assert items_k_lower(campaign=campaign, item_ids=reach.item_ids, k=2) == 1
    item.refresh_from_db()
    assert item.judgments_needed == 2
    assert CampaignItem.objects.get(pk=(second if item == first else first).pk).judgments_needed is None
    assert not items_out_of_reach(campaign=campaign)

    campaign_status_set(campaign=campaign, status=CampaignStatus.CLOSED)
    with pytest.raises(CampaignError, match="closed"):
        items_k_lower(campaign=campaign, item_ids=reach.item_ids, k=2)


def test_the_pipeline_and_dashboard_pages_lower_k_for_the_items_out_of_reach(
    client, curator, make_annotators
):
    SchemaFactory.create(collection="mine", external_id="q-1")
    people = make_annotators(2)
    pipeline_create(curator=curator, kind="winowhy", collection="mine", name="p", k={"writing": 2})
    writing = CampaignItem.objects.get(campaign__name="p-writing").campaign
    _skip(writing, people[0])
    client.force_login(curator)
    detail = reverse("annotation:pipeline-detail", args=["p"])
    html = client.get(detail).content.decode()
    assert "Add annotators</a> (with the annotator role), lower K for these items, or" in html
    form = re.search(r'<form method="post" action="([^"]+)" class="lower-k" data-campaign="p-writing">', html)
    assert form and form.group(1) == reverse("annotation:campaign-lower-k", args=["p-writing"])
    assert 'name="k" min="1" max="2" value="1"' in html  # what the item can still reach
    dashboard = client.get(reverse("annotation:dashboard")).content.decode()
    assert 'class="lower-k" data-campaign="p-writing"' in dashboard
    for shown in (html, dashboard):
        assert [token for token in TEMPLATE_SYNTAX if token in shown] == []  # no leaked markup

    # a K the item cannot take is refused with the reason, back on the page it came from
    response = client.post(form.group(1), {"k": "3", "next": detail}, follow=True)
    assert response.redirect_chain[-1][0] == detail
    assert "K = 3 is not lower than the campaign&#x27;s K = 2." in response.content.decode()
    response = client.post(form.group(1), {"k": "1", "next": "https://elsewhere.example/"})
    assert response["Location"] == reverse("annotation:dashboard")  # never off the site
    item = CampaignItem.objects.get(campaign=writing)
    assert item.judgments_needed == 1
    html = client.get(detail).content.decode()
    assert 'id="out-of-reach"' not in html
    response = client.post(form.group(1), {"k": "1", "next": detail}, follow=True)
    assert "No item of p-writing is out of reach now" in response.content.decode()


def test_lowering_k_is_a_curators_action(client, annotator):
    SchemaFactory.create()
    campaign_create(name="sw", task="switchability", items="schemas", k=2)
    client.force_login(annotator)
    response = client.post(reverse("annotation:campaign-lower-k", args=["sw"]), {"k": "1"})
    assert response.status_code == 403
    assert not CampaignItem.objects.exclude(judgments_needed=None).exists()
