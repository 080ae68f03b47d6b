"""Two PostgreSQL roles (issue 16, item 12): the owner, which creates and alters the tables
(``manage.py migrate``, through ``DATABASE_OWNER_URL``), and the application's role
(``DATABASE_URL``), which reads and writes rows and nothing else. Owning no table, the
application cannot ``ALTER TABLE ... DISABLE TRIGGER`` or drop the triggers that keep a
published release immutable, so a bug or an injected statement in the running site cannot
either; the triggers still refuse its UPDATE or DELETE of a published release.

``app_role_grant`` is run by the owner (``manage.py db_roles``); it is safe to run again,
and again after migrations that add tables (default privileges cover those anyway).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from psycopg import sql

from core.errors import WinnowError

#: The alias ``migrate`` and ``db_roles`` use when ``DATABASE_OWNER_URL`` is set.
OWNER_ALIAS = "owner"
#: What the application's role may do: rows only, and the identity sequences behind them.
TABLE_PRIVILEGES = "SELECT, INSERT, UPDATE, DELETE"
SEQUENCE_PRIVILEGES = "USAGE, SELECT"


class DatabaseRoleError(WinnowError):
    """The roles cannot be set up as asked."""


def owner_alias() -> str:
    """The database alias to change the schema through: the owner's when configured."""
    return OWNER_ALIAS if OWNER_ALIAS in settings.DATABASES else DEFAULT_DB_ALIAS


@dataclass(frozen=True)
class GrantReport:
    role: str
    created: bool
    owner: str
    tables: int
    sequences: int


def app_role_grant(*, role: str, password: str | None = None, using: str | None = None) -> GrantReport:
    """Create (or update) the application's role and grant it row access to every table
    of the public schema, now and (default privileges) for tables the owner creates later.
    Refused when the role is a superuser, owns a table, or is the role connected."""
    connection = connections[using or owner_alias()]
    if connection.vendor != "postgresql":
        raise DatabaseRoleError(
            f"database roles are a PostgreSQL matter; this database is {connection.vendor}."
        )
    ident = sql.Identifier(role)
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user, current_database()")
        owner, database = cursor.fetchone()
        if role == owner:
            raise DatabaseRoleError(
                f"{role} is the role connected (the owner); the application needs a role of its own."
            )
        cursor.execute("SELECT rolsuper FROM pg_roles WHERE rolname = %s", [role])
        row = cursor.fetchone()
        if row is not None and row[0]:
            raise DatabaseRoleError(f"{role} is a superuser, which no privilege limits.")
        cursor.execute(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = 'public' AND pg_get_userbyid(c.relowner) = %s",
            [role],
        )
        if cursor.fetchone()[0]:
            raise DatabaseRoleError(
                f"{role} owns tables; as a superuser run REASSIGN OWNED BY {role} TO {owner}; first"
                " (docs/operations.md, 'Two database roles')."
            )
        created = row is None
        statement = (
            "CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE" if created else "ALTER ROLE {} LOGIN"
        )
        if password is not None:
            cursor.execute(sql.SQL(statement + " PASSWORD {}").format(ident, sql.Literal(password)))
        else:
            cursor.execute(sql.SQL(statement).format(ident))
        grants = [
            sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(sql.Identifier(database), ident),
            sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(ident),
            sql.SQL(f"GRANT {TABLE_PRIVILEGES} ON ALL TABLES IN SCHEMA public TO {{}}").format(ident),
            sql.SQL(f"GRANT {SEQUENCE_PRIVILEGES} ON ALL SEQUENCES IN SCHEMA public TO {{}}").format(ident),
            sql.SQL(
                f"ALTER DEFAULT PRIVILEGES FOR ROLE {{}} IN SCHEMA public GRANT {TABLE_PRIVILEGES} ON TABLES TO {{}}"
            ).format(sql.Identifier(owner), ident),
            sql.SQL(
                f"ALTER DEFAULT PRIVILEGES FOR ROLE {{}} IN SCHEMA public GRANT {SEQUENCE_PRIVILEGES} ON SEQUENCES TO {{}}"
            ).format(sql.Identifier(owner), ident),
        ]
        for grant in grants:
            cursor.execute(grant)
        cursor.execute(
            "SELECT count(*) FILTER (WHERE c.relkind IN ('r', 'p')), count(*) FILTER (WHERE c.relkind = 'S')"
            " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'"
            " AND has_table_privilege(%s, c.oid, 'SELECT')",
            [role],
        )
        tables, sequences = cursor.fetchone()
    return GrantReport(role=role, created=created, owner=owner, tables=tables, sequences=sequences)
