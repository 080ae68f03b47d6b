"""The annotator flow as an API, and its place in the OpenAPI schema."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Judgment, Task
from annotation.services import campaign_annotator_pause, campaign_create
from tests.annotation.factories import campaign_for
from tests.datasets.factories import SchemaFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign():
    return campaign_for(Task.SWITCHABILITY, name="sw", items=2, k=1)


@pytest.fixture
def api():
    return APIClient()


def test_next_submit_progress(api, annotator, campaign):
    api.force_authenticate(annotator)
    nxt = api.post(reverse("annotation-api:next", args=["sw"]))
    assert nxt.status_code == 200
    body = nxt.json()
    assert body["task"] == Task.SWITCHABILITY and body["item"]["switched"]
    assert [c["key"] for c in body["choices"]] == ["y", "n"]
    submit = reverse("annotation-api:submit", args=[body["assignment"]])
    first = api.post(submit, {"answer": "switchable", "duration_ms": 900}, format="json")
    again = api.post(submit, {"answer": "switchable", "duration_ms": 900}, format="json")
    assert first.status_code == again.status_code == 200
    assert first.json()["judgment"] == again.json()["judgment"]
    assert (first.json()["created"], again.json()["created"]) == (True, False)
    assert Judgment.objects.count() == 1
    progress = api.get(reverse("annotation-api:progress", args=["sw"])).json()
    assert progress == {"done": 1, "remaining": 1, "percent": 50, "paused": False}


def test_bad_answer_is_a_400_with_the_reason(api, annotator, campaign):
    api.force_authenticate(annotator)
    body = api.post(reverse("annotation-api:next", args=["sw"])).json()
    response = api.post(
        reverse("annotation-api:submit", args=[body["assignment"]]), {"answer": "x"}, format="json"
    )
    assert response.status_code == 400 and "answer: 'x'" in response.json()["detail"]


def test_comve_check_option_through_the_api(api, annotator):
    campaign_for(Task.COMVE_CHECK, name="cc")
    api.force_authenticate(annotator)
    body = api.post(reverse("annotation-api:next", args=["cc"])).json()
    assert "options" in body["item"] and "correct_option" not in str(body)
    response = api.post(
        reverse("annotation-api:submit", args=[body["assignment"]]),
        {"answer": "1", "option": "A"},
        format="json",
    )
    assert response.status_code == 200
    assert Judgment.objects.get().payload == {"option": "A"}


def test_nothing_left_and_paused(api, annotator, campaign):
    api.force_authenticate(annotator)
    for _ in range(2):
        body = api.post(reverse("annotation-api:next", args=["sw"])).json()
        api.post(
            reverse("annotation-api:submit", args=[body["assignment"]]),
            {"answer": "switchable"},
            format="json",
        )
    done = api.post(reverse("annotation-api:next", args=["sw"]))
    assert done.status_code == 200 and done.json()["assignment"] is None
    campaign_annotator_pause(campaign=campaign, annotator=annotator)
    paused = api.post(reverse("annotation-api:next", args=["sw"]))
    assert paused.status_code == 409 and "paused" in paused.json()["detail"]


@pytest.mark.parametrize("role", ["researcher", "nobody", "curator"])
def test_non_annotators_are_denied_every_endpoint(api, campaign, role, request, annotator):
    from annotation.services import assignment_next

    lease = assignment_next(campaign=campaign, annotator=annotator)
    assert lease is not None
    api.force_authenticate(request.getfixturevalue(role))
    assert api.post(reverse("annotation-api:next", args=["sw"])).status_code == 403
    assert api.get(reverse("annotation-api:progress", args=["sw"])).status_code == 403
    assert (
        api.post(reverse("annotation-api:submit", args=[lease.pk]), {"answer": "switchable"}).status_code
        == 403
    )
    assert api.post(reverse("annotation-api:skip", args=[lease.pk])).status_code == 403
    change = reverse("annotation-api:change", args=["sw", lease.campaign_item_id])
    assert api.post(change, {"answer": "switchable"}).status_code == 403
    assert not Judgment.objects.exists()
    lease.refresh_from_db()
    assert lease.status == "leased"


def test_anonymous_is_denied(api, campaign):
    assert api.post(reverse("annotation-api:next", args=["sw"])).status_code in (401, 403)
    assert api.get(reverse("annotation-api:progress", args=["sw"])).status_code in (401, 403)
    assert api.post(reverse("annotation-api:submit", args=[1])).status_code in (401, 403)


def test_another_annotators_assignment_is_a_404(api, annotator, annotator2, campaign):
    api.force_authenticate(annotator2)
    body = api.post(reverse("annotation-api:next", args=["sw"])).json()
    api.force_authenticate(annotator)
    response = api.post(reverse("annotation-api:submit", args=[body["assignment"]]), {"answer": "switchable"})
    assert response.status_code == 404
    assert not Judgment.objects.exists()


def test_endpoints_are_in_the_openapi_schema(api, annotator):
    api.force_authenticate(annotator)
    schema = api.get(reverse("api-schema"), {"format": "json"}).json()
    paths = schema["paths"]
    assert "/api/annotation/campaigns/{name}/next/" in paths
    assert "/api/annotation/campaigns/{name}/progress/" in paths
    assert "/api/annotation/assignments/{id}/submit/" in paths
    assert "/api/annotation/assignments/{id}/skip/" in paths
    assert "/api/annotation/campaigns/{name}/items/{item_id}/answer/" in paths


def test_skip_then_change_an_answer_as_the_page_does(api, annotator, annotator2, campaign):
    """Skip gives the item back (not handed to the same annotator again); change replaces
    the caller's own answer, kept as a revision, never a second judgment; an item the
    caller did not answer is a 404, someone else's too; an aggregated one a 409."""
    from annotation.models import Assignment, JudgmentRevision
    from annotation.services import campaign_aggregate

    api.force_authenticate(annotator)
    first = api.post(reverse("annotation-api:next", args=["sw"])).json()
    skip = api.post(reverse("annotation-api:skip", args=[first["assignment"]]))
    assert skip.status_code == 200 and skip.json()["status"] == "skipped"
    assert api.post(reverse("annotation-api:skip", args=[first["assignment"]])).status_code == 200  # repeat
    second = api.post(reverse("annotation-api:next", args=["sw"])).json()
    assert second["assignment"] != first["assignment"]
    submit = reverse("annotation-api:submit", args=[second["assignment"]])
    answered = api.post(submit, {"answer": "switchable"}, format="json").json()
    assert api.post(reverse("annotation-api:skip", args=[second["assignment"]])).status_code == 400
    assert (
        api.post(reverse("annotation-api:next", args=["sw"])).json()["assignment"] is None
    )  # skipped: not again

    change = reverse("annotation-api:change", args=["sw", answered["item"]])
    changed = api.post(change, {"answer": "not_switchable"}, format="json")
    assert changed.status_code == 200
    assert (changed.json()["changed"], changed.json()["revisions"], changed.json()["answer"]) == (
        True,
        1,
        "not_switchable",
    )
    assert Judgment.objects.get().answer == "not_switchable" and JudgmentRevision.objects.count() == 1
    bad = api.post(change, {"answer": "maybe"}, format="json")
    assert bad.status_code == 400 and Judgment.objects.get().answer == "not_switchable"
    skipped_item = Assignment.objects.get(pk=first["assignment"]).campaign_item_id
    assert (
        api.post(
            reverse("annotation-api:change", args=["sw", skipped_item]), {"answer": "switchable"}
        ).status_code
        == 404
    )
    api.force_authenticate(annotator2)
    assert api.post(change, {"answer": "switchable"}, format="json").status_code == 404
    campaign_aggregate(campaign=campaign)
    api.force_authenticate(annotator)
    locked = api.post(change, {"answer": "switchable"}, format="json")
    assert locked.status_code == 409 and Judgment.objects.get().answer == "not_switchable"


def test_an_expired_lease_on_a_full_item_is_a_409_with_the_reason(api, annotator, annotator2):
    from datetime import timedelta

    from django.utils import timezone

    from annotation.models import Assignment
    from annotation.services import assignment_next, judgment_submit

    SchemaFactory.create()
    campaign = campaign_create(name="one", task="switchability", items="schemas", k=1)
    api.force_authenticate(annotator)
    body = api.post(reverse("annotation-api:next", args=["one"])).json()
    Assignment.objects.filter(pk=body["assignment"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    other = assignment_next(campaign=campaign, annotator=annotator2)
    judgment_submit(annotator=annotator2, assignment=other, answer="switchable")
    response = api.post(reverse("annotation-api:submit", args=[body["assignment"]]), {"answer": "switchable"})
    assert response.status_code == 409 and "ran out" in response.json()["detail"]
    assert Judgment.objects.count() == 1
