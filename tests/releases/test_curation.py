"""The curator's steps in the service layer: the preview, the state rules, the second
approver, and the diff between any two versions."""

import pytest

from datasets.models import Schema
from releases import selectors, services
from releases.errors import (
    ReleaseImmutableError,
    ReleasePermissionError,
    ReleaseStateError,
    ReleaseValidationError,
)
from releases.models import Release, ReleaseStatus
from tests.releases.factories import create_release, make_curator, make_schemas

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def test_the_preview_counts_and_diffs_against_the_previous_version_and_writes_nothing(
    curator, django_capture_on_commit_callbacks
):
    schemas = make_schemas(4)
    create_release(django_capture_on_commit_callbacks, user=curator, version="1.0.0")
    Schema.objects.filter(pk=schemas[0].pk).update(answer="B")  # a label changes
    Schema.objects.filter(pk=schemas[1].pk).delete()  # an item goes
    make_schemas(1, collection="extra")  # an item comes
    preview = services.release_create_preview(name="wsc", dataset="wsc", version="1.1.0", user=curator)
    assert Release.objects.count() == 1  # nothing written
    assert preview.item_count == 4 and preview.previous_version == "1.0.0"
    assert preview.diff["counts"] == {
        "added": 1,
        "removed": 1,
        "changed": 1,
        "labels_changed": 1,
        "unchanged": 2,
    }
    assert preview.diff["labels_changed"][0]["fields"]["answer"] == {"old": "A", "new": "B"}
    # what the preview said is what creating it freezes
    created = create_release(django_capture_on_commit_callbacks, user=curator, version="1.1.0")
    assert created.item_count == preview.item_count and created.diff == preview.diff


def test_a_first_version_preview_says_every_item_is_new(curator):
    make_schemas(3)
    preview = services.release_create_preview(name="wsc", dataset="wsc", version="0.1.0", user=curator)
    assert preview.item_count == 3 and preview.previous_version == ""
    assert preview.diff["counts"]["added"] == 3 and preview.diff["previous_version"] is None


@pytest.mark.parametrize(
    ("kwargs", "field", "message"),
    [
        ({"version": "1.0"}, "version", "not a semantic version"),
        ({"name": "Not A Slug"}, "name", "must be a slug"),
        ({"dataset": "comve"}, "split", "needs a split"),
        ({"split": "test"}, "split", "leave it empty"),
        ({"collection": "nothing-here"}, "collection", "nothing to release"),
        ({"version": "1.0.0"}, "version", "exists already"),
    ],
)
def test_the_preview_refuses_what_create_refuses_and_names_the_field(
    curator, django_capture_on_commit_callbacks, kwargs, field, message
):
    make_schemas(2)
    create_release(django_capture_on_commit_callbacks, user=curator, version="1.0.0")
    args = {"name": "wsc", "dataset": "wsc", "version": "2.0.0", "user": curator, **kwargs}
    with pytest.raises(ReleaseValidationError, match=message) as caught:
        services.release_create_preview(**args)
    assert caught.value.field == field
    for word in ("--", "NAME@"):
        assert word not in caught.value.message  # the web's words, not the command line's


def test_only_curators_may_preview(researcher):
    make_schemas(2)
    with pytest.raises(ReleasePermissionError, match="only curators"):
        services.release_create_preview(name="wsc", dataset="wsc", version="1.0.0", user=researcher)


def test_each_step_is_refused_in_the_wrong_state_with_a_message_naming_the_state(
    curator, django_capture_on_commit_callbacks
):
    make_schemas(2)
    unbuilt = services.release_create(name="wsc", dataset="wsc", version="0.9.0", user=curator)
    assert services.release_actions(release=unbuilt, user=curator)["approve"] is not None
    with pytest.raises(
        ReleaseStateError, match="wsc 0.9.0: its files are queued; approve once they are built"
    ):
        services.release_approve(release=unbuilt, user=curator)
    draft = create_release(django_capture_on_commit_callbacks, user=curator)
    assert services.release_actions(release=draft, user=curator) == {"approve": None}
    with pytest.raises(ReleaseStateError, match="wsc 1.0.0 is a draft; approve it before publishing"):
        services.release_publish(release=draft, user=curator)
    approved = services.release_approve(release=draft, user=curator)
    assert services.release_actions(release=approved, user=curator) == {"publish": None}
    with pytest.raises(
        ReleaseStateError, match="wsc 1.0.0 is approved already; only a draft can be approved"
    ):
        services.release_approve(release=approved, user=curator)
    published = services.release_publish(release=approved, user=curator)
    assert published.status == ReleaseStatus.PUBLISHED
    assert services.release_actions(release=published, user=curator) == {}
    with pytest.raises(ReleaseImmutableError, match="wsc 1.0.0 is published and can never change"):
        services.release_publish(release=published, user=curator)
    with pytest.raises(ReleaseImmutableError, match="can never change"):
        services.release_approve(release=published, user=curator)


