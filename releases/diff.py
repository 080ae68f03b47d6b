"""Diff of two releases' items (pure: no Django imports).

Items are compared by key; an item whose canonical payload digest differs is "changed",
and the label fields of its data set that differ are listed under "labels_changed".
Old items are held as key -> (digest, labels) only, so memory grows with the number of
keys, not with the payloads; the key lists in the result are capped (counts are exact).
"""

from collections.abc import Iterable
from typing import Any

# The fields that are labels (imported or aggregated) per data set.
LABEL_FIELDS: dict[str, tuple[str, ...]] = {
    "wsc": ("answer", "switchable", "associative", "knowledge_types"),
    "winowhy": ("label", "score", "knowledge_type"),
    "comve": ("false_index", "correct_option"),
    "senmaking": ("false_index", "correct_option"),
}
MAX_LISTED = 500

# key, digest, payload[, label sources {label: source name} (None: not recorded)]
Entry = tuple[str, str, dict[str, Any]] | tuple[str, str, dict[str, Any], dict[str, str] | None]


def labels_of(dataset: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {field: payload.get(field) for field in LABEL_FIELDS.get(dataset, ())}


def first_version_diff(count: int) -> dict[str, Any]:
    """The diff of a release with no previous version: every item is new."""
    return {
        "previous_version": None,
        "counts": {"added": count, "removed": 0, "changed": 0, "labels_changed": 0, "unchanged": 0},
        "added": [],
        "removed": [],
        "changed": [],
        "labels_changed": [],
        "note": "first version: every item is new",
    }


def release_items_diff(
    *, dataset: str, previous_version: str | None, old: Iterable[Entry], new: Iterable[Entry]
) -> dict[str, Any]:
    """Items added, removed, changed and labels changed between ``old`` and ``new``."""
    if previous_version is None:
        return first_version_diff(sum(1 for _ in new))
    before: dict[str, tuple[str, dict[str, Any], dict[str, str] | None]] = {
        entry[0]: (entry[1], labels_of(dataset, entry[2]), _sources(entry)) for entry in old
    }
    added: list[str] = []
    changed: list[str] = []
    labels_changed: list[dict[str, Any]] = []
    moved: list[dict[str, Any]] = []
    moved_count = 0
    counts = {"added": 0, "removed": 0, "changed": 0, "labels_changed": 0, "unchanged": 0}
    seen: set[str] = set()
    for entry in new:
        key, digest, payload = entry[0], entry[1], entry[2]
        seen.add(key)
        previous = before.get(key)
        if previous is None:
            counts["added"] += 1
            if len(added) < MAX_LISTED:
                added.append(key)
            continue
        old_digest, old_labels, old_sources = previous
        sources = _sources(entry)
        if sources is not None and old_sources is not None and sources != old_sources:
            moved_count += 1
            if len(moved) < MAX_LISTED:
                names = sorted({*sources, *old_sources})
                moved.append(
                    {
                        "key": key,
                        "labels": {
                            n: {"old": old_sources.get(n), "new": sources.get(n)}
                            for n in names
                            if old_sources.get(n) != sources.get(n)
                        },
                    }
                )
        if old_digest == digest:
            counts["unchanged"] += 1
            continue
        counts["changed"] += 1
        if len(changed) < MAX_LISTED:
            changed.append(key)
        new_labels = labels_of(dataset, payload)
        fields = [f for f in new_labels if new_labels[f] != old_labels.get(f)]
        if fields:
            counts["labels_changed"] += 1
            if len(labels_changed) < MAX_LISTED:
                labels_changed.append(
                    {
                        "key": key,
                        "fields": {f: {"old": old_labels.get(f), "new": new_labels[f]} for f in fields},
                    }
                )
    removed = sorted(k for k in before if k not in seen)
    counts["removed"] = len(removed)
    return {
        "previous_version": previous_version,
        "counts": counts,
        "added": added,
        "removed": removed[:MAX_LISTED],
        "changed": changed,
        "labels_changed": labels_changed,
        # items whose labels come from another source than in the previous version (with
        # the same value or not), where both versions recorded their sources
        "sources_changed": {"count": moved_count, "items": moved},
    }


def _sources(entry: Entry) -> dict[str, str] | None:
    return entry[3] if len(entry) > 3 else None


# The fields that say what an item is, per data set, in the order a page shows them.
TEXT_FIELDS: dict[str, tuple[str, ...]] = {
    "wsc": ("sentence", "candidates", "answer"),
    "winowhy": ("sentence", "text", "label"),
    "comve": ("sent0", "sent1", "false_index", "option_a", "option_b", "option_c", "correct_option"),
    "senmaking": ("sent0", "sent1", "false_index", "option_a", "option_b", "option_c", "correct_option"),
}


def display_value(value: Any) -> str:
    """A payload value as a page shows it: lists joined, yes/no, an empty value as a dash."""
    if value is None or value == "" or value == []:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return " | ".join(display_value(v) for v in value)
    return str(value)


def item_text(dataset: str, payload: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, shown value) of the fields that say what the item is."""
    return [(f, display_value(payload.get(f))) for f in TEXT_FIELDS.get(dataset, ()) if f in payload]


def field_changes(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(field, before, after) for every field whose value differs (or that one payload
    lacks), by field name: PostgreSQL's jsonb does not keep a payload's key order, so the
    order must not come from it."""
    names = sorted({*new, *old})
    return [
        (f, display_value(old.get(f)), display_value(new.get(f))) for f in names if old.get(f) != new.get(f)
    ]


def shown_keys(diff: dict[str, Any], shown: int) -> tuple[list[str], list[str], list[str]]:
    """The keys of a diff a page shows with their text: (added, removed, changed), each at most ``shown``."""
    return diff["added"][:shown], diff["removed"][:shown], diff["changed"][:shown]


def items_text_diff(
    *,
    dataset: str,
    diff: dict[str, Any],
    before: dict[str, dict[str, Any]],
    after: dict[str, dict[str, Any]],
    shown: int,
) -> dict[str, Any]:
    """A diff's items with their text: what the added and removed items say, and for each
    changed item what it says now and which fields changed (``before``/``after``: the
    payloads of the shown keys on each side)."""
    added, removed, changed = shown_keys(diff, shown)
    return {
        "counts": diff["counts"],
        "shown": shown,
        "added": [{"key": k, "text": item_text(dataset, after[k])} for k in added],
        "removed": [{"key": k, "text": item_text(dataset, before[k])} for k in removed],
        "changed": [
            {"key": k, "text": item_text(dataset, after[k]), "fields": field_changes(before[k], after[k])}
            for k in changed
        ],
    }
