"""Celery tasks of releases: ids in, a service call, safe to run twice."""

from celery import shared_task

from releases import services
from releases.models import Release


@shared_task(name="releases.build", time_limit=3600, soft_time_limit=3500, reject_on_worker_lost=True)
def release_build_task(*, release_id: int, force: bool = False) -> str:
    release = Release.objects.filter(pk=release_id).first()
    if release is None:
        return "gone"
    # release_build re-reads the row and returns at once when the files are built and
    # match the manifest, and leaves a build that a live worker holds to it (waiting up
    # to one stale window to take over one whose worker was lost).
    release = services.release_build(release_id=release_id, force=force, wait=True)
    return release.build_status
