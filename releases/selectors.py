"""Release reads, narrowed to what the user may see (out of reach = 404)."""

import hashlib
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from django.conf import settings
from django.db.models import Count
from django.http import Http404

from core.roles import Actor
from datasets.models import Collection, ComVEItem, Reason, Schema
from releases.diff import items_text_diff, release_items_diff, shown_keys
from releases.errors import ReleaseIntegrityError
from releases.exports import file_sha256
from releases.models import Release, ReleaseDataset, ReleaseFile, ReleaseItem, ReleaseStatus
from releases.permissions import user_can_see_drafts
from releases.semver import next_versions

logger = logging.getLogger(__name__)
ENTRY_CHUNK = 2000
DIFF_SHOWN = 100  # items of each kind a diff page shows with their text


def release_list(*, user: Actor, dataset: str = "") -> Any:
    """Published releases for everyone with a role; curators also see drafts and approved ones."""
    qs = Release.objects.select_related("created_by", "approved_by", "published_by").prefetch_related("files")
    if not user_can_see_drafts(user=user):
        qs = qs.filter(status=ReleaseStatus.PUBLISHED)
    if dataset:
        qs = qs.filter(dataset=dataset)
    return qs


def release_get(*, user: Actor, name: str, version: str) -> Release:
    release = release_list(user=user).filter(name=name, version=version).first()
    if release is None:
        raise Http404("no such release")
    return release


def release_previous(
    *, name: str, key: tuple[int, int, int], exclude_pk: int | None = None
) -> Release | None:
    """The highest version of release ``name`` below ``key`` (X, Y, Z), whatever its status."""
    older = [
        r
        for r in Release.objects.filter(name=name).exclude(pk=exclude_pk)
        if (r.version_major, r.version_minor, r.version_patch) < key
    ]
    return max(older, key=lambda r: (r.version_major, r.version_minor, r.version_patch), default=None)


def release_entries(release: Release) -> Iterator[tuple[str, str, Any, Any]]:
    """(key, digest, payload, label sources) of the release's frozen items in release
    order, streamed (label sources are None on items frozen before they were kept)."""
    rows = (
        ReleaseItem.objects.filter(release=release)
        .order_by("position")
        .values_list("key", "digest", "payload", "label_sources")
    )
    return rows.iterator(chunk_size=ENTRY_CHUNK)


def release_file_get(*, user: Actor, release: Release, file_name: str) -> ReleaseFile:
    file = ReleaseFile.objects.filter(release=release, name=file_name).first()
    if file is None:
        raise Http404("no such file in this release")
    return file


def release_file_open_verified(*, release_file: ReleaseFile) -> BinaryIO:
    """The file opened for reading once its bytes (read through this very handle) match.

    Hashing the handle that is then served means a file swapped on disk after the check
    is not what gets sent. A refusal is logged as an error whoever asked (a served file
    that no longer matches is the operator's concern) and raised for the view to answer.
    """
    try:
        return _open_verified(release_file)
    except ReleaseIntegrityError as error:
        logger.error("refused to serve %s", error)
        raise


def _open_verified(release_file: ReleaseFile) -> BinaryIO:
    path = release_file_verified_path(release_file=release_file, check_bytes=False)
    handle = path.open("rb")
    digest = hashlib.sha256()
    size = 0
    while chunk := handle.read(1 << 20):
        digest.update(chunk)
        size += len(chunk)
    if size != release_file.size or digest.hexdigest() != release_file.sha256:
        handle.close()
        raise ReleaseIntegrityError(
            f"{release_file.release.ref}/{release_file.name}: the bytes on disk no longer match the manifest's SHA-256"
        )
    handle.seek(0)
    return handle


def release_file_verified_path(*, release_file: ReleaseFile, check_bytes: bool = True) -> Path:
    """The file's path once its bytes match the manifest (and its row); refuse otherwise."""
    release = release_file.release
    path = Path(settings.MEDIA_ROOT) / release_file.path
    expected = release_file.sha256
    listed = {f["name"]: f for f in (release.manifest or {}).get("files", [])}
    if release_file.name in listed and listed[release_file.name]["sha256"] != expected:
        raise ReleaseIntegrityError(
            f"{release.ref}/{release_file.name}: the manifest and the file row disagree"
        )
    if not path.is_file():
        raise ReleaseIntegrityError(f"{release.ref}/{release_file.name}: the file is missing on disk")
    if check_bytes and (path.stat().st_size != release_file.size or file_sha256(path) != expected):
        raise ReleaseIntegrityError(
            f"{release.ref}/{release_file.name}: the bytes on disk no longer match the manifest's SHA-256"
        )
    return path


def release_versions(*, user: Actor, name: str) -> list[Release]:
    """The versions of release ``name`` the user may see, lowest first."""
    releases = list(release_list(user=user).filter(name=name))
    return sorted(releases, key=lambda r: (r.version_major, r.version_minor, r.version_patch))


