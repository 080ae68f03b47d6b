"""Refused and missing pages keep the top bar, say why, and lead back home."""

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_a_page_the_role_may_not_open_says_so_with_a_way_back(client, researcher):
    client.force_login(researcher)
    response = client.get(reverse("agreement:index"))
    assert response.status_code == 403
    html = response.content.decode()
    assert "<title>Not allowed · Winnow</title>" in html
    assert "Agreement figures are for curators." in html
    assert f'href="{reverse("home")}"' in html
    assert 'class="topbar"' in html


def test_an_unknown_page_is_a_404_with_a_way_back(client, annotator):
    client.force_login(annotator)
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    html = response.content.decode()
    assert "<title>Not found · Winnow</title>" in html
    assert f'href="{reverse("home")}"' in html
