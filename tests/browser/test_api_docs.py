"""The API documentation page works without reaching any outside server: Swagger UI's
files come from Winnow's own static files."""

import re

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db(transaction=True)


def test_api_docs_load_only_local_assets(client, researcher):
    client.force_login(researcher)
    html = client.get(reverse("api-docs")).content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert any("swagger-ui" in a for a in assets)
    assert not [a for a in assets if a.startswith(("http:", "https:", "//"))]


def test_api_docs_render_the_winnow_api_in_the_browser(page, login, researcher):
    login(page, researcher)
    page.goto(reverse("api-docs"))
    page.wait_for_selector(".swagger-ui .info .title")
    assert "Winnow API" in page.inner_text(".swagger-ui .info .title")
    assert page.locator(".opblock").count() > 0


def test_api_docs_lead_back_to_winnow(client, researcher):
    client.force_login(researcher)
    html = client.get(reverse("api-docs")).content.decode()
    assert f'href="{reverse("home")}"' in html
    assert f'href="{reverse("releases:release-list")}"' in html
