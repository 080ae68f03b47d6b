"""The study links API (issue 14): open, list and close a campaign's links, read its
participants' figures, decide on payment; validated by the pages' forms, refused to every
role the pages refuse."""

import re

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.crowd import services as crowd
from annotation.models import Participant, PaymentDecision, StudyLink, StudyLinkStatus
from annotation.services import campaign_create
from tests.datasets.factories import SchemaFactory
from tests.openapi import schema_paths_having

pytestmark = pytest.mark.django_db

LINKS = "/api/annotation/campaigns/sw/links/"


@pytest.fixture
def api():
    return APIClient()


@pytest.fixture
def campaign():
    SchemaFactory.create_batch(4)
    gold = [SchemaFactory.create(switchable=True) for _ in range(2)]
    return campaign_create(
        name="sw", task="switchability", items="schemas", k=2, gold_ids=[g.pk for g in gold]
    )


@pytest.fixture
def link(campaign, curator):
    return crowd.study_link_create(
        campaign=campaign, platform="prolific", consent="ok", completion_code="DONE1", user=curator
    )


@pytest.fixture
def participant(link):
    """A participant who entered the link (from a browser of their own)."""
    from django.test import Client

    browser = Client()
    browser.post(crowd.study_link_path(link).split("?")[0] + "?PROLIFIC_PID=P-1&STUDY_ID=S&SESSION_ID=X")
    return Participant.objects.get(external_id="P-1")


ENDPOINTS = [
    ("get", LINKS),
    ("post", LINKS),
    ("post", LINKS + "{link}/close/"),
    ("get", "/api/annotation/campaigns/sw/participants/"),
    ("get", "/api/annotation/campaigns/sw/participants/report/all/"),
    ("post", "/api/annotation/campaigns/sw/participants/{participant}/decision/"),
]


def _call(api, method, url, link, participant):
    url = url.format(link=link.pk, participant=participant.pk)
    if method == "post":
        return api.post(url, {"platform": "link", "decision": "approve", "bonus": "1.00"})
    return api.get(url)


@pytest.mark.parametrize("role", ["annotator", "researcher", "nobody", "participant_user"])
@pytest.mark.parametrize(("method", "url"), ENDPOINTS)
def test_each_role_the_pages_refuse_is_refused_each_endpoint(
    api, request, link, participant, method, url, role
):
    user = participant.user if role == "participant_user" else request.getfixturevalue(role)
    api.force_authenticate(user)
    response = _call(api, method, url, link, participant)
    assert response.status_code == 403
    assert response.json()["detail"] == "Campaign management is for curators."
    assert StudyLink.objects.count() == 1 and link.status == StudyLinkStatus.OPEN
    assert Participant.objects.get().decision == PaymentDecision.PENDING
    # the page refuses them too
    from django.test import Client

    page = Client()
    page.force_login(user)
    assert page.get(reverse("crowd:links", args=["sw"])).status_code == 403


@pytest.mark.parametrize(("method", "url"), ENDPOINTS)
def test_anonymous_callers_are_refused(api, link, participant, method, url):
    assert _call(api, method, url, link, participant).status_code in (401, 403)


def test_every_study_endpoint_is_in_the_openapi_schema(api, curator):
    expected = {
        "/api/annotation/campaigns/{name}/links/": {"get", "post"},
        "/api/annotation/campaigns/{name}/links/{link_id}/close/": {"post"},
        "/api/annotation/campaigns/{name}/participants/": {"get"},
        "/api/annotation/campaigns/{name}/participants/report/{kind}/": {"get"},
        "/api/annotation/campaigns/{name}/participants/{participant_id}/decision/": {"post"},
    }
    paths = schema_paths_having(api, curator, expected)
    assert {"201", "400"} <= set(paths["/api/annotation/campaigns/{name}/links/"]["post"]["responses"])


