"""One item of a release, as it was frozen (the comparison of two runs links here)."""

import pytest
from django.urls import reverse

from tests.releases.factories import create_release, make_schemas, published_release

pytestmark = pytest.mark.django_db


@pytest.fixture
def releases(curator, settings, tmp_path, django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = tmp_path / "media"
    make_schemas(3)
    published = published_release(django_capture_on_commit_callbacks, user=curator, name="wsc-items")
    draft = create_release(django_capture_on_commit_callbacks, user=curator, name="wsc-draft")
    return published, draft


def _url(release, item_id: str) -> str:
    return reverse("releases:release-item", args=[release.name, release.version, item_id])


@pytest.mark.parametrize("role", ["researcher", "annotator", "curator"])
def test_every_role_reads_an_item_of_a_published_release_in_words(client, request, role, releases):
    client.force_login(request.getfixturevalue(role))
    response = client.get(_url(releases[0], "1"))
    html = response.content.decode()
    assert response.status_code == 200
    assert "The trophy 1 does not fit in the suitcase because it is too big." in html  # the sentence
    assert "wsc273:1" in html  # its key
    assert "{'" not in html and "True" not in html and "False" not in html  # yes/no, never reprs


def test_an_unknown_item_is_a_404_and_a_user_without_a_role_is_denied(client, researcher, nobody, releases):
    client.force_login(researcher)
    assert client.get(_url(releases[0], "999")).status_code == 404
    assert client.get(_url(releases[1], "1")).status_code == 404  # a draft is out of a researcher's reach
    client.force_login(nobody)
    assert client.get(_url(releases[0], "1")).status_code == 403
    client.logout()
    assert client.get(_url(releases[0], "1")).status_code == 302


def test_a_curator_reads_an_item_of_a_draft(client, curator, releases):
    client.force_login(curator)
    assert client.get(_url(releases[1], "1")).status_code == 200
