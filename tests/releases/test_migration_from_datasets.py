"""A database built at the previous main (release models in ``datasets``) migrates to the
``releases`` app without losing a row, and its published releases still refuse changes.

The database is a fresh one of the kind the suite runs on (a SQLite file, or a PostgreSQL
database created for the test), migrated in subprocesses exactly as `manage.py migrate`
would: first to the previous main's leaf migrations, seeded through that state's models
(releases published, a permission granted, an admin log entry), then forward.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
PROBE = Path(__file__).with_name("migration_probe.py")
PREVIOUS_MAIN = [
    ("datasets", "0004_release_published_guards"),
    ("annotation", "0002_assignment_indexes"),
    ("evaluation", "0002_cloze_run"),
    ("admin", "0003_logentry_add_action_flag_choices"),
    ("sessions", "0001_initial"),
]


@pytest.fixture
def database_url(tmp_path: Path) -> Iterator[str]:
    """A new, empty database of the suite's kind."""
    db = settings.DATABASES["default"]
    if db["ENGINE"] != "django.db.backends.postgresql":
        yield f"sqlite:///{tmp_path / 'previous-main.sqlite3'}"
        return
    import psycopg

    name = f"winnow_migration_{uuid.uuid4().hex[:12]}"
    admin = psycopg.conninfo.make_conninfo(
        host=db.get("HOST") or None,
        port=db.get("PORT") or None,
        user=db.get("USER") or None,
        password=db.get("PASSWORD") or None,
        dbname="postgres",
    )
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        auth = f"{db['USER']}:{db['PASSWORD']}@" if db.get("USER") else ""
        yield f"postgres://{auth}{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _run(url: str, *args: str) -> str:
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "config.settings"}
    result = subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, f"{' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def _probe(url: str, step: str) -> dict[str, Any]:
    return json.loads(_run(url, str(PROBE), step).strip().splitlines()[-1])


@pytest.mark.slow
def test_a_database_at_the_previous_main_migrates_with_every_release_item_and_file(database_url: str) -> None:
    for app, migration in PREVIOUS_MAIN:
        _run(database_url, "manage.py", "migrate", "--noinput", app, migration)
    plan = _run(database_url, "manage.py", "showmigrations", "releases", "datasets")
    assert "[ ] 0001_initial" in plan and "[ ] 0005_releases_moved_to_releases_app" in plan

    before = _probe(database_url, "seed")
    _run(database_url, "manage.py", "migrate", "--noinput")
    after = _probe(database_url, "check")

    # every release, item and file as it was, field by field
    assert after["rows"] == before["rows"]
    assert len(after["rows"]["releases"]) == 3 and len(after["rows"]["items"]) == 9
    assert len(after["rows"]["files"]) == 3
    # published releases still refuse changes, by the models and by the triggers underneath
    assert after["orm_update_refused"] is True
    assert after["raw_writes_refused"] == [True, True, True]
    assert after["draft_changelog"] == "a draft still changes"
    # the content type moved (same row), so log entries and permissions follow it
    assert after["release_content_type"] == [before["release_content_type"], "releases"]
    assert after["stale_content_types"] == 0
    assert after["log_entry_object"] == "wsc273@1.0.0"
    assert after["change_permission"] == before["change_permission"]
    assert after["has_perm"] is True
