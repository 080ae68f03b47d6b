"""The application's database role reads and writes rows but owns nothing: it cannot
disable or drop the triggers that guard published releases, and those still refuse its
UPDATE of one (issue 16, item 12). PostgreSQL only; `migrate` runs as the owner."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import DEFAULT_DB_ALIAS, DatabaseError, IntegrityError, connection

from annotation.models import Judgment
from annotation.services import assignment_next, campaign_create, judgment_submit
from core.db_roles import owner_alias
from releases.models import Release
from tests.releases.factories import make_schemas, published_release

GUARD_ATTACKS = [
    "ALTER TABLE datasets_release DISABLE TRIGGER datasets_release_published_guard",
    "ALTER TABLE datasets_release DISABLE TRIGGER ALL",
    "DROP TRIGGER datasets_release_published_guard ON datasets_release",
    "DROP FUNCTION datasets_release_guard() CASCADE",
    "CREATE OR REPLACE FUNCTION datasets_release_guard() RETURNS trigger AS $$ BEGIN RETURN NEW; END; $$ LANGUAGE plpgsql",
    "ALTER TABLE datasets_release OWNER TO CURRENT_USER",
    "TRUNCATE datasets_releaseitem",
]


def _role_name() -> str:
    database = str(connection.settings_dict["NAME"]).removeprefix("test_")
    return f"{database}_app_test"[:63]


def _drop_role(role: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role])
        if cursor.fetchone() is not None:
            cursor.execute(f'DROP OWNED BY "{role}"')
            cursor.execute(f'DROP ROLE "{role}"')


@contextmanager
def _connected_as(role: str, password: str) -> Iterator[None]:
    """Django's connection, reconnected as ``role`` (as the running site would be)."""
    original = dict(connection.settings_dict)
    connection.close()
    connection.settings_dict.update(USER=role, PASSWORD=password)
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(original)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_app_role_writes_judgments_but_cannot_touch_the_release_guards(
    settings, tmp_path, curator, annotator, monkeypatch, django_capture_on_commit_callbacks
):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: set TEST_DATABASE_URL=postgres://... (SQLite has no roles)")
    settings.MEDIA_ROOT = tmp_path / "media"
    make_schemas(4)
    release = published_release(django_capture_on_commit_callbacks, user=curator, changelog="First.")
    campaign = campaign_create(name="sw", task="switchability", items="schemas", k=1)
    role, password = _role_name(), "app-role-test-password"
    _drop_role(role)  # left by a run that was killed midway (roles outlive the test database)
    monkeypatch.setenv("WINNOW_APP_DB_PASSWORD", password)
    out = StringIO()
    call_command("db_roles", role, "--password-env", "WINNOW_APP_DB_PASSWORD", stdout=out)
    assert f"role {role}: created" in out.getvalue() and "owns nothing" in out.getvalue()
    try:
        with _connected_as(role, password):
            with connection.cursor() as cursor:
                cursor.execute("SELECT current_user")
                assert cursor.fetchone()[0] == role
            # the site's work: lease an item and record a judgment
            lease = assignment_next(campaign=campaign, annotator=annotator)
            assert lease is not None
            judgment_submit(annotator=annotator, assignment=lease, answer="switchable")
            assert Judgment.objects.filter(annotator=annotator).count() == 1
            # ...but not the guards of published releases
            for attack in GUARD_ATTACKS:
                with pytest.raises(DatabaseError, match="must be owner|permission denied"):
                    with connection.cursor() as cursor:
                        cursor.execute(attack)
            with pytest.raises(IntegrityError, match="published release is immutable"):
                with connection.cursor() as cursor:
                    cursor.execute(
                        "UPDATE datasets_release SET changelog = 'changed' WHERE id = %s", [release.pk]
                    )
        # a second run (after new migrations, say) changes nothing and still grants
        call_command("db_roles", role, stdout=out)
        assert f"role {role}: updated" in out.getvalue()
        assert Release.objects.get(pk=release.pk).changelog == "First."
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT tgenabled FROM pg_trigger WHERE tgname = 'datasets_release_published_guard'"
            )
            assert cursor.fetchone()[0] == "O"  # still enabled
    finally:
        _drop_role(role)


@pytest.mark.django_db
def test_db_roles_refuses_the_owner_itself_and_sqlite():
    if connection.vendor == "postgresql":
        owner = str(connection.settings_dict["USER"])
        with pytest.raises(CommandError, match="the role connected"):
            call_command("db_roles", owner, stdout=StringIO())
    else:
        with pytest.raises(CommandError, match="PostgreSQL matter"):
            call_command("db_roles", "winnow_app", stdout=StringIO())


def test_migrate_runs_as_the_owner_when_one_is_configured(monkeypatch):
    from django.conf import settings
    from django.core.management.commands import migrate

    asked: list[str] = []
    monkeypatch.setattr(migrate.Command, "handle", lambda self, *a, **o: asked.append(o["database"]))
    call_command("migrate", "--check", stdout=StringIO())
    assert owner_alias() == DEFAULT_DB_ALIAS and asked == [DEFAULT_DB_ALIAS]
    monkeypatch.setitem(settings.DATABASES, "owner", dict(settings.DATABASES["default"]))
    call_command("migrate", "--check", stdout=StringIO())
    call_command("migrate", "--check", "--database", "default", stdout=StringIO())
    assert asked == [DEFAULT_DB_ALIAS, "owner", "owner"]


def test_the_settings_add_the_owner_alias_from_the_environment():
    import subprocess
    import sys
    from pathlib import Path

    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    env.update(
        DATABASE_URL="postgres://winnow_app:app@db.example:5432/winnow",
        DATABASE_OWNER_URL="postgres://winnow_owner:owner@db.example:5432/winnow",
    )
    code = "from django.conf import settings as s; d = s.DATABASES; print(d['default']['USER'], d['owner']['USER'], d['owner']['NAME'])"
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=Path(__file__).resolve().parent.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "winnow_app winnow_owner winnow" in result.stdout, result.stdout + result.stderr
