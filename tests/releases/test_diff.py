"""Diffs between versions: items added, removed, changed, and labels changed."""

import pytest

from datasets.models import Reason, Schema
from releases.diff import release_items_diff
from tests.releases.factories import create_release, make_reasons, make_schemas

PAYLOAD = {
    "id": "1",
    "answer": "A",
    "switchable": True,
    "associative": False,
    "knowledge_types": [],
    "text": "x",
}


def _entry(key, **changes):
    payload = {**PAYLOAD, **changes}
    from releases.exports import payload_digest

    return key, payload_digest(payload), payload


def test_pure_diff_counts_added_removed_changed_and_label_changes():
    old = [_entry("a"), _entry("b"), _entry("c"), _entry("d")]
    new = [_entry("a"), _entry("b", text="typo fixed"), _entry("c", switchable=False), _entry("e")]
    diff = release_items_diff(dataset="wsc", previous_version="1.0.0", old=old, new=new)
    assert diff["counts"] == {"added": 1, "removed": 1, "changed": 2, "labels_changed": 1, "unchanged": 1}
    assert diff["added"] == ["e"]
    assert diff["removed"] == ["d"]
    assert diff["changed"] == ["b", "c"]
    assert diff["labels_changed"] == [{"key": "c", "fields": {"switchable": {"old": True, "new": False}}}]


def test_pure_diff_of_a_first_version_says_everything_is_new():
    diff = release_items_diff(dataset="wsc", previous_version=None, old=[], new=[_entry("a"), _entry("b")])
    assert diff["previous_version"] is None
    assert diff["counts"]["added"] == 2


@pytest.mark.django_db
def test_a_new_version_diffs_against_the_highest_lower_version(
    settings, tmp_path, curator, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path / "media"
    schemas = make_schemas(4)
    captured = django_capture_on_commit_callbacks
    create_release(captured, user=curator, version="1.0.0")
    create_release(captured, user=curator, version="1.2.0")  # same items
    Schema.objects.filter(pk=schemas[0].pk).update(
        switchable=not schemas[0].switchable, knowledge_types=["Quantity"]
    )
    Schema.objects.filter(pk=schemas[1].pk).update(text_after="is far too big.")
    Schema.objects.filter(pk=schemas[3].pk).delete()
    make_schemas(1, collection="extra")
    v2 = create_release(captured, user=curator, version="1.10.0")
    assert v2.previous_version == "1.2.0"  # semantic order, not string order
    counts = v2.diff["counts"]
    # Changed: 0 (labels), 1 (text) and 2, whose twin (3) was deleted.
    assert counts == {"added": 1, "removed": 1, "changed": 3, "labels_changed": 1, "unchanged": 0}
    assert v2.diff["changed"] == ["wsc273:0", "wsc273:1", "wsc273:2"]
    assert v2.diff["removed"] == ["wsc273:3"]
    assert v2.diff["added"] == ["extra:0"]
    change = v2.diff["labels_changed"][0]
    assert change["key"] == "wsc273:0"
    assert set(change["fields"]) == {"switchable", "knowledge_types"}
    patch = create_release(captured, user=curator, version="1.0.1")
    assert patch.previous_version == "1.0.0"


@pytest.mark.django_db
def test_winowhy_diff_reports_reason_label_changes(
    settings, tmp_path, curator, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path / "media"
    reasons = make_reasons(make_schemas(2), per_schema=3)
    captured = django_capture_on_commit_callbacks
    create_release(captured, user=curator, name="why", dataset="winowhy", version="1.0.0")
    Reason.objects.filter(pk=reasons[1].pk).update(label="positive", plausibility=0.8)
    v2 = create_release(captured, user=curator, name="why", dataset="winowhy", version="2.0.0")
    assert v2.diff["counts"]["labels_changed"] == 1
    fields = v2.diff["labels_changed"][0]["fields"]
    assert fields["label"] == {"old": "acceptable", "new": "positive"}
    assert fields["score"] == {"old": 0.6, "new": 0.8}
