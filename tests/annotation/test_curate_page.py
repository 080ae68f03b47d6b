"""The curator's campaign page has one page: a page number past it is a 404, as on every
paged list (docs/operations.md), not the same page again (study integrity, item 9)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.services import campaign_create
from tests.datasets.factories import SchemaFactory

pytestmark = pytest.mark.django_db


def test_a_page_past_the_curator_campaign_page_is_not_found(client, curator):
    SchemaFactory.create_batch(3)
    campaign_create(name="one", task="associativity", items="schemas")
    client.force_login(curator)
    url = reverse("annotation:campaign-detail", args=["one"])
    assert client.get(url).status_code == 200
    assert client.get(url + "?page=1").status_code == 200
    assert client.get(url + "?page=x").status_code == 200  # not a number: the page, as elsewhere
    assert client.get(url + "?page=2").status_code == 404
    assert client.get(url + "?page=99999999999999999999").status_code == 404
