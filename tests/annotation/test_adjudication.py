"""The adjudication page: each item in its context, votes in words, most disagreement first,
the filter and page kept after a decision, and a decision that takes effect at once."""

import numpy as np
import pytest
from django.urls import reverse

from annotation import views
from annotation.agreement.stats import item_disagreement
from annotation.models import Adjudication, CampaignItem, Judgment
from annotation.selectors import AdjudicationRow
from annotation.services import (
    adjudication_record,
    campaign_aggregate,
    campaign_create,
)
from datasets.models import Reason, Schema
from tests.annotation.answering import answer_all
from tests.datasets.factories import ComVEItemFactory, ReasonFactory, SchemaFactory

pytestmark = pytest.mark.django_db


def _adjudicate_url(name, **query):
    url = reverse("annotation:campaign-adjudicate", args=[name])
    return url + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


def test_item_disagreement_is_the_share_of_pairs_that_differ():
    table = np.array([[3, 0], [2, 1], [1, 1], [1, 0], [0, 0]])
    # 3-0: no pair differs; 2-1: 2 of 3 pairs; 1-1: the one pair; one vote or none: nothing to differ on
    assert item_disagreement(table).tolist() == pytest.approx([0.0, 2 / 3, 1.0, 0.0, 0.0])
    assert item_disagreement(np.zeros((0, 2))).tolist() == []


def test_items_are_ordered_by_disagreement_then_by_id(client, curator, make_annotators):
    reasons = ReasonFactory.create_batch(4)
    campaign = campaign_create(name="kt", task="knowledge_type", items="reasons", k=3)
    item_of = {i.reason_id: i.pk for i in campaign.items.all()}
    # reason 0: all agree; 1: all differ; 2: two of three; 3: all differ (ties with 1)
    plan = {
        reasons[0].pk: ("Property", "Property", "Property"),
        reasons[1].pk: ("Property", "Object", "Spatial"),
        reasons[2].pk: ("Property", "Property", "Object"),
        reasons[3].pk: ("Quantity", "Object", "Spatial"),
    }
    answer_all(campaign, make_annotators(3), lambda item, i: {"answer": plan[item.reason_id][i]})
    client.force_login(curator)
    page = client.get(_adjudicate_url("kt", show="all")).context["listing"]
    order = [row.item.pk for row in page.rows]
    expected = [item_of[reasons[n].pk] for n in (1, 3, 2, 0)]
    assert sorted(expected[:2]) == expected[:2]  # the tie broken by id
    assert order == expected
    assert [round(row.disagreement, 3) for row in page.rows] == [1.0, 1.0, 0.667, 0.0]


def test_a_reason_is_shown_with_its_sentence_pronoun_and_answer(client, curator, make_annotators):
    schema = SchemaFactory.create(
        text_before="The fish ate the worm.", pronoun="It", text_after="was hungry.", answer="A"
    )
    schema.candidate_a, schema.candidate_b = "the fish", "the worm"
    schema.save()
    ReasonFactory.create(schema=schema, text="the one who eats is the one who is hungry")
    campaign = campaign_create(name="pl", task="reason_plausibility", items="reasons", k=3)
    answer_all(campaign, make_annotators(3), lambda item, i: {"answer": "implausible" if i else "plausible"})
    client.force_login(curator)
    html = client.get(_adjudicate_url("pl", show="all")).content.decode()
    assert "The fish ate the worm. <mark>It</mark> was hungry." in html
    assert "“It” refers to the fish" in html
    assert "the one who eats is the one who is hungry" in html
    assert "Not plausible: 2 votes" in html and "Plausible: 1 vote<" in html


def test_comve_votes_and_options_are_in_words(client, curator, make_annotators):
    ComVEItemFactory.create()
    campaign = campaign_create(name="cc", task="comve_check", items="comve", k=3)
    answer_all(
        campaign,
        make_annotators(3),
        lambda item, i: {"answer": "0" if i < 2 else "1", "payload": {"option": "C" if i < 2 else "A"}},
    )
    client.force_login(curator)
    html = client.get(_adjudicate_url("cc", show="all")).content.decode()
    assert "Statement 1, reason C: 2 votes" in html
    assert "Statement 2, reason A: 1 vote" in html
    assert "0:C" not in html.split('id="items"')[1].replace('data-key="0:C"', "")
    assert (
        "An elephant is much bigger than a fridge." in html and "statement 2 is against common sense" in html
    )
    assert html.count("✓ the answer") == 2  # the statement against sense and the right reason