def release_item_payloads(release: Release, keys: list[str]) -> dict[str, dict[str, Any]]:
    """key -> frozen payload of the release's items with these keys."""
    return dict(ReleaseItem.objects.filter(release=release, key__in=keys).values_list("key", "payload"))


def release_pair_diff(*, old: Release, new: Release, shown: int = DIFF_SHOWN) -> dict[str, Any]:
    """What changed from ``old`` to ``new`` (two versions of one release name, either
    order): exact counts, and for up to ``shown`` items of each kind their text (added,
    removed) or the fields that changed with their values before and after."""
    diff = release_items_diff(
        dataset=new.dataset,
        previous_version=old.version,
        old=release_entries(old),
        new=release_entries(new),
    )
    added, removed, changed = shown_keys(diff, shown)
    before = release_item_payloads(old, removed + changed)
    after = release_item_payloads(new, added + changed)
    return {
        "old": old,
        "new": new,
        **items_text_diff(dataset=new.dataset, diff=diff, before=before, after=after, shown=shown),
    }


def collection_card_initial(*, name: str) -> dict[str, str]:
    """The release form's collection fields, filled with what the collection holds."""
    collection = Collection.objects.filter(name=name).first()
    if collection is None:
        return {}
    return {f"collection_{key}": value for key, value in collection.card().items() if key != "name"}


def release_collections() -> list[str]:
    """The collections a release can be narrowed to: WSC's (for WSC and WinoWhy) and a
    curator's own ComVE items'."""
    schemas = Schema.objects.values_list("collection", flat=True).distinct()
    comve = ComVEItem.objects.exclude(collection="").values_list("collection", flat=True).distinct()
    return sorted({*schemas, *comve})


def release_sources() -> list[dict[str, Any]]:
    """What can be released now: per data set and collection or split, how many items
    (ComVE's own demo items are not a release data set, so they are not listed)."""
    counts: list[tuple[str, str, str, int]] = []
    schemas = Schema.objects.values_list("collection").annotate(n=Count("id")).order_by("collection")
    counts += [(ReleaseDataset.WSC, collection, "", n) for collection, n in schemas]
    reasons = Reason.objects.values_list("schema__collection").annotate(n=Count("id"))
    counts += [(ReleaseDataset.WINOWHY, c, "", n) for c, n in reasons.order_by("schema__collection")]
    comve = (
        ComVEItem.objects.filter(dataset__in=ReleaseDataset.values)
        .values_list("dataset", "collection", "split")
        .annotate(n=Count("id"))
        .order_by("dataset", "collection", "split")
    )
    counts += [(dataset, collection, split, n) for dataset, collection, split, n in comve]
    labels = dict(ReleaseDataset.choices)
    return [
        {"dataset": d, "label": labels[d], "collection": c, "split": sp, "items": n} for d, c, sp, n in counts
    ]


def release_names(*, user: Actor) -> list[dict[str, Any]]:
    """Each release name with its data set and its highest version (to pick the next one)."""
    latest: dict[str, Release] = {}
    for release in release_list(user=user):
        key = (release.version_major, release.version_minor, release.version_patch)
        held = latest.get(release.name)
        if held is None or key > (held.version_major, held.version_minor, held.version_patch):
            latest[release.name] = release
    return [
        {"name": name, "release": r, "next": next_versions(r.version)} for name, r in sorted(latest.items())
    ]


def release_item_get(*, release: Release, item_id: str) -> dict[str, Any]:
    """An item of ``release`` by the id its files give it (``id`` in the JSONL rows): its
    key and its fields as (name, value in words) pairs, or a 404."""
    item = ReleaseItem.objects.filter(release=release, payload__id=item_id).first()
    if item is None:
        raise Http404(f"{release.name}@{release.version} has no item {item_id}")
    fields = [
        (str(k).replace("_", " "), _in_words(v)) for k, v in item.payload.items() if not isinstance(v, dict)
    ]
    return {"key": item.key, "position": item.position, "payload": item.payload, "fields": fields}


def _in_words(value: Any) -> str:
    """A payload value as a page shows it: lists joined, yes/no, a dash for nothing."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(_in_words(v) for v in value) or "–"
    return "–" if value is None or value == "" else str(value)


def release_label_source_rows(release: Release) -> list[dict[str, Any]]:
    """The release's label sources as rows: label, source, its title, items (most first)."""
    summary = release.label_sources or {}
    titles = summary.get("titles") or {}
    return [
        {"label": label, "source": source, "title": titles.get(source, source), "items": n}
        for label, per_source in sorted((summary.get("counts") or {}).items())
        for source, n in sorted(per_source.items(), key=lambda pair: (-pair[1], pair[0]))
    ]
