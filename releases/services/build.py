"""Building a release's files: the build's lease (core.jobs), its queueing once the draft is
committed, the streamed payloads, the temporary folder swapped in whole, the frozen files."""

import logging
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.jobs import Heartbeat, JobKind, job_claim, job_send, job_take, job_update, owner_token
from releases.diff import first_version_diff, release_items_diff
from releases.errors import ReleaseError, ReleaseImmutableError
from releases.exports import build_release_folder, verify_folder
from releases.models import BuildStatus, Release, ReleaseFile, ReleaseItem, ReleaseStatus
from releases.selectors import release_entries
from releases.services.common import BATCH, release_folder, release_meta

logger = logging.getLogger(__name__)


def _queue_build_on_commit(release_id: int, *, force: bool = False) -> None:
    """delay_on_commit, except that a broker that cannot take the message (down, its
    folder missing) fails the build with a message naming the broker instead of failing
    the request whose transaction has already committed; `manage.py release_build` then
    builds it."""
    transaction.on_commit(lambda: release_build_enqueue(release_id=release_id, force=force))


def release_build_enqueue(*, release_id: int, force: bool = False) -> bool:
    from releases.tasks import release_build_task

    def failed(message: str) -> None:
        _set_build(
            release_id,
            build_status=BuildStatus.FAILED,
            build_error=f"{message}; or run `manage.py release_build NAME@VERSION`",
        )

    return job_send(lambda: release_build_task.delay(release_id=release_id, force=force), on_error=failed)


def release_diff_compute(*, release: Release, previous: Release | None) -> dict[str, Any]:
    if previous is None:  # no need to read the items back
        return first_version_diff(ReleaseItem.objects.filter(release=release).count())
    return release_items_diff(
        dataset=release.dataset,
        previous_version=previous.version if previous else None,
        old=release_entries(previous),
        new=release_entries(release),
    )


def release_payloads(release: Release) -> Iterator[Any]:
    """The frozen payloads in release order, streamed a page at a time. Each page is one
    finished query, not a cursor held open across the build: on SQLite an open read would
    keep the build's progress writes from the heartbeat's (or fail them)."""
    last = -1
    while True:
        page = list(
            ReleaseItem.objects.filter(release=release, position__gt=last)
            .order_by("position")
            .values_list("position", "payload")[:BATCH]
        )
        for _, payload in page:
            yield payload
        if len(page) < BATCH:
            return
        last = page[-1][0]


def _set_build(release_id: int, **fields: Any) -> None:
    Release.objects.filter(pk=release_id).exclude(status=ReleaseStatus.PUBLISHED).update(**fields)


def _freeze_on_disk(folder: Path) -> None:
    for path in folder.iterdir():
        path.chmod(0o444)


def release_build_temp_clean(release_id: int) -> list[Path]:
    """Remove the temporary folders that killed builds of the release left beside its folder."""
    release = Release.objects.filter(pk=release_id).first()
    if release is None:
        return []
    folder = release_folder(release)
    left = sorted(folder.parent.glob(f".{release.version}.build-*")) if folder.parent.is_dir() else []
    left += sorted(folder.parent.glob(f".{release.version}.old-*")) if folder.parent.is_dir() else []
    for path in left:
        _unfreeze(path)
        shutil.rmtree(path, ignore_errors=True)
    return left


def _unfreeze(path: Path) -> None:
    """A frozen (read-only) temporary folder can be removed once its files are writable."""
    for child in path.rglob("*"):
        if child.is_file():
            child.chmod(0o644)


# The build's lease (core.jobs); releases.apps registers it with the task that requeues it.
RELEASE_BUILD_JOB = JobKind(
    label="release build",
    model=Release,
    status_field="build_status",
    queued=BuildStatus.QUEUED,
    running=BuildStatus.RUNNING,
    failed=BuildStatus.FAILED,
    error_field="build_error",
    cleanup=release_build_temp_clean,
)


