"""python manage.py seed_demo: demo accounts and a little demo data (safe to run again)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from core.roles import Role, curator_admin_access_grant
from datasets.services import dataset_import

DEMO_DIR = Path(__file__).resolve().parents[2] / "demo"

# username, password, role, superuser
ACCOUNTS = [
    ("admin", "admin", None, True),
    ("curator", "curator", Role.CURATOR, False),
    ("annotator1", "annotator1", Role.ANNOTATOR, False),
    ("annotator2", "annotator2", Role.ANNOTATOR, False),
    # five annotators: the demo campaigns ask up to K = 5 judgments per item (WinoWhy's votes)
    ("annotator3", "annotator3", Role.ANNOTATOR, False),
    ("annotator4", "annotator4", Role.ANNOTATOR, False),
    ("annotator5", "annotator5", Role.ANNOTATOR, False),
    ("researcher", "researcher", Role.RESEARCHER, False),
]


class Command(BaseCommand):
    help = (
        "Create the demo accounts (admin/admin, curator/curator, annotator1/annotator1 .. "
        "annotator5/annotator5, researcher/researcher) and import the demo data written for Winnow "
        "(datasets/demo/: 6 Winograd schemas in 3 twin pairs with reasons, 5 ComVE items) through the "
        "same importer as the real data. Running it again creates and changes no account or item (the import batches it logs say so). Refused in production."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--no-data", action="store_true", help="accounts only")

    def handle(self, *args: Any, **options: Any) -> None:
        if getattr(settings, "WINNOW_PRODUCTION", False):
            raise CommandError(
                "seed_demo creates accounts with known passwords; it does not run in production."
            )
        User = get_user_model()
        with transaction.atomic():
            users = {}
            for username, password, role, superuser in ACCOUNTS:
                user, created = User.objects.get_or_create(username=username)
                if created:
                    user.set_password(password)
                if superuser:
                    user.is_superuser = True
                    user.is_staff = True
                user.save()
                if role is not None:
                    user.groups.add(Group.objects.get_or_create(name=role.value)[0])
                users[username] = user
                self.stdout.write(f"account {username}: {'created' if created else 'exists'}")
            curator_admin_access_grant(users=[users["curator"]])
        if options["no_data"]:
            return
        demo = DEMO_DIR
        runs: list[tuple[str, list[Path], dict[str, Any]]] = [
            (
                "winowhy",
                [demo / "wsc" / "questions.json"],
                {"categories": demo / "wsc" / "categories.json", "collection": "demo"},
            ),
            (
                "trichelair",
                [demo / "trichelair" / "switched.json", demo / "trichelair" / "associative.json"],
                {"collection": "demo"},
            ),
            ("comve", [demo / "comve"], {"dataset": "demo", "split": "trial"}),
        ]
        for fmt, paths, import_options in runs:
            result = dataset_import(format=fmt, paths=paths, options=import_options, user=users["admin"])
            self.stdout.write(f"demo {fmt}: {result.describe()}")
