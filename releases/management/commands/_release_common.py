"""Shared bits of the release_* commands: --user, NAME@X.Y.Z, domain errors -> CommandError."""

from collections.abc import Callable
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.roles import user_is_curator
from releases.errors import ReleaseError
from releases.models import Release
from releases.semver import parse_ref

USER_HELP = (
    "Act as this user (must be a curator). Without --user the command acts as the system: "
    "whoever can run commands on the server already holds the database."
)


def add_user_argument(parser: CommandParser) -> None:
    parser.add_argument("--user", default="", help=USER_HELP)


def resolve_user(username: str) -> Any:
    if not username:
        return None
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise CommandError(f"no user named {username!r}")
    if not user_is_curator(user):
        raise CommandError(
            f"user {username!r} is not a curator; only curators create, approve and publish releases"
        )
    return user


def get_release(ref: str) -> Release:
    try:
        name, version = parse_ref(ref)
    except ReleaseError as error:
        raise CommandError(str(error)) from error
    release = Release.objects.filter(name=name, version=version).first()
    if release is None:
        raise CommandError(f"no release {ref}")
    return release


class ReleaseStepCommand(BaseCommand):
    """A command that moves one release (NAME@X.Y.Z) a step on, as --user:
    subclasses set ``help`` and ``step`` (a service taking release= and user=)."""

    step: Callable[..., Release]

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("ref", help="NAME@X.Y.Z")
        add_user_argument(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        user = resolve_user(options["user"])
        release = get_release(options["ref"])
        try:
            release = self.step(release=release, user=user)
        except ReleaseError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(f"{release.ref} is {release.status}")
