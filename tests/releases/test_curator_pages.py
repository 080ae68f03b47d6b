"""The curator's release pages: create (preview first), approve, publish, compare; the
admin's publish flow; only the steps the state allows are offered."""

import pytest
from django.urls import reverse

from datasets.models import Schema
from releases import services
from releases.models import Release, ReleaseStatus
from tests.releases.factories import create_release, make_curator, make_schemas

pytestmark = pytest.mark.django_db

CREATE = {
    "name": "wsc273",
    "dataset": "wsc",
    "collection": "",
    "split": "",
    "version": "1.0.0",
    "changelog": "First",
}


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def _detail(release):
    return reverse("releases:release-detail", args=[release.name, release.version])


def _messages(response):
    return [str(m) for m in response.context["messages"]]


def test_the_create_page_lists_what_can_be_released(client, curator):
    make_schemas(3)
    client.force_login(curator)
    page = client.get(reverse("releases:release-create"))
    assert page.status_code == 200
    html = page.content.decode()
    assert '<td>wsc273</td><td class="num">3</td>' in html
    assert 'value="preview"' in html and 'value="create"' not in html  # create only after a preview


def test_preview_writes_nothing_then_create_makes_the_draft(
    client, curator, django_capture_on_commit_callbacks
):
    make_schemas(4)
    client.force_login(curator)
    url = reverse("releases:release-create")
    page = client.post(url, {**CREATE, "step": "preview"})
    assert page.status_code == 200 and not Release.objects.exists()
    html = page.content.decode()
    assert (
        "It would freeze <strong>4 items</strong>" in html and "First version: all 4 items are new." in html
    )
    assert page.context["previewed"] == "wsc273|wsc|1.0.0||"
    with django_capture_on_commit_callbacks(execute=True):
        done = client.post(
            url, {**CREATE, "step": "create", "previewed": page.context["previewed"]}, follow=True
        )
    release = Release.objects.get()
    assert (release.name, release.version, release.item_count, release.created_by) == (
        "wsc273",
        "1.0.0",
        4,
        curator,
    )
    assert done.redirect_chain[-1][0] == _detail(release)
    assert "Created the draft wsc273 1.0.0: 4 items frozen" in _messages(done)[0]


def test_create_after_the_fields_changed_shows_the_new_preview_instead(client, curator):
    make_schemas(2)
    client.force_login(curator)
    page = client.post(
        reverse("releases:release-create"),
        {**CREATE, "version": "2.0.0", "step": "create", "previewed": "wsc273|wsc|1.0.0||"},
    )
    assert page.status_code == 200 and not Release.objects.exists()
    assert "The fields changed since the preview" in " ".join(_messages(page))
    assert page.context["preview"].request.version == "2.0.0"


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"version": "1.0"}, "version", "is not a semantic version X.Y.Z"),
        ({"name": "Big Name"}, "name", "Release name: use only lowercase letters"),
        ({"dataset": "comve"}, "split", "Data set comve needs a split"),
        ({"collection": "nowhere"}, "collection", "Select a valid choice"),
    ],
)
def test_bad_input_is_shown_beside_its_field_in_the_webs_words(client, curator, change, field, words):
    make_schemas(2)
    client.force_login(curator)
    page = client.post(reverse("releases:release-create"), {**CREATE, **change, "step": "preview"})
    assert page.status_code == 400 and not Release.objects.exists()
    errors = " ".join(page.context["form"].errors[field])
    assert words in errors and "--" not in errors


def test_a_version_that_exists_is_refused_beside_the_version(
    client, curator, django_capture_on_commit_callbacks
):
    make_schemas(2)
    create_release(django_capture_on_commit_callbacks, user=curator, name="wsc273")
    client.force_login(curator)
    page = client.post(reverse("releases:release-create"), {**CREATE, "step": "preview"})
    assert page.status_code == 400
    assert page.context["form"].errors["version"] == [
        "Release wsc273 1.0.0 exists already; pick a new version."
    ]


