"""Release reads, narrowed to what the user may see (out of reach = 404)."""

import hashlib
import logging
from pathlib import Path
from typing import Any, BinaryIO

from django.conf import settings
from django.http import Http404

from core.roles import Actor
from releases.errors import ReleaseIntegrityError
from releases.exports import file_sha256
from releases.models import Release, ReleaseFile, ReleaseItem, ReleaseStatus
from releases.permissions import user_can_see_drafts

logger = logging.getLogger(__name__)


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
