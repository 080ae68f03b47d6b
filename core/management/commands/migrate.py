"""``migrate`` as the owner of the tables: when ``DATABASE_OWNER_URL`` is set, Django's
migrate runs through the ``owner`` alias unless ``--database`` names another; the
application's own role (``DATABASE_URL``) cannot create or alter tables (core.db_roles)."""

from __future__ import annotations

from typing import Any

from django.core.management.commands import migrate
from django.db import DEFAULT_DB_ALIAS

from core.db_roles import owner_alias


class Command(migrate.Command):
    help = migrate.Command.help + " As the owner role (DATABASE_OWNER_URL) when that is set."

    def handle(self, *args: Any, **options: Any) -> None:
        if options.get("database") == DEFAULT_DB_ALIAS:
            options["database"] = owner_alias()
        super().handle(*args, **options)
