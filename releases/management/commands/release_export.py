from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from releases import services
from releases.errors import ReleaseError
from releases.management.commands._release_common import add_user_argument, get_release, resolve_user


class Command(BaseCommand):
    help = (
        "Write a release's files (NAME@X.Y.Z) into an empty folder from its frozen items; when the "
        "release is built, every file must be byte-identical to its manifest."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("ref", help="NAME@X.Y.Z")
        parser.add_argument("--out", required=True, help="Folder to write (new or empty)")
        add_user_argument(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        user = resolve_user(options["user"])
        release = get_release(options["ref"])
        try:
            files = services.release_export(release=release, out_dir=Path(options["out"]), user=user)
        except ReleaseError as error:
            raise CommandError(str(error)) from error
        for file in files:
            self.stdout.write(f"{file.sha256}  {file.size:>12}  {file.name}")
        checked = " (identical to the manifest)" if release.manifest else ""
        self.stdout.write(f"exported {release.ref} to {options['out']}{checked}")