def test_a_curator_opens_a_link_as_the_form_does_and_pastes_it(api, curator, campaign):
    api.force_authenticate(curator)
    response = api.post(
        LINKS,
        {"platform": "prolific", "batch_size": 10, "screening_items": 2, "pass_mark": 0.5, "min_seconds": 3},
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    link = StudyLink.objects.get()
    assert body["id"] == link.pk and response["Location"].endswith("/annotation/campaigns/sw/links/")
    assert body["paste"].startswith("http://testserver/study/")
    assert body["paste"].endswith(
        "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    )
    assert (link.batch_size, link.screening_items, link.pass_mark, link.min_seconds) == (10, 2, 0.5, 3)
    # fields left out take what the page's form shows: its consent text, no expiry, a made-up code
    assert "research data set" in link.consent and link.expires_at is None and link.completion_code
    assert link.gold_pause_after == 3  # the service's default
    listed = api.get(LINKS).json()
    assert [(x["id"], x["participants"], x["finished"]) for x in listed] == [(link.pk, 0, 0)]


@pytest.mark.parametrize(
    ("data", "errors"),
    [
        (
            {"platform": "myspace"},
            {"platform": ["Select a valid choice. myspace is not one of the available choices."]},
        ),
        (
            {"platform": "prolific", "screening_items": 5},
            {
                "screening_items": [
                    "5 asked, but the campaign has 2 gold items (add gold items when creating the campaign)"
                ]
            },
        ),
        (
            {"platform": "prolific", "pass_mark": 2},
            {"pass_mark": ["Ensure this value is less than or equal to 1."]},
        ),
        (
            {"platform": "link", "completion_code": "no spaces!"},
            {"completion_code": ["letters and digits only, at most 40"]},
        ),
        (
            {"platform": "link", "expires_at": "2001-01-01T00:00"},
            {"expires_at": ["the time has passed already"]},
        ),
    ],
)
def test_a_refused_link_is_named_in_the_forms_words_and_nothing_is_written(
    api, curator, campaign, data, errors
):
    api.force_authenticate(curator)
    response = api.post(LINKS, data, format="json")
    assert response.status_code == 400
    assert response.json() == errors
    assert not StudyLink.objects.exists()


def test_close_then_the_participants_and_a_decision(api, curator, link, participant):
    api.force_authenticate(curator)
    closed = api.post(f"{LINKS}{link.pk}/close/")
    assert closed.status_code == 200 and closed.json()["status"] == "closed"
    assert closed.json()["participants"] == 1
    link.refresh_from_db()
    assert link.status == StudyLinkStatus.CLOSED
    listing = api.get("/api/annotation/campaigns/sw/participants/").json()
    [row] = listing["participants"]
    assert (row["id"], row["link"], row["external_id"], row["study_id"]) == (
        participant.pk,
        link.pk,
        "P-1",
        "S",
    )
    assert row["decision"] == "pending" and row["items"] == 0
    assert set(listing["report_urls"]) == {"all", "prolific-approve", "prolific-bonus", "mturk"}
    url = f"/api/annotation/campaigns/sw/participants/{participant.pk}/decision/"
    # a rejection needs the reason the platform shows: named under note, nothing written
    refused = api.post(url, {"decision": "reject"}, format="json")
    assert refused.status_code == 400
    assert refused.json() == {"note": ["say why (the platform shows the reason to the participant)"]}
    assert Participant.objects.get().decision == PaymentDecision.PENDING
    decided = api.post(url, {"decision": "approve", "bonus": "0.50"}, format="json")
    assert decided.status_code == 200 and (decided.json()["decision"], decided.json()["bonus"]) == (
        "approve",
        "0.50",
    )
    # the payment report reads it
    report = api.get(listing["report_urls"]["prolific-bonus"])  # also through the API
    assert report.status_code == 200 and report.content.decode().strip() == "P-1,0.50"


def test_another_campaigns_link_or_participant_is_a_404(api, curator, link, participant):
    other = campaign_create(name="other", task="associativity", items="schemas", k=2)
    api.force_authenticate(curator)
    assert api.post(f"/api/annotation/campaigns/other/links/{link.pk}/close/").status_code == 404
    url = f"/api/annotation/campaigns/{other.name}/participants/{participant.pk}/decision/"
    assert api.post(url, {"decision": "approve"}, format="json").status_code == 404
    assert api.get("/api/annotation/campaigns/nope/links/").status_code == 404


def test_the_participants_page_and_api_read_in_a_fixed_number_of_queries(api, client, curator, link):
    """Twenty participants or two: the same queries (no query per participant or link)."""
    from django.test import Client

    def enter(first, last):
        for i in range(first, last):
            Client().post(crowd.study_link_path(link).split("?")[0] + f"?PROLIFIC_PID=Q{i}&SESSION_ID=s")

    def counts():
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        client.force_login(curator)
        api.force_authenticate(curator)
        out = []
        for call in (
            lambda: client.get(reverse("crowd:participants", args=["sw"])),
            lambda: client.get(reverse("crowd:links", args=["sw"])),
            lambda: api.get("/api/annotation/campaigns/sw/participants/"),
            lambda: api.get(LINKS),
        ):
            with CaptureQueriesContext(connection) as queries:
                assert call().status_code == 200
            out.append(len(queries))
        return out

    enter(0, 2)
    few = counts()
    enter(2, 20)
    for platform in ("mturk", "link"):  # more links too
        crowd.study_link_create(campaign=link.campaign, platform=platform, consent="ok", user=curator)
    assert Participant.objects.count() == 20
    assert counts() == few
    # and the counts are right: 20 on the first link, none on the others
    page = client.get(reverse("crowd:links", args=["sw"])).content.decode()
    assert re.findall(r'<td class="num">(\d+)</td>', page) == ["20", "0", "0", "0", "0", "0"]
    assert [(x["participants"], x["finished"]) for x in api.get(LINKS).json()] == [(20, 0), (0, 0), (0, 0)]
