"""python manage.py db_roles APP_ROLE [--password-env VAR]"""

from __future__ import annotations

import os
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.db_roles import DatabaseRoleError, app_role_grant, owner_alias


class Command(BaseCommand):
    help = (
        "PostgreSQL: create or update the application's database role APP_ROLE with row access only "
        "(SELECT, INSERT, UPDATE, DELETE on every table, USAGE on the sequences, and the same by default "
        "for tables created later), owning nothing, so the running site cannot alter tables or drop the "
        "triggers that guard published releases. Run it as the owner of the tables (DATABASE_OWNER_URL, "
        "else DATABASE_URL), after `migrate`; then point DATABASE_URL at APP_ROLE. Safe to run again. "
        "See the docs page /docs/operations/#two-database-roles."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("role", help="the application's role, e.g. winnow_app")
        parser.add_argument(
            "--password-env",
            metavar="VAR",
            help="set the role's password from this environment variable (never on the command line)",
        )
        parser.add_argument(
            "--database",
            default=None,
            help="database alias to run as (default: 'owner' if configured, else 'default')",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        password = None
        if options["password_env"]:
            password = os.environ.get(options["password_env"])
            if not password:
                raise CommandError(f"the environment variable {options['password_env']} is empty or unset")
        using = options["database"] or owner_alias()
        try:
            report = app_role_grant(role=options["role"], password=password, using=using)
        except DatabaseRoleError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(
            f"role {report.role}: {'created' if report.created else 'updated'}; rows of {report.tables} tables"
            f" and {report.sequences} sequences, and of the tables {report.owner} creates later; owns nothing"
        )
