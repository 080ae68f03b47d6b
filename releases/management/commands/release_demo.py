"""manage.py release_demo: publish the demo releases (safe to run again)."""

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.roles import user_is_curator
from datasets.models import Schema
from releases import services
from releases.errors import ReleaseError
from releases.models import Release

VERSION = "1.0.0"
# name, data set; both take the demo collection's schemas (and their reasons)
DEMO_RELEASES = [("demo-wsc", "wsc"), ("demo-winowhy", "winowhy")]


class Command(BaseCommand):
    help = (
        "Publish demo-wsc@1.0.0 and demo-winowhy@1.0.0 from the demo schemas and their reasons "
        "(after seed_demo): created, built in this process, approved and published by the "
        "curator account when it exists, through the same services as any release. A release "
        "that exists already is left as it is. Refused in production."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", default="demo", help="schemas collection to release")

    def handle(self, *args: Any, **opts: Any) -> None:
        if getattr(settings, "WINNOW_PRODUCTION", False):
            raise CommandError("release_demo is for the embedded demo; it does not run in production.")
        collection = opts["collection"]
        if not Schema.objects.filter(collection=collection).exists():
            raise CommandError(f"no schemas in collection {collection!r}: run `manage.py seed_demo` first")
        user = get_user_model().objects.filter(username="curator").first()
        if user is not None and not user_is_curator(user):
            user = None
        for name, dataset in DEMO_RELEASES:
            existing = Release.objects.filter(name=name, version=VERSION).first()
            if existing is not None:
                self.stdout.write(f"{existing.ref}: exists ({existing.status}); left as it is")
                continue
            try:
                release = services.release_create(
                    name=name,
                    dataset=dataset,
                    version=VERSION,
                    collection=collection,
                    changelog="Demo items written for Winnow (datasets/demo/), released by release_demo.",
                    user=user,
                )
                release = services.release_build(release_id=release.pk)
                # The demo has one curator: when the server asks for a second approver
                # (WINNOW_RELEASE_SECOND_APPROVER), the system approves what it created.
                approver = None if settings.WINNOW_RELEASE_SECOND_APPROVER else user
                release = services.release_approve(release=release, user=approver)
                release = services.release_publish(release=release, user=user)
            except ReleaseError as error:
                raise CommandError(f"{name}@{VERSION}: {error}") from error
            self.stdout.write(f"{release.ref}: published, {release.item_count} items")
