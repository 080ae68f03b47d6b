"""One refusal idiom for pages (architecture issue): every page of the apps is wrapped by
``core.roles.role_required``, which sends a signed-out visitor to the sign-in page (an
htmx request by ``HX-Redirect``) and answers a user without the role with a 403 page
that says why."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse

pytestmark = pytest.mark.django_db
APPS = ("annotation.", "datasets.", "releases.", "evaluation.")
OWN_ENTRY = ("annotation.crowd.",)  # the study pages: a participant enters by the link


def _patterns(resolver: URLResolver) -> list[URLPattern]:
    found: list[URLPattern] = []
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            found += _patterns(entry)
        else:
            found.append(entry)
    return found


def test_every_page_of_the_apps_is_wrapped_by_role_required():
    pages = [
        p.callback
        for p in _patterns(get_resolver())
        if p.callback.__module__.startswith(APPS)
        and p.callback.__module__.endswith(".views")
        and not p.callback.__module__.startswith(OWN_ENTRY)
        and not hasattr(p.callback, "cls")  # DRF views: permission classes
    ]
    assert len(pages) > 30
    unwrapped = [f"{f.__module__}.{f.__name__}" for f in pages if not hasattr(f, "role_required")]
    assert unwrapped == []


def test_a_user_without_the_role_reads_why_and_a_signed_out_one_signs_in(client, annotator: Any):
    url = reverse("releases:release-create")
    signed_out = client.get(url)
    assert signed_out.status_code == 302 and signed_out["Location"].startswith(reverse("login"))
    htmx = client.get(url, HTTP_HX_REQUEST="true")
    assert htmx.status_code == 204 and htmx["HX-Redirect"].startswith(reverse("login"))
    client.force_login(annotator)
    refused = client.get(url)
    assert refused.status_code == 403
    assert "Only curators create, approve and publish releases." in refused.content.decode()
