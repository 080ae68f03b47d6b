"""Researchers' pages and API: published releases with cards, diffs and checked downloads."""

import hashlib

import pytest
from django.urls import reverse

from releases.models import BuildStatus, Release
from tests.releases.factories import create_release, make_schemas, published_release

pytestmark = pytest.mark.django_db


@pytest.fixture
def release(settings, tmp_path, curator, django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = tmp_path / "media"
    make_schemas(4)
    return published_release(
        django_capture_on_commit_callbacks, user=curator, changelog="First <script>x</script>"
    )


@pytest.mark.parametrize("role", ["researcher", "annotator", "curator"])
def test_published_releases_are_listed_with_card_diff_and_downloads(client, request, release, role):
    client.force_login(request.getfixturevalue(role))
    listing = client.get(reverse("releases:release-list"))
    assert listing.status_code == 200
    assert b"wsc 1.0.0" in listing.content
    page = client.get(reverse("releases:release-detail", args=[release.name, release.version]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "First version" in html
    assert "<h1>wsc 1.0.0</h1>" in html and "configs:" not in html  # the card as HTML, no YAML
    assert "&lt;script&gt;" in html and "<script>x" not in html  # crowd/curator text escaped
    for file in release.files.all():
        assert reverse("releases:release-download", args=[release.name, release.version, file.name]) in html
        assert file.sha256 in html


def test_download_serves_the_bytes_of_the_manifest(client, researcher, release):
    client.force_login(researcher)
    for file in release.files.all():
        response = client.get(
            reverse("releases:release-download", args=[release.name, release.version, file.name])
        )
        assert response.status_code == 200
        body = b"".join(response.streaming_content)
        assert hashlib.sha256(body).hexdigest() == file.sha256 == response["X-Checksum-SHA256"]
    missing = client.get(reverse("releases:release-download", args=[release.name, release.version, "passwd"]))
    assert missing.status_code == 404
    escape = client.get(f"/releases/{release.name}/{release.version}/files/..%2F..%2Fsettings.py")
    assert escape.status_code == 404


def test_api_lists_and_details_published_releases_without_user_identities(client, researcher, release):
    client.force_login(researcher)
    data = client.get(reverse("releases-api:release-list")).json()
    assert data["count"] == 1
    detail = client.get(reverse("releases-api:release-detail", args=[release.name, release.version])).json()
    assert detail["version"] == "1.0.0" and detail["status"] == "published"
    assert detail["manifest"]["files"]
    assert not any("_by" in key for key in detail)
    file = next(f for f in detail["files"] if f["name"] == "wsc.jsonl")
    response = client.get(file["download_url"])
    assert response.status_code == 200
    assert hashlib.sha256(b"".join(response.streaming_content)).hexdigest() == file["sha256"]


def test_build_progress_is_polled_by_htmx_while_building(client, curator, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    make_schemas(2)
    from releases import services

    release = services.release_create(
        name="wsc", dataset="wsc", version="1.0.0", user=curator
    )  # not built yet
    Release.objects.filter(pk=release.pk).update(build_status=BuildStatus.RUNNING, build_progress=40)
    client.force_login(curator)
    url = reverse("releases:release-detail", args=[release.name, release.version])
    page = client.get(url)
    assert b'hx-trigger="every 2s"' in page.content and b"40%" in page.content
    fragment = client.get(url, headers={"HX-Request": "true"})
    assert fragment.content.decode().lstrip().startswith('<div id="build-status"')
    assert b"<html" not in fragment.content
    services.release_build(release_id=release.pk, force=True)
    done = client.get(url, headers={"HX-Request": "true"})
    assert b"hx-trigger" not in done.content and b"wsc.jsonl" in done.content


def test_list_filters_by_dataset(client, researcher, release, curator, django_capture_on_commit_callbacks):
    client.force_login(researcher)
    assert client.get(reverse("releases-api:release-list") + "?dataset=comve").json()["count"] == 0
    assert client.get(reverse("releases-api:release-list") + "?dataset=wsc").json()["count"] == 1
    create_release(django_capture_on_commit_callbacks, user=curator, version="1.1.0")  # a draft
    assert client.get(reverse("releases-api:release-list")).json()["count"] == 1


def test_a_curator_on_a_draft_page_approves_it_there_not_in_the_admin(
    client, curator, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path / "media"
    make_schemas(2)
    draft = create_release(django_capture_on_commit_callbacks, user=curator, name="wsc-next")
    curator.is_staff = True
    curator.save()
    client.force_login(curator)
    page = client.get(reverse("releases:release-detail", args=[draft.name, draft.version])).content.decode()
    assert reverse("releases:release-approve", args=[draft.name, draft.version]) in page
    assert reverse("admin:releases_release_changelist") not in page


def test_a_crowd_participant_sees_no_release_page_api_or_file(client, release, curator):
    """A participant of a study link holds the participant role, not the annotator role:
    the published releases hold the answers of the items they are checked on."""
    from annotation.crowd import services as crowd
    from annotation.services import campaign_create

    campaign = campaign_create(name="sw", task="switchability", items="schemas", k=2)
    link = crowd.study_link_create(campaign=campaign, platform="link", consent="ok", user=curator)
    client.post(crowd.study_link_path(link).split("?")[0] + "?pid=crowd-1")
    client.post(reverse("study:consent", args=[crowd.study_link_token(link)]), {"agree": "yes"})
    assert client.get(reverse("releases:release-list")).status_code == 403
    assert (
        client.get(reverse("releases:release-detail", args=[release.name, release.version])).status_code
        == 403
    )
    for file in release.files.all():
        url = reverse("releases:release-download", args=[release.name, release.version, file.name])
        assert client.get(url).status_code in (403, 404)
    assert client.get("/api/releases/").status_code == 403
    assert client.get(f"/api/releases/{release.name}/{release.version}/").status_code == 403
    # what they do see: their study, with no menu and no account name
    home = client.get(reverse("home"))
    assert home.status_code == 302 and home["Location"] == reverse(
        "annotation:campaign-annotate", args=["sw"]
    )
    page = client.get(home["Location"]).content.decode()
    assert "Study participant" in page and 'href="/releases/' not in page and ">Annotation<" not in page