@pytest.mark.parametrize("role", ["annotator", "researcher"])
def test_other_roles_cannot_create_approve_or_publish(
    client, request, role, curator, django_capture_on_commit_callbacks
):
    make_schemas(2)
    draft = create_release(django_capture_on_commit_callbacks, user=curator)
    client.force_login(request.getfixturevalue(role))
    refused = client.get(reverse("releases:release-create"))
    assert refused.status_code == 403
    assert "Only curators create, approve and publish releases." in refused.content.decode()
    assert client.post(reverse("releases:release-create"), {**CREATE, "step": "preview"}).status_code == 403
    args = [draft.name, draft.version]
    assert client.post(reverse("releases:release-approve", args=args)).status_code == 403
    assert client.get(reverse("releases:release-publish", args=args)).status_code == 403
    assert Release.objects.get().status == ReleaseStatus.DRAFT


def test_the_detail_page_offers_only_the_step_the_state_allows(
    client, curator, django_capture_on_commit_callbacks
):
    make_schemas(2)
    draft = create_release(django_capture_on_commit_callbacks, user=curator)
    client.force_login(curator)
    html = client.get(_detail(draft)).content.decode()
    approve = reverse("releases:release-approve", args=[draft.name, draft.version])
    publish = reverse("releases:release-publish", args=[draft.name, draft.version])
    assert approve in html and publish not in html
    services.release_approve(release=draft, user=curator)
    html = client.get(_detail(draft)).content.decode()
    assert approve not in html and publish in html
    services.release_publish(release=draft, user=curator)
    html = client.get(_detail(draft)).content.decode()
    assert approve not in html and publish not in html and 'id="release-actions"' not in html


def test_a_draft_whose_files_are_not_built_says_so_instead_of_offering_approve(client, curator):
    make_schemas(2)
    draft = services.release_create(name="wsc", dataset="wsc", version="1.0.0", user=curator)  # not built
    client.force_login(curator)
    html = client.get(_detail(draft)).content.decode()
    assert "Next step, approve: wsc 1.0.0: its files are queued; approve once they are built" in html
    assert reverse("releases:release-approve", args=[draft.name, draft.version]) not in html


def test_publishing_a_draft_is_refused_before_the_final_page(
    client, curator, django_capture_on_commit_callbacks
):
    make_schemas(2)
    draft = create_release(django_capture_on_commit_callbacks, user=curator)
    client.force_login(curator)
    url = reverse("releases:release-publish", args=[draft.name, draft.version])
    page = client.get(url, follow=True)
    assert "Publishing is final" not in page.content.decode()
    assert _messages(page) == ["Cannot publish: wsc 1.0.0 is a draft; approve it before publishing."]
    page = client.post(url, follow=True)
    assert _messages(page) == ["Not published: wsc 1.0.0 is a draft; approve it before publishing."]
    assert Release.objects.get().status == ReleaseStatus.DRAFT


def test_approve_then_publish_with_plain_messages(client, curator, django_capture_on_commit_callbacks):
    make_schemas(3)
    draft = create_release(django_capture_on_commit_callbacks, user=curator, name="wsc273")
    client.force_login(curator)
    args = [draft.name, draft.version]
    page = client.post(reverse("releases:release-approve", args=args), follow=True)
    assert _messages(page) == ["Approved wsc273 1.0.0: 3 items; it can now be published."]
    page = client.post(reverse("releases:release-approve", args=args), follow=True)
    assert _messages(page) == [
        "Not approved: wsc273 1.0.0 is approved already; only a draft can be approved."
    ]
    confirm = client.get(reverse("releases:release-publish", args=args))
    assert confirm.status_code == 200 and "Publishing is final" in confirm.content.decode()
    assert Release.objects.get().status == ReleaseStatus.APPROVED  # nothing until confirmed
    page = client.post(reverse("releases:release-publish", args=args), follow=True)
    assert _messages(page) == ["Published wsc273 1.0.0: 3 items, files checked."]
    assert Release.objects.get().status == ReleaseStatus.PUBLISHED


