"""Database triggers: refuse UPDATE/DELETE of a published release and of its items and files.

Django refuses these writes in save(), delete() and the querysets; the triggers make the
rule hold underneath Django too (raw SQL, QuerySet._update, cascades), on PostgreSQL and
SQLite alike. They fire on rows, so PostgreSQL's TRUNCATE (test flush) is unaffected.
"""

from django.db import migrations

MESSAGE = "published release is immutable; a fix is a new version"

POSTGRES_FORWARD = [
    f"""
    CREATE OR REPLACE FUNCTION datasets_release_guard() RETURNS trigger AS $$
    BEGIN
      IF OLD.status = 'published' THEN
        RAISE EXCEPTION USING MESSAGE = '{MESSAGE} (release ' || OLD.id || ')', ERRCODE = 'integrity_constraint_violation';
      END IF;
      IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
      RETURN NEW;
    END;
    $$ LANGUAGE plpgsql;
    """,
    """
    CREATE TRIGGER datasets_release_published_guard BEFORE UPDATE OR DELETE ON datasets_release
    FOR EACH ROW EXECUTE FUNCTION datasets_release_guard();
    """,
    f"""
    CREATE OR REPLACE FUNCTION datasets_release_part_guard() RETURNS trigger AS $$
    BEGIN
      IF TG_OP IN ('UPDATE', 'DELETE') AND EXISTS (
          SELECT 1 FROM datasets_release WHERE id = OLD.release_id AND status = 'published') THEN
        RAISE EXCEPTION USING MESSAGE = '{MESSAGE} (release ' || OLD.release_id || ')', ERRCODE = 'integrity_constraint_violation';
      END IF;
      IF TG_OP IN ('INSERT', 'UPDATE') AND EXISTS (
          SELECT 1 FROM datasets_release WHERE id = NEW.release_id AND status = 'published') THEN
        RAISE EXCEPTION USING MESSAGE = '{MESSAGE} (release ' || NEW.release_id || ')', ERRCODE = 'integrity_constraint_violation';
      END IF;
      IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
      RETURN NEW;
    END;
    $$ LANGUAGE plpgsql;
    """,
    """
    CREATE TRIGGER datasets_releaseitem_published_guard BEFORE INSERT OR UPDATE OR DELETE
    ON datasets_releaseitem FOR EACH ROW EXECUTE FUNCTION datasets_release_part_guard();
    """,
    """
    CREATE TRIGGER datasets_releasefile_published_guard BEFORE INSERT OR UPDATE OR DELETE
    ON datasets_releasefile FOR EACH ROW EXECUTE FUNCTION datasets_release_part_guard();
    """,
]
POSTGRES_BACKWARD = [
    "DROP TRIGGER IF EXISTS datasets_releasefile_published_guard ON datasets_releasefile;",
    "DROP TRIGGER IF EXISTS datasets_releaseitem_published_guard ON datasets_releaseitem;",
    "DROP TRIGGER IF EXISTS datasets_release_published_guard ON datasets_release;",
    "DROP FUNCTION IF EXISTS datasets_release_part_guard();",
    "DROP FUNCTION IF EXISTS datasets_release_guard();",
]


def _sqlite_forward() -> list[str]:
    statements = []
    for op in ("UPDATE", "DELETE"):
        statements.append(
            f"""
            CREATE TRIGGER datasets_release_published_no_{op.lower()} BEFORE {op} ON datasets_release
            FOR EACH ROW WHEN OLD.status = 'published'
            BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END;
            """
        )
    for table in ("datasets_releaseitem", "datasets_releasefile"):
        for op, row in (("INSERT", "NEW"), ("UPDATE", "OLD"), ("UPDATE", "NEW"), ("DELETE", "OLD")):
            statements.append(
                f"""
                CREATE TRIGGER {table}_published_no_{op.lower()}_{row.lower()} BEFORE {op} ON {table}
                FOR EACH ROW WHEN (SELECT status FROM datasets_release WHERE id = {row}.release_id) = 'published'
                BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END;
                """
            )
    return statements


def _sqlite_backward() -> list[str]:
    names = [f"datasets_release_published_no_{op}" for op in ("update", "delete")]
    for table in ("datasets_releaseitem", "datasets_releasefile"):
        for op, row in (("insert", "new"), ("update", "old"), ("update", "new"), ("delete", "old")):
            names.append(f"{table}_published_no_{op}_{row}")
    return [f"DROP TRIGGER IF EXISTS {name};" for name in names]


def _run(statements_by_vendor):  # type: ignore[no-untyped-def]
    def run(apps, schema_editor):  # type: ignore[no-untyped-def]
        vendor = schema_editor.connection.vendor
        statements = statements_by_vendor.get(vendor)
        if statements is None:
            raise RuntimeError(f"no published-release guard triggers for the {vendor} database")
        for statement in statements() if callable(statements) else statements:
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("datasets", "0003_releases")]

    operations = [
        migrations.RunPython(
            _run({"postgresql": POSTGRES_FORWARD, "sqlite": _sqlite_forward}),
            _run({"postgresql": POSTGRES_BACKWARD, "sqlite": _sqlite_backward}),
        ),
    ]
