from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from datasets.management.commands._release_common import add_user_argument, get_release, resolve_user
from datasets.releases import services
from datasets.releases.errors import ReleaseError


class Command(BaseCommand):
    help = "Publish a release (NAME@X.Y.Z); curators only."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("ref", help="NAME@X.Y.Z")
        add_user_argument(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        user = resolve_user(options["user"])
        release = get_release(options["ref"])
        try:
            release = services.release_publish(release=release, user=user)
        except ReleaseError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(f"{release.ref} is {release.status}")