def test_with_the_second_approver_setting_the_page_asks_for_another_curator(
    client, settings, curator, django_capture_on_commit_callbacks
):
    settings.WINNOW_RELEASE_SECOND_APPROVER = True
    make_schemas(2)
    draft = create_release(django_capture_on_commit_callbacks, user=curator)
    approve = reverse("releases:release-approve", args=[draft.name, draft.version])
    client.force_login(curator)
    html = client.get(_detail(draft)).content.decode()
    assert approve not in html and "another curator must approve it" in html
    page = client.post(approve, follow=True)
    assert "you created this release" in _messages(page)[0]
    assert Release.objects.get().status == ReleaseStatus.DRAFT
    client.force_login(make_curator())
    assert approve in client.get(_detail(draft)).content.decode()
    client.post(approve)
    assert Release.objects.get().status == ReleaseStatus.APPROVED


def test_the_admin_obeys_the_second_approver_setting(
    client, settings, curator, django_capture_on_commit_callbacks
):
    settings.WINNOW_RELEASE_SECOND_APPROVER = True
    curator.is_staff = True
    curator.save()
    make_schemas(2)
    draft = create_release(django_capture_on_commit_callbacks, user=curator)
    client.force_login(curator)
    url = reverse("admin:releases_release_changelist")
    page = client.post(
        url, {"action": "approve_releases", "_selected_action": [draft.pk], "confirm": "yes"}, follow=True
    )
    assert "you created this release" in page.content.decode()
    assert Release.objects.get().status == ReleaseStatus.DRAFT


def test_the_admin_refuses_to_publish_a_draft_before_the_final_page_and_reads_plainly_on_success(
    client, curator, django_capture_on_commit_callbacks
):
    curator.is_staff = True
    curator.save()
    make_schemas(2)
    draft = create_release(django_capture_on_commit_callbacks, user=curator, name="wsc273")
    client.force_login(curator)
    url = reverse("admin:releases_release_changelist")
    page = client.post(url, {"action": "publish_releases", "_selected_action": [draft.pk]}, follow=True)
    html = page.content.decode()
    assert "Publishing is final" not in html
    assert "Not published: wsc273 1.0.0 is a draft; approve it before publishing" in html
    page = client.post(
        url, {"action": "approve_releases", "_selected_action": [draft.pk], "confirm": "yes"}, follow=True
    )
    assert "Approved wsc273 1.0.0: 2 items; it can now be published." in page.content.decode()
    page = client.post(
        url, {"action": "publish_releases", "_selected_action": [draft.pk], "confirm": "yes"}, follow=True
    )
    html = page.content.decode()
    assert "Published wsc273 1.0.0: 2 items, files checked." in html and ": done" not in html


def _two_versions(curator, captured):
    schemas = make_schemas(3)
    old = create_release(captured, user=curator, version="1.0.0")
    Schema.objects.filter(pk=schemas[2].pk).update(text_after="is much too big.", answer="B")
    new = create_release(captured, user=curator, version="1.1.0")
    return old, new


def test_the_compare_page_shows_the_changed_items_text_and_fields(
    client, curator, django_capture_on_commit_callbacks
):
    old, new = _two_versions(curator, django_capture_on_commit_callbacks)
    client.force_login(curator)
    page = client.get(reverse("releases:release-compare", args=["wsc"]))  # defaults: the last two
    assert page.status_code == 200
    html = page.content.decode()
    assert "From 1.0.0 to 1.1.0" in html and "0 added, 0 removed, 1 changed" in html
    assert "The trophy 2 does not fit in the suitcase because it is much too big." in html
    assert "<td>answer</td><td><del>A</del></td><td><ins>B</ins></td>" in html
    back = client.get(reverse("releases:release-compare", args=["wsc"]), {"old": "1.1.0", "new": "1.0.0"})
    assert "<td>answer</td><td><del>B</del></td><td><ins>A</ins></td>" in back.content.decode()


