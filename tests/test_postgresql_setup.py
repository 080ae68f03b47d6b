"""The PostgreSQL setup of README.md and docs/operations.md, run as written on a fresh
database and fresh roles of the test server (study integrity, item 8): the two pages give
one order (the same block, word for word), and that order works from nothing: the owner
is created with what it needs, migrates, creates the application's role, and the site then
runs as that role, which writes rows but cannot alter a table; `migrate` later connects
as the owner by itself. The superuser of TEST_DATABASE_URL plays the PostgreSQL superuser
of the first step; role and database names are made unique, nothing else is changed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import environ
import pytest

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"<!-- postgresql-setup -->\n```bash\n(.*?)```\n<!-- /postgresql-setup -->", re.S)
PAGES = ("README.md", "docs/operations.md")

pytestmark = pytest.mark.postgres


def setup_block(page: str) -> str:
    found = BLOCK.findall((ROOT / page).read_text(encoding="utf-8"))
    assert len(found) == 1, f"{page}: expected one postgresql-setup block"
    return str(found[0])


def test_readme_and_operations_give_the_same_setup_order():
    readme, operations = (setup_block(page) for page in PAGES)
    assert readme == operations
    steps = [line for line in readme.splitlines() if line and not line.startswith("#")]
    assert [s.split()[0] if not s.startswith(".venv") else s.split()[2] for s in steps][:3] == [
        "psql",
        "createdb",
        "export",
    ]


@pytest.fixture
def superuser() -> dict[str, Any]:
    url = os.environ.get("TEST_DATABASE_URL", "")
    if not url.startswith("postgres"):
        message = "needs PostgreSQL: set TEST_DATABASE_URL=postgres://USER:PASS@HOST/DB (a superuser)"
        if os.environ.get("WINNOW_REQUIRE_SERVICES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return environ.Env.db_url_config(url)


@pytest.fixture
def names(superuser: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """A fresh owner (also the database's name) and application role, dropped afterwards."""
    import psycopg

    owner = f"wsetup_{uuid.uuid4().hex[:10]}"
    app = f"{owner}_app"
    yield owner, app
    conninfo = psycopg.conninfo.make_conninfo(
        host=superuser["HOST"] or "127.0.0.1",
        port=str(superuser["PORT"] or 5432),
        user=superuser["USER"],
        password=superuser["PASSWORD"],
        dbname="postgres",
    )
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (owner,))
        conn.execute(f'DROP DATABASE IF EXISTS "{owner}"')
        for role in (app, owner):
            conn.execute(f'DROP ROLE IF EXISTS "{role}"')


def test_the_documented_setup_works_on_a_fresh_database(superuser, names, tmp_path):
    owner, app = names
    host, port = superuser["HOST"] or "127.0.0.1", str(superuser["PORT"] or 5432)
    script = setup_block("docs/operations.md")
    script = re.sub(r"\bwinnow_app\b", app, script)
    script = re.sub(r"\bwinnow\b", owner, script)
    script = script.replace("127.0.0.1:5432", f"{host}:{port}")
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DATABASE_", "REDIS_", "CELERY_", "DJANGO_", "WINNOW_HEALTH"))
    }
    env.update(
        PGHOST=host,  # the superuser of step 1
        PGPORT=port,
        PGUSER=superuser["USER"],
        PGPASSWORD=superuser["PASSWORD"],
        PGDATABASE="postgres",
        WINNOW_VAR_DIR=str(tmp_path),
    )
    if not (ROOT / ".venv" / "bin" / "python").exists():
        script = script.replace(".venv/bin/python", sys.executable)
    script += '\nenv | grep -E "^DATABASE_(OWNER_)?URL=" > "$WINNOW_VAR_DIR/site.env"\n'
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"role {app}: created" in done.stdout
    site = dict(line.split("=", 1) for line in (tmp_path / "site.env").read_text().splitlines())
    assert site["DATABASE_URL"].startswith(f"postgres://{app}:")
    assert site["DATABASE_OWNER_URL"].startswith(f"postgres://{owner}:")
    serving = {**env, **site}
    for key in ("PGHOST", "PGPORT", "PGUSER", "PGPASSWORD", "PGDATABASE"):
        serving.pop(key)
    probe = (
        "from django.db import connection, DatabaseError\n"
        "from django.contrib.auth.models import User\n"
        "from django.test import Client\n"
        "cursor = connection.cursor(); cursor.execute('SELECT current_user'); print('user', cursor.fetchone()[0])\n"
        "User.objects.create_user('someone', password='x-long-password-1'); print('users', User.objects.count())\n"
        "print('page', Client().get('/accounts/login/').status_code)\n"
        "try:\n"
        "    cursor.execute('ALTER TABLE auth_user ADD COLUMN sneaky integer')\n"
        "except DatabaseError as error:\n"
        "    print('alter refused', type(error).__name__)\n"
    )
    served = subprocess.run(
        [sys.executable, "manage.py", "shell", "-v", "0", "-c", probe],
        cwd=ROOT,
        env=serving,
        capture_output=True,
        text=True,
    )
    assert served.returncode == 0, served.stdout + served.stderr
    assert f"user {app}\nusers 1\npage 200\nalter refused ProgrammingError\n" == served.stdout
    again = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=ROOT,
        env=serving,
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0 and "No migrations to apply" in again.stdout, again.stdout + again.stderr
