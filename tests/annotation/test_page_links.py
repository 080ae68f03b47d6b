"""Every campaign page leads back to the campaign list."""

import pytest
from django.urls import reverse

from annotation.services import campaign_create
from tests.datasets.factories import SchemaFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("role", "url_name", "args"),
    [
        ("annotator", "annotation:campaign-annotate", ["sw"]),
        ("curator", "annotation:campaign-detail", ["sw"]),
        ("curator", "annotation:campaign-create", []),
    ],
)
def test_campaign_pages_link_back_to_the_campaign_list(client, request, role, url_name, args):
    SchemaFactory.create()
    campaign_create(name="sw", task="switchability", items="schemas", k=1)
    client.force_login(request.getfixturevalue(role))
    response = client.get(reverse(url_name, args=args))
    assert response.status_code == 200
    assert (
        f'class="crumbs"><a href="{reverse("annotation:campaign-list")}">Campaigns</a>'
        in response.content.decode()
    )


def test_curator_opens_a_campaign_from_its_name_in_the_list(client, curator):
    SchemaFactory.create()
    campaign_create(name="sw", task="switchability", items="schemas", k=1)
    client.force_login(curator)
    html = client.get(reverse("annotation:campaign-list")).content.decode()
    assert f'<a href="{reverse("annotation:campaign-detail", args=["sw"])}">sw</a>' in html