@pytest.mark.parametrize(
    ("query", "field", "words"),
    [
        ({"old": "9.9.9", "new": "1.1.0"}, "old", "From version: 9.9.9 is not a version you can see"),
        ({"old": "1.1.0", "new": "1.1.0"}, "new", "To version: choose a version other than"),
    ],
)
def test_the_compare_page_refuses_bad_choices_beside_the_field(
    client, curator, django_capture_on_commit_callbacks, query, field, words
):
    _two_versions(curator, django_capture_on_commit_callbacks)
    client.force_login(curator)
    page = client.get(reverse("releases:release-compare", args=["wsc"]), query)
    assert page.status_code == 400 and page.context["diff"] is None
    assert words in " ".join(page.context["form"].errors[field])


def test_researchers_compare_only_published_versions(
    client, researcher, curator, django_capture_on_commit_callbacks
):
    old, _ = _two_versions(curator, django_capture_on_commit_callbacks)
    client.force_login(researcher)
    url = reverse("releases:release-compare", args=["wsc"])
    assert client.get(url).status_code == 404  # no published version
    services.release_approve(release=old, user=curator)
    services.release_publish(release=old, user=curator)
    page = client.get(url, {"old": "1.0.0", "new": "1.1.0"})
    html = page.content.decode()
    assert page.status_code == 200 and page.context["diff"] is None
    assert "wsc has one version (1.0.0) you can see" in html and "1.1.0" not in html


def test_home_and_list_link_to_the_release_pages_not_the_admin(client, curator):
    client.force_login(curator)
    home = client.get(reverse("home")).content.decode()
    assert reverse("releases:release-create") in home
    assert reverse("admin:releases_release_changelist") not in home
    listing = client.get(reverse("releases:release-list")).content.decode()
    assert reverse("releases:release-create") in listing


def test_the_preview_of_a_new_version_shows_the_changed_items_text(
    client, curator, django_capture_on_commit_callbacks
):
    schemas = make_schemas(3)
    create_release(django_capture_on_commit_callbacks, user=curator, name="wsc273")
    Schema.objects.filter(pk=schemas[1].pk).update(answer="A")
    client.force_login(curator)
    page = client.post(reverse("releases:release-create"), {**CREATE, "version": "1.0.1", "step": "preview"})
    html = page.content.decode()
    assert "Against version 1.0.0: 0 added, 0 removed, 1 changed" in html
    assert "<th>in 1.0.0</th><th>now</th>" in html
    assert "<td>answer</td><td><del>B</del></td><td><ins>A</ins></td>" in html
    assert "The trophy 1 does not fit in the suitcase because it is too big." in html
    assert Release.objects.count() == 1


def test_the_next_versions_of_a_release_fill_the_form(client, curator, django_capture_on_commit_callbacks):
    make_schemas(2)
    create_release(django_capture_on_commit_callbacks, user=curator, name="wsc273", collection="wsc273")
    client.force_login(curator)
    page = client.get(reverse("releases:release-create"))
    link = "?name=wsc273&amp;dataset=wsc&amp;collection=wsc273&amp;split=&amp;version=1.1.0"
    assert link in page.content.decode()
    filled = client.get(reverse("releases:release-create") + link.replace("&amp;", "&"))
    form = filled.context["form"]
    assert form["version"].value() == "1.1.0" and form["collection"].value() == "wsc273"
    assert not form.is_bound  # a link fills the form; only Preview sends it


def test_the_build_status_fragment_brings_the_approve_button_once_the_files_are_built(client, curator):
    make_schemas(2)
    draft = services.release_create(name="wsc", dataset="wsc", version="1.0.0", user=curator)  # queued
    client.force_login(curator)
    approve = reverse("releases:release-approve", args=[draft.name, draft.version])
    fragment = client.get(_detail(draft), HTTP_HX_REQUEST="true").content.decode()
    assert 'hx-trigger="every 2s"' in fragment and approve not in fragment
    services.release_build(release_id=draft.pk)
    fragment = client.get(_detail(draft), HTTP_HX_REQUEST="true").content.decode()
    assert fragment.lstrip().startswith('<div id="build-status"')
    assert approve in fragment and "every 2s" not in fragment
