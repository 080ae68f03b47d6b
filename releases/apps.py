from dataclasses import replace

from django.apps import AppConfig


class ReleasesConfig(AppConfig):
    name = "releases"
    verbose_name = "Releases"
    curator_admin = True  # core.roles.curator_admin_access_grant

    def ready(self) -> None:
        from core.jobs import job_kind_register
        from releases.services import RELEASE_BUILD_JOB, release_build_enqueue

        # the sweep (core.jobs) queues a build whose worker was lost again
        job_kind_register(replace(RELEASE_BUILD_JOB, requeue=lambda pk: release_build_enqueue(release_id=pk)))
