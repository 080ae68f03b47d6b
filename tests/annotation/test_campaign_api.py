"""The curator's campaign API (issue 15): create (as the campaign form), list, watch
(progress and agreement), status, aggregate; for curators only, as the curator pages."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Campaign, CampaignAnnotator, CampaignStatus
from annotation.services import assignment_next, campaign_create, campaign_status_set, judgment_submit
from tests.datasets.factories import SchemaFactory
from tests.openapi import schema_paths_having

pytestmark = pytest.mark.django_db

CAMPAIGNS = reverse("annotation-api:campaign-list")


@pytest.fixture
def api():
    return APIClient()


@pytest.fixture
def campaign():
    SchemaFactory.create_batch(4)
    return campaign_create(name="sw", task="switchability", items="schemas", k=2)


def _judge(campaign, *annotators, answer="switchable"):
    """Each annotator answers every item of ``campaign`` once."""
    for annotator in annotators:
        while (assignment := assignment_next(campaign=campaign, annotator=annotator)) is not None:
            judgment_submit(annotator=annotator, assignment=assignment, answer=answer)


CURATOR_ENDPOINTS = [
    ("post", CAMPAIGNS),
    ("get", "/api/annotation/campaigns/sw/"),
    ("post", "/api/annotation/campaigns/sw/status/"),
    ("post", "/api/annotation/campaigns/sw/aggregate/"),
    ("post", "/api/annotation/campaigns/sw/annotators/{annotator}/pause/"),
]
CURATORS_ONLY = "Campaign management is for curators."
DENIED = [
    (method, url, role, CURATORS_ONLY)
    for method, url in CURATOR_ENDPOINTS
    for role in ("annotator", "researcher", "nobody")
] + [
    # the campaign list is the annotators' too, as its page
    ("get", CAMPAIGNS, role, "Campaigns are for annotators and curators.")
    for role in ("researcher", "nobody")
]


@pytest.fixture
def member(campaign, annotator2):
    """An annotator who has taken an item of ``sw`` (so the pause endpoint has someone to pause)."""
    assignment_next(campaign=campaign, annotator=annotator2)
    return annotator2


def _call(api, method, url, member):
    url = url.format(annotator=member.pk)
    if method == "post":
        data = {
            "name": "new",
            "task": "switchability",
            "items": "schemas",
            "status": "closed",
            "paused": True,
        }
        return api.post(url, data)
    return api.get(url)


@pytest.mark.parametrize(("method", "url"), [*CURATOR_ENDPOINTS, ("get", CAMPAIGNS)])
def test_anonymous_callers_are_refused_every_campaign_endpoint(api, member, method, url):
    response = _call(api, method, url, member)
    assert response.status_code in (401, 403)
    assert response.json()["detail"] == "Authentication credentials were not provided."


@pytest.mark.parametrize(("method", "url", "role", "reason"), DENIED)
def test_each_role_the_pages_refuse_is_refused_each_endpoint(api, request, member, method, url, role, reason):
    api.force_authenticate(request.getfixturevalue(role))
    response = _call(api, method, url, member)
    assert response.status_code == 403
    assert response.json()["detail"] == reason
    assert list(Campaign.objects.values_list("name", "status")) == [("sw", CampaignStatus.ACTIVE)]
    assert not CampaignAnnotator.objects.filter(paused=True).exists()


def test_every_campaign_endpoint_is_in_the_openapi_schema(api, curator):
    expected = {
        "/api/annotation/campaigns/": {"get", "post"},
        "/api/annotation/campaigns/{name}/": {"get"},
        "/api/annotation/campaigns/{name}/status/": {"post"},
        "/api/annotation/campaigns/{name}/aggregate/": {"post"},
        "/api/annotation/campaigns/{name}/annotators/{user_id}/pause/": {"post"},
    }
    paths = schema_paths_having(api, curator, expected)
    assert {"201", "400"} <= set(paths["/api/annotation/campaigns/"]["post"]["responses"])


def test_a_curator_creates_a_campaign_as_the_form_does(api, curator):
    schemas = SchemaFactory.create_batch(5)
    api.force_authenticate(curator)
    response = api.post(
        CAMPAIGNS,
        {
            "name": "sw-api",
            "task": "switchability",
            "items": "schemas",
            "ids": f"{schemas[0].pk}, {schemas[1].pk} {schemas[2].pk}",
            "k": 3,
            "lease_seconds": 300,
            "gold_rate": 0,
        },
        format="json",
    )
    assert response.status_code == 201
    body = response.json()
    campaign = Campaign.objects.get(name="sw-api")
    assert (
        campaign.created_by == curator and campaign.judgments_per_item == 3 and campaign.lease_seconds == 300
    )
    assert campaign.items.count() == 3
    assert body["progress"]["n"] == 3 and body["progress"]["needed"] == 9 and body["progress"]["percent"] == 0
    assert body["status"] == "active" and body["task_label"] == "Switchability (Trichelair et al.)"
    assert body["instructions"] == campaign.instructions and campaign.instructions  # the task's default
    assert response["Location"] == body["url"] and body["url"].endswith(
        reverse("annotation:campaign-detail", args=["sw-api"])
    )


@pytest.mark.parametrize(
    ("data", "errors"),
    [
        (
            {"name": "Has Spaces", "task": "switchability", "items": "schemas"},
            {"name": ["Enter a valid “slug” consisting of letters, numbers, underscores or hyphens."]},
        ),
        (
            {"name": "x", "task": "guessing", "items": "schemas"},
            {"task": ["Select a valid choice. guessing is not one of the available choices."]},
        ),
        ({"task": "switchability", "items": "schemas"}, {"name": ["This field is required."]}),
        (
            {"name": "x", "task": "switchability", "items": "schemas", "ids": "1, two"},
            {"ids": ["ids: 'two' is not a number"]},
        ),
        (
            {"name": "x", "task": "switchability", "items": "schemas", "k": 0},
            {"k": ["Ensure this value is greater than or equal to 1."]},
        ),
        (
            {"name": "x", "task": "switchability", "items": "schemas", "filters": "origin"},
            {"filters": ["filter 'origin': write field=value"]},
        ),
        # the service's refusals, as the page shows them above the form: the message names the field
        (
            {"name": "sw", "task": "switchability", "items": "schemas"},
            {"non_field_errors": ["name: a campaign called 'sw' exists already"]},
        ),
        (
            {"name": "x", "task": "switchability", "items": "reasons"},
            {"non_field_errors": ["items: Switchability works on schemas, not reasons"]},
        ),
    ],
)
def test_a_campaign_is_refused_in_the_forms_words_naming_the_field(api, curator, campaign, data, errors):
    api.force_authenticate(curator)
    response = api.post(CAMPAIGNS, data, format="json")
    assert response.status_code == 400
    assert response.json() == errors
    assert list(Campaign.objects.values_list("name", flat=True)) == ["sw"]


def test_a_curator_watches_progress_and_agreement(api, curator, campaign, annotator, annotator2):
    api.force_authenticate(curator)
    url = reverse("annotation-api:campaign-detail", args=["sw"])
    before = api.get(url).json()
    assert before["progress"]["judgments"] == 0 and before["progress"]["percent"] == 0
    assert before["agreement"]["judgments"] == 0
    _judge(campaign, annotator, answer="switchable")
    _judge(campaign, annotator2, answer="not_switchable")
    after = api.get(url).json()
    assert after["progress"] | {"gold_items": 0} == {
        "n": 4,
        "complete": 4,
        "started": 4,
        "flagged": 0,
        "awaiting": 0,
        "judgments": 8,
        "needed": 8,
        "percent": 100,
        "gold_items": 0,
        "skipped": 0,
    }
    agreement = after["agreement"]
    assert agreement["applicable"] is True
    assert (agreement["items_judged"], agreement["judgments"], agreement["annotators"]) == (4, 8, 2)
    assert agreement["figures"]["pairwise_agreement"]["value"] == 0.0  # the two never agree
    assert set(agreement["figures"]["fleiss_kappa"]) >= {"value", "ci_low", "ci_high", "undefined"}
    assert agreement["url"].endswith(reverse("agreement:detail", args=["sw"]))
    listed = api.get(CAMPAIGNS).json()
    assert [(c["name"], c["progress"]["percent"]) for c in listed["results"]] == [("sw", 100)]
    assert api.get(reverse("annotation-api:campaign-detail", args=["nope"])).status_code == 404


def test_a_closed_campaign_hands_out_nothing_until_it_is_opened_again(api, curator, campaign, annotator):
    api.force_authenticate(curator)
    url = reverse("annotation-api:campaign-status", args=["sw"])
    closed = api.post(url, {"status": "closed"}, format="json")
    assert closed.status_code == 200 and closed.json()["status"] == "closed"
    annotator_api = APIClient()
    annotator_api.force_authenticate(annotator)
    refused = annotator_api.post(reverse("annotation-api:next", args=["sw"]))
    assert refused.status_code == 404  # annotators see active campaigns only
    bad = api.post(url, {"status": "finished"}, format="json")
    assert bad.status_code == 400 and bad.json() == {"status": ['"finished" is not a valid choice.']}
    assert api.post(url, {"status": "active"}, format="json").json()["status"] == "active"
    assert annotator_api.post(reverse("annotation-api:next", args=["sw"])).json()["assignment"] is not None


def test_aggregation_labels_the_items_with_k_judgments(api, curator, campaign, annotator, annotator2):
    _judge(campaign, annotator, annotator2, answer="switchable")
    api.force_authenticate(curator)
    url = reverse("annotation-api:campaign-aggregate", args=["sw"])
    first = api.post(url).json()
    assert (first["items"], first["aggregated"], first["pending"]) == (4, 4, 0)
    assert first["labels"] == {"switchable": 4} and first["changed"] + first["created"] > 0
    again = api.post(url).json()
    assert (again["changed"], again["created"]) == (0, 0)  # nothing new to write


def test_a_curator_pauses_an_annotator_who_then_gets_no_items(api, curator, campaign, annotator, annotator2):
    _judge(campaign, annotator)
    api.force_authenticate(curator)
    (row,) = api.get(reverse("annotation-api:campaign-detail", args=["sw"])).json()["annotators"]
    assert row == {
        "id": annotator.pk,
        "username": "anna",
        "judgments": 4,
        "gold_accuracy": None,
        "paused": False,
    }
    url = reverse("annotation-api:annotator-pause", args=["sw", annotator.pk])
    paused = api.post(url, {"paused": True}, format="json")
    assert paused.status_code == 200 and paused.json() == row | {"paused": True}
    annotator_api = APIClient()
    annotator_api.force_authenticate(annotator)
    refused = annotator_api.post(reverse("annotation-api:next", args=["sw"]))
    assert refused.status_code == 409 and "paused" in refused.json()["detail"]
    assert api.post(url, {"paused": "maybe"}, format="json").json() == {
        "paused": ["Must be a valid boolean."]
    }
    assert api.post(url, {"paused": False}, format="json").json()["paused"] is False
    # someone who never worked on the campaign is not one of its annotators
    stranger = reverse("annotation-api:annotator-pause", args=["sw", annotator2.pk])
    assert api.post(stranger, {"paused": True}, format="json").status_code == 404


def test_annotators_list_the_campaigns_they_can_work_on_with_their_own_progress_only(
    api, campaign, annotator, annotator2
):
    _judge(campaign, annotator2)
    campaign_create(name="closed-one", task="switchability", items="schemas", k=1)

    campaign_status_set(campaign=Campaign.objects.get(name="closed-one"), status=CampaignStatus.CLOSED)
    api.force_authenticate(annotator)
    body = api.get(CAMPAIGNS).json()
    assert body["results"] == [
        {
            "name": "sw",
            "task": "switchability",
            "task_label": "Switchability (Trichelair et al.)",
            "status": "active",
            "mine": {"done": 0, "remaining": 4, "percent": 0, "paused": False},
        }
    ]  # no closed campaign, nobody else's judgments, no agreement