def test_the_filter_and_page_are_kept_after_a_decision(client, curator, make_annotators, monkeypatch):
    monkeypatch.setattr(views, "ITEMS_PER_PAGE", 1)
    SchemaFactory.create_batch(3)
    campaign = campaign_create(name="sw", task="switchability", items="schemas", k=3)
    answer_all(
        campaign, make_annotators(3), lambda item, i: {"answer": "not_switchable" if i == 0 else "switchable"}
    )
    campaign_aggregate(campaign=campaign)
    assert campaign.items.filter(needs_review=True).count() == 3
    client.force_login(curator)
    first, second, third = (row.item for row in _listing(client, "flagged"))
    # on page 2 of the flagged items: back to page 2 of the flagged items
    response = client.post(
        reverse("annotation:item-adjudicate", args=["sw", second.pk]),
        {"decision": "switchable", "show": "flagged", "page": "2"},
    )
    assert response.status_code == 302
    assert response["Location"] == _adjudicate_url("sw", show="flagged", page=2)
    # awaiting review: the decided item leaves the list; page 3 no longer exists, so page 2
    response = client.post(
        reverse("annotation:item-adjudicate", args=["sw", third.pk]),
        {"decision": "not_switchable", "show": "awaiting", "page": "3"},
    )
    assert response["Location"] == _adjudicate_url("sw", show="awaiting", page=1)
    page = client.get(response["Location"]).context["listing"]
    assert [row.item.pk for row in page.rows] == [first.pk] and page.total == 1
    # a bad filter or page in the form falls back to the defaults, never to another site
    response = client.post(
        reverse("annotation:item-adjudicate", args=["sw", first.pk]),
        {"decision": "switchable", "show": "https://evil.example/", "page": "x"},
    )
    assert response["Location"] == _adjudicate_url("sw", show="awaiting", page=1)


def _listing(client, show):
    # ITEMS_PER_PAGE is 1 in the caller: read every page
    rows: list[AdjudicationRow] = []
    page = 1
    while True:
        response = client.get(_adjudicate_url("sw", show=show, page=page))
        if response.status_code == 404:
            return rows
        rows += response.context["listing"].rows
        page += 1


def test_a_decision_takes_effect_at_once_and_counts_no_vote_twice(client, curator, make_annotators):
    schema = SchemaFactory.create()
    campaign = campaign_create(name="sw", task="switchability", items="schemas", k=3)
    answer_all(
        campaign, make_annotators(3), lambda item, i: {"answer": "not_switchable" if i == 0 else "switchable"}
    )
    campaign_aggregate(campaign=campaign)
    schema.refresh_from_db()
    assert schema.switchable is False  # not unanimous
    item = campaign.items.get()
    client.force_login(curator)
    response = client.post(
        reverse("annotation:item-adjudicate", args=["sw", item.pk]),
        {"decision": "switchable", "note": "annotator 0 misread", "show": "flagged", "page": "1"},
        follow=True,
    )
    assert "“Switchable” recorded beside its votes and applied now" in response.content.decode()
    schema.refresh_from_db()
    item.refresh_from_db()
    assert schema.switchable is True  # no aggregation run needed
    assert item.aggregate["adjudication"] == "switchable" and item.aggregate["outcome"] == "switchable"
    assert item.aggregate["votes"] == {"not_switchable": 1, "switchable": 2} and item.aggregate["n"] == 3
    assert Judgment.objects.filter(campaign_item=item).count() == 3
    # the next aggregation finds everything as the decision left it
    summary = campaign_aggregate(campaign=campaign)
    assert summary.changed == 0 and summary.labels == {"switchable": 1}
    # a later decision overrides the earlier one, at once as well
    result = adjudication_record(item=item, curator=curator, decision="not_switchable")
    schema.refresh_from_db()
    assert result.applied and schema.switchable is False
    assert campaign_aggregate(campaign=campaign).changed == 0


