"""Only curators create, approve and publish; drafts are invisible to everyone else."""

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from releases import services
from releases.errors import ReleasePermissionError
from releases.models import Release, ReleaseStatus
from tests.releases.factories import create_release, make_schemas, published_release

pytestmark = pytest.mark.django_db


@pytest.fixture
def draft(settings, tmp_path, curator, django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = tmp_path / "media"
    make_schemas(4)
    return create_release(django_capture_on_commit_callbacks, user=curator, name="wsc-draft")


def _row(release):
    return Release.objects.filter(pk=release.pk).values().get()


@pytest.mark.parametrize("role", ["annotator", "researcher", "nobody"])
def test_only_curators_approve_and_publish_through_the_services(request, draft, curator, role):
    user = request.getfixturevalue(role)
    before = _row(draft)
    with pytest.raises(ReleasePermissionError):
        services.release_approve(release=draft, user=user)
    assert _row(draft) == before
    services.release_approve(release=draft, user=curator)
    approved = _row(draft)
    with pytest.raises(ReleasePermissionError):
        services.release_publish(release=draft, user=user)
    assert _row(draft) == approved
    assert Release.objects.get(pk=draft.pk).status == ReleaseStatus.APPROVED


@pytest.mark.parametrize("role", ["annotator", "researcher", "nobody"])
def test_only_curators_create_releases(request, role):
    make_schemas(2)
    with pytest.raises(ReleasePermissionError):
        services.release_create(name="x", dataset="wsc", version="1.0.0", user=request.getfixturevalue(role))
    assert not Release.objects.exists()


@pytest.mark.parametrize("role", ["annotator", "researcher"])
def test_commands_refuse_a_user_who_is_not_a_curator(request, draft, role):
    user = request.getfixturevalue(role)
    before = _row(draft)
    for command in ("release_approve", "release_publish"):
        with pytest.raises(CommandError, match="not a curator"):
            call_command(command, draft.ref, "--user", user.username)
    assert _row(draft) == before


@pytest.mark.parametrize("role", ["annotator", "researcher"])
def test_admin_actions_are_refused_to_staff_without_the_curator_role(client, request, draft, role):
    user = request.getfixturevalue(role)
    user.is_staff = True
    user.save()
    before = _row(draft)
    client.force_login(user)
    url = reverse("admin:releases_release_changelist")
    response = client.post(
        url, {"action": "approve_releases", "_selected_action": [draft.pk], "confirm": "yes"}
    )
    assert response.status_code == 403
    assert _row(draft) == before


def test_admin_approve_shows_a_confirmation_with_diff_and_agreement_then_approves(client, draft, curator):
    curator.is_staff = True
    curator.save()
    client.force_login(curator)
    url = reverse("admin:releases_release_changelist")
    page = client.post(url, {"action": "approve_releases", "_selected_action": [draft.pk]})
    assert page.status_code == 200
    assert b"First version" in page.content
    assert b"No agreement figures" in page.content or b"Campaign" in page.content
    assert Release.objects.get(pk=draft.pk).status == ReleaseStatus.DRAFT  # nothing until confirmed
    client.post(url, {"action": "approve_releases", "_selected_action": [draft.pk], "confirm": "yes"})
    assert Release.objects.get(pk=draft.pk).status == ReleaseStatus.APPROVED
    page = client.post(url, {"action": "publish_releases", "_selected_action": [draft.pk]})
    assert b"Publishing is final" in page.content
    client.post(url, {"action": "publish_releases", "_selected_action": [draft.pk], "confirm": "yes"})
    published = Release.objects.get(pk=draft.pk)
    assert published.status == ReleaseStatus.PUBLISHED
    assert published.published_by == curator and published.approved_by == curator


def _urls(release):
    args = [release.name, release.version]
    return [
        reverse("releases:release-detail", args=args),
        reverse("releases:release-download", args=[*args, "wsc.jsonl"]),
        reverse("releases-api:release-detail", args=args),
        reverse("releases-api:release-download", args=[*args, "wsc.jsonl"]),
    ]


@pytest.mark.parametrize("role", ["annotator", "researcher"])
def test_drafts_are_404_for_annotators_and_researchers(client, request, draft, role):
    client.force_login(request.getfixturevalue(role))
    for url in _urls(draft):
        assert client.get(url).status_code == 404, url
    assert draft.name.encode() not in client.get(reverse("releases:release-list")).content
    assert client.get(reverse("releases-api:release-list")).json()["count"] == 0


def test_curators_see_drafts(client, draft, curator):
    client.force_login(curator)
    for url in _urls(draft):
        assert client.get(url).status_code == 200, url


def test_accounts_without_a_role_and_anonymous_users_are_refused(
    client, nobody, settings, tmp_path, curator, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path / "media"
    make_schemas(2)
    release = published_release(django_capture_on_commit_callbacks, user=curator)
    list_urls = [reverse("releases:release-list"), reverse("releases-api:release-list")]
    for url in [*list_urls, *_urls(release)]:
        response = client.get(url)
        assert response.status_code in (302, 403), url
        if response.status_code == 302:
            assert "/accounts/login/" in response["Location"]
    client.force_login(nobody)
    for url in [*list_urls, *_urls(release)]:
        assert client.get(url).status_code == 403, url


def test_export_of_a_draft_is_for_curators(draft, researcher, curator, tmp_path):
    with pytest.raises(ReleasePermissionError):
        services.release_export(release=draft, out_dir=tmp_path / "out", user=researcher)
    files = services.release_export(release=draft, out_dir=tmp_path / "out2", user=curator)
    assert {f.name for f in files} >= {"wsc.jsonl", "manifest.json", "README.md"}


def test_curators_create_a_release_in_the_admin_and_bad_input_writes_nothing(
    client, curator, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path / "media"
    make_schemas(3)
    curator.is_staff = True
    curator.save()
    client.force_login(curator)
    url = reverse("admin:releases_release_add")
    form = {
        "name": "wsc",
        "dataset": "wsc",
        "split": "",
        "collection": "",
        "version": "1.0",
        "changelog": "x",
    }
    bad = client.post(url, form)
    assert bad.status_code == 200 and b"not a semantic version" in bad.content
    assert not Release.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, {**form, "version": "1.0.0"})
    assert response.status_code == 302
    release = Release.objects.get(name="wsc", version="1.0.0")
    assert release.item_count == 3 and release.created_by == curator and release.status == ReleaseStatus.DRAFT
    assert release.build_status == "done"


def test_annotators_cannot_open_the_admin_add_form(client, annotator):
    annotator.is_staff = True
    annotator.save()
    client.force_login(annotator)
    assert client.post(reverse("admin:releases_release_add"), {"name": "x"}).status_code == 403
    assert not Release.objects.exists()