def test_a_researcher_is_refused_every_step(researcher, curator, django_capture_on_commit_callbacks):
    make_schemas(2)
    draft = create_release(django_capture_on_commit_callbacks, user=curator)
    with pytest.raises(ReleasePermissionError, match="only curators may approve"):
        services.release_approve(release=draft, user=researcher)
    services.release_approve(release=draft, user=curator)
    with pytest.raises(ReleasePermissionError, match="only curators may publish"):
        services.release_publish(release=draft, user=researcher)
    assert Release.objects.get().status == ReleaseStatus.APPROVED


def test_with_the_second_approver_setting_the_creator_cannot_approve_but_another_curator_can(
    settings, curator, django_capture_on_commit_callbacks
):
    settings.WINNOW_RELEASE_SECOND_APPROVER = True
    make_schemas(2)
    draft = create_release(django_capture_on_commit_callbacks, user=curator)
    refusal = services.release_actions(release=draft, user=curator)["approve"]
    assert (
        isinstance(refusal, ReleasePermissionError) and "another curator must approve it" in refusal.message
    )
    with pytest.raises(ReleasePermissionError, match="you created this release"):
        services.release_approve(release=draft, user=curator)
    assert Release.objects.get().status == ReleaseStatus.DRAFT
    second = make_curator()
    approved = services.release_approve(release=draft, user=second)
    assert approved.status == ReleaseStatus.APPROVED and approved.approved_by == second
    published = services.release_publish(release=approved, user=curator)  # publishing is anyone's
    assert published.published_by == curator


def test_without_the_setting_the_creator_approves_alone(
    settings, curator, django_capture_on_commit_callbacks
):
    settings.WINNOW_RELEASE_SECOND_APPROVER = False
    make_schemas(2)
    draft = create_release(django_capture_on_commit_callbacks, user=curator)
    assert services.release_approve(release=draft, user=curator).approved_by == curator


def _three_versions(curator, captured):
    schemas = make_schemas(4)
    first = create_release(captured, user=curator, version="1.0.0")
    Schema.objects.filter(pk=schemas[0].pk).update(candidate_b="the small suitcase")
    second = create_release(captured, user=curator, version="1.1.0")
    Schema.objects.filter(pk=schemas[1].pk).delete()
    Schema.objects.filter(pk=schemas[2].pk).update(answer="B")
    make_schemas(1, collection="extra")
    third = create_release(captured, user=curator, version="2.0.0")
    return first, second, third


def test_the_diff_between_any_two_chosen_versions_shows_the_items_text(
    curator, django_capture_on_commit_callbacks
):
    first, _, third = _three_versions(curator, django_capture_on_commit_callbacks)
    diff = selectors.release_pair_diff(old=first, new=third)  # 1.1.0 skipped over
    assert diff["counts"] == {"added": 1, "removed": 1, "changed": 2, "labels_changed": 1, "unchanged": 1}
    (added,) = diff["added"]
    assert added["key"] == "extra:0"
    assert ("sentence", "The trophy 0 does not fit in the suitcase because it is too big.") in added["text"]
    (removed,) = diff["removed"]
    assert removed["key"] == "wsc273:1"
    assert ("candidates", "the trophy | the suitcase") in removed["text"]
    changed = {c["key"]: c["fields"] for c in diff["changed"]}
    assert changed["wsc273:0"] == [
        ("candidates", "the trophy | the suitcase", "the trophy | the small suitcase"),
        ("twin", "1", "–"),  # its twin, schema 1, was deleted
    ]
    assert changed["wsc273:2"] == [("answer", "A", "B")]
    # the other way round: what was added is removed
    back = selectors.release_pair_diff(old=third, new=first)
    assert [r["key"] for r in back["removed"]] == ["extra:0"]
    assert [a["key"] for a in back["added"]] == ["wsc273:1"]
    assert {c["key"]: c["fields"] for c in back["changed"]}["wsc273:2"] == [("answer", "B", "A")]


def test_the_diff_lists_at_most_the_items_shown_but_counts_them_all(
    curator, django_capture_on_commit_callbacks
):
    first, _, third = _three_versions(curator, django_capture_on_commit_callbacks)
    diff = selectors.release_pair_diff(old=first, new=third, shown=1)
    assert diff["counts"]["changed"] == 2 and len(diff["changed"]) == 1


def test_researchers_see_only_published_versions_to_compare(
    researcher, curator, django_capture_on_commit_callbacks
):
    first, second, _ = _three_versions(curator, django_capture_on_commit_callbacks)
    services.release_approve(release=first, user=curator)
    services.release_publish(release=first, user=curator)
    assert [r.version for r in selectors.release_versions(user=researcher, name="wsc")] == ["1.0.0"]
    assert [r.version for r in selectors.release_versions(user=curator, name="wsc")] == [
        "1.0.0",
        "1.1.0",
        "2.0.0",
    ]