def test_a_decision_on_knowledge_types_leaves_the_campaign_step_as_aggregation_would(
    curator, make_annotators
):
    reasons = ReasonFactory.create_batch(2)
    campaign = campaign_create(name="kt", task="knowledge_type", items="reasons", k=3)
    answer_all(campaign, make_annotators(3), lambda item, i: {"answer": ("Property", "Object", "Object")[i]})
    campaign_aggregate(campaign=campaign)
    item = campaign.items.get(reason=reasons[0])
    result = adjudication_record(item=item, curator=curator, decision="Spatial")
    assert result.applied and result.label == "Spatial"
    assert Reason.objects.get(pk=reasons[0].pk).knowledge_type == "Spatial"
    assert Reason.objects.get(pk=reasons[1].pk).knowledge_type == "Object"
    before = list(Schema.objects.order_by("pk").values_list("knowledge_types", flat=True))
    assert campaign_aggregate(campaign=campaign).changed == 0
    assert list(Schema.objects.order_by("pk").values_list("knowledge_types", flat=True)) == before


def test_a_decision_on_an_item_short_of_judgments_says_when_it_takes_effect(client, curator, make_annotators):
    schema = SchemaFactory.create()
    campaign = campaign_create(name="sw", task="switchability", items="schemas", k=3)
    answer_all(campaign, make_annotators(2), lambda item, i: {"answer": "switchable"})
    item = campaign.items.get()
    client.force_login(curator)
    response = client.post(
        reverse("annotation:item-adjudicate", args=["sw", item.pk]),
        {"decision": "not_switchable", "show": "all"},
        follow=True,
    )
    html = response.content.decode()
    assert (
        "The item has 2 of 3 judgments, so the decision takes effect when the campaign is aggregated" in html
    )
    schema.refresh_from_db()
    item.refresh_from_db()
    assert schema.switchable is None and item.aggregate == {}
    assert Adjudication.objects.get().decision == "not_switchable"
    # the third judgment and the aggregation: the decision counts
    answer_all(campaign, make_annotators(1, prefix="late"), lambda item, i: {"answer": "switchable"})
    campaign_aggregate(campaign=campaign)
    schema.refresh_from_db()
    assert schema.switchable is False


def test_an_unknown_decision_is_refused_in_words_and_changes_nothing(client, curator, make_annotators):
    schema = SchemaFactory.create()
    campaign = campaign_create(name="sw", task="switchability", items="schemas", k=1)
    answer_all(campaign, make_annotators(1), lambda item, i: {"answer": "switchable"})
    client.force_login(curator)
    item = campaign.items.get()
    response = client.post(
        reverse("annotation:item-adjudicate", args=["sw", item.pk]),
        {"decision": "perhaps", "show": "all"},
        follow=True,
    )
    assert (
        f"Item {item.pk}: decision: &#x27;perhaps&#x27; is not one of this task&#x27;s decisions (Switchable, Not switchable)"
        in (response.content.decode())
    )
    assert not Adjudication.objects.exists()
    schema.refresh_from_db()
    assert schema.switchable is None


@pytest.mark.parametrize("role", ["researcher", "nobody", "annotator"])
def test_only_curators_may_adjudicate(client, role, request):
    SchemaFactory.create()
    campaign = campaign_create(name="sw", task="switchability", items="schemas", k=1)
    client.force_login(request.getfixturevalue(role))
    assert client.get(_adjudicate_url("sw")).status_code == 403
    item = campaign.items.get()
    response = client.post(
        reverse("annotation:item-adjudicate", args=["sw", item.pk]), {"decision": "switchable"}
    )
    assert response.status_code == 403
    assert not Adjudication.objects.exists()


def test_the_page_lists_each_item_once_with_a_button_per_decision(client, curator):
    SchemaFactory.create_batch(2)
    campaign_create(name="sw", task="switchability", items="schemas", k=3)
    client.force_login(curator)
    html = client.get(_adjudicate_url("sw", show="all")).content.decode()
    for item in CampaignItem.objects.all():
        assert html.count(f'id="item-{item.pk}"') == 1
    assert html.count('name="decision" value="switchable">Switchable</button>') == 2
    assert "at once (the item is aggregated again and its label follows the decision)" in html