def release_build(*, release_id: int, force: bool = False, wait: bool = False) -> Release:
    """Build the release's files under MEDIA_ROOT/releases/NAME/VERSION/ (idempotent).

    Safe to run twice: a release whose files are built and match its manifest is left as
    it is, and a build that a live worker runs is left to it (``wait``: a worker's
    delivery waits up to one stale window, then takes over a build whose worker was lost).
    A published release is never rebuilt in place.
    """
    release = Release.objects.get(pk=release_id)
    folder = release_folder(release)
    built = release.build_status == BuildStatus.DONE and release.manifest
    if built and not verify_folder(manifest=release.manifest, folder=folder):
        if not force or release.is_published:
            return release
    if release.is_published:
        raise ReleaseImmutableError(
            f"release {release.ref} is published and its files no longer match the manifest; "
            "it cannot be rebuilt in place (restore the files from `release_export`, or publish a new version)"
        )
    # Claim the build with a lease: a duplicate delivery finds it running on a live
    # worker and leaves it; one whose worker was lost (no heartbeat) is taken over.
    claimable = (BuildStatus.NONE, BuildStatus.QUEUED, BuildStatus.FAILED) + (
        (BuildStatus.DONE,) if force else ()
    )
    finished = () if force else (BuildStatus.DONE,)
    if wait:
        owner = job_take(
            RELEASE_BUILD_JOB,
            release.pk,
            claimable=claimable,
            finished=finished,
            build_progress=0,
            build_error="",
        )
    else:
        owner = owner_token()
        if not job_claim(
            RELEASE_BUILD_JOB, release.pk, owner=owner, claimable=claimable, build_progress=0, build_error=""
        ):
            owner = None
    if owner is None:
        release.refresh_from_db()
        return release
    release_build_temp_clean(release.pk)  # what a killed build of this release left
    if transaction.get_connection().in_atomic_block:
        return _release_build_leased(release=release, folder=folder, owner=owner)
    with Heartbeat(RELEASE_BUILD_JOB, release.pk, owner):
        return _release_build_leased(release=release, folder=folder, owner=owner)


def _release_build_leased(*, release: Release, folder: Path, owner: str) -> Release:
    total = max(release.item_count, 1)
    tmp = folder.parent / f".{release.version}.build-{uuid.uuid4().hex}"

    def progress(done: int) -> None:  # only while this copy holds the lease (renewing it)
        job_update(RELEASE_BUILD_JOB, release.pk, owner, build_progress=min(99, done * 100 // total))

    try:
        files = build_release_folder(
            meta=release_meta(release), payloads=release_payloads(release), out_dir=tmp, progress=progress
        )
        _freeze_on_disk(tmp)
        import json

        manifest = json.loads((tmp / "manifest.json").read_text(encoding="utf-8"))
        if not Release.objects.filter(pk=release.pk, lease_owner=owner).exists():
            _unfreeze(tmp)
            shutil.rmtree(tmp, ignore_errors=True)  # another worker took the build over
            release.refresh_from_db()
            return release
        old = folder.parent / f".{release.version}.old-{uuid.uuid4().hex}"
        if folder.exists():
            os.replace(folder, old)
        os.replace(tmp, folder)
        shutil.rmtree(old, ignore_errors=True)
        with transaction.atomic():
            ReleaseFile.objects.filter(release=release).delete()
            ReleaseFile.objects.bulk_create(
                [
                    ReleaseFile(
                        release=release,
                        name=f.name,
                        size=f.size,
                        sha256=f.sha256,
                        items=f.items,
                        path=str((folder / f.name).relative_to(settings.MEDIA_ROOT)),
                    )
                    for f in files
                ]
            )
            job_update(
                RELEASE_BUILD_JOB,
                release.pk,
                owner,
                manifest=manifest,
                build_status=BuildStatus.DONE,
                build_progress=100,
                build_error="",
                built_at=timezone.now(),
                lease_owner="",
            )
    except ReleaseError:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    except Exception as error:
        shutil.rmtree(tmp, ignore_errors=True)
        job_update(
            RELEASE_BUILD_JOB,
            release.pk,
            owner,
            build_status=BuildStatus.FAILED,
            build_error=f"{type(error).__name__}: {error}",
            lease_owner="",
        )
        raise
    release.refresh_from_db()
    return release
