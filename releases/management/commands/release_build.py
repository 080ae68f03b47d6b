from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from releases import services
from releases.errors import ReleaseError
from releases.management.commands._release_common import add_user_argument, get_release, resolve_user


class Command(BaseCommand):
    help = (
        "Build (or, with --force, rebuild) a draft or approved release's files in this process, "
        "e.g. after a failed build. A published release is only checked, never rebuilt."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("ref", help="NAME@X.Y.Z")
        parser.add_argument("--force", action="store_true", help="Rebuild even when the files match")
        add_user_argument(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        user = resolve_user(options["user"])
        release = get_release(options["ref"])
        try:
            if not release.is_published:
                services.require_curator(user, "build")
            release = services.release_build(release_id=release.pk, force=options["force"])
        except ReleaseError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(f"{release.ref}: files {release.build_status}")
