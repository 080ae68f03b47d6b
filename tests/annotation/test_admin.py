"""The annotation admin: curators see campaigns, items, leases, judgments and
adjudications; what the services own cannot be changed there."""

import pytest

from annotation.models import CampaignAnnotator, Judgment
from annotation.services import assignment_next, campaign_create, judgment_submit
from tests.datasets.factories import SchemaFactory

pytestmark = pytest.mark.django_db

PAGES = ["campaign", "campaignitem", "assignment", "judgment", "adjudication", "campaignannotator"]


@pytest.fixture
def judged(curator, annotator):
    curator.is_staff = True
    curator.save(update_fields=["is_staff"])
    SchemaFactory.create_batch(2, collection="adm")
    campaign = campaign_create(
        name="adm", task="switchability", items="schemas", filters={"collection": "adm"}, created_by=curator
    )
    lease = assignment_next(campaign=campaign, annotator=annotator)
    judgment_submit(annotator=annotator, assignment=lease, answer="switchable")
    return campaign


@pytest.mark.parametrize("page", PAGES)
def test_curators_see_every_annotation_list_annotators_do_not(client, curator, annotator, judged, page):
    client.force_login(curator)
    assert client.get(f"/admin/annotation/{page}/").status_code == 200
    annotator.is_staff = True  # even a staff annotator sees nothing here
    annotator.save(update_fields=["is_staff"])
    client.force_login(annotator)
    assert client.get(f"/admin/annotation/{page}/").status_code == 403


def test_judgments_cannot_be_added_changed_or_deleted_in_the_admin(admin_client, judged):
    judgment = Judgment.objects.get()
    assert admin_client.get("/admin/annotation/judgment/add/").status_code == 403
    response = admin_client.post(
        f"/admin/annotation/judgment/{judgment.pk}/change/", {"answer": "not_switchable"}
    )
    assert response.status_code == 403
    assert (
        admin_client.post(f"/admin/annotation/judgment/{judgment.pk}/delete/", {"post": "yes"}).status_code
        == 403
    )
    judgment.refresh_from_db()
    assert judgment.answer == "switchable"


def test_a_curator_pauses_an_annotator_from_the_admin(client, curator, annotator, judged):
    member = CampaignAnnotator.objects.get(campaign=judged, annotator=annotator)
    client.force_login(curator)
    response = client.post(f"/admin/annotation/campaignannotator/{member.pk}/change/", {"paused": "on"})
    assert response.status_code == 302, response.content[:500]
    member.refresh_from_db()
    assert member.paused is True
