"""`manage.py backup` and `manage.py restore` round trips, on the kinds of database Winnow
runs on: a demo site (published releases with their files, evaluation runs with results,
predictions uploaded on the runs page, a run folder outside MEDIA_ROOT) is backed up and
restored into an empty database and a new MEDIA_ROOT, from SQLite into SQLite and into
PostgreSQL, and from PostgreSQL into PostgreSQL. Each site lives in subprocesses with its
own DATABASE_URL and WINNOW_VAR_DIR, as `manage.py` would run there (the approach of
tests/releases/test_migration_from_datasets.py); PostgreSQL databases are created for the
test and dropped after it, on the server of TEST_DATABASE_URL (or of the suite's run).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import environ
import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
PROBE = Path(__file__).with_name("site_probe.py")

pytestmark = pytest.mark.slow


@dataclass
class Site:
    url: str
    var: Path

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "DATABASE_URL": self.url, "WINNOW_VAR_DIR": str(self.var)}
        env["CELERY_TASK_ALWAYS_EAGER"] = "1"
        for name in ("WINNOW_MEDIA_ROOT", "REDIS_URL", "CELERY_BROKER_URL", "WINNOW_PRODUCTION"):
            env.pop(name, None)
        result = subprocess.run(
            [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
        )
        if check:
            assert result.returncode == 0, f"{' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
        return result

    def manage(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.run("manage.py", *args, check=check)

    def probe(self, *args: str) -> dict[str, Any]:
        return json.loads(self.run(str(PROBE), *args).stdout.strip().splitlines()[-1])


def _postgres_server() -> dict[str, Any] | None:
    db = settings.DATABASES["default"]
    if db["ENGINE"] == "django.db.backends.postgresql":
        return dict(db)
    url = os.environ.get("TEST_DATABASE_URL", "")
    return environ.Env.db_url_config(url) if url.startswith("postgres") else None


@pytest.fixture(scope="module")
def new_database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], str]]:
    """Makes empty databases: ``new_database("sqlite")`` or ``new_database("postgresql")``."""
    created: list[str] = []
    server = _postgres_server()

    def admin() -> str:
        import psycopg

        assert server is not None
        return psycopg.conninfo.make_conninfo(
            host=server.get("HOST") or None,
            port=str(server.get("PORT") or "") or None,
            user=server.get("USER") or None,
            password=server.get("PASSWORD") or None,
            dbname="postgres",
        )

    def make(kind: str) -> str:
        if kind == "sqlite":
            return f"sqlite:///{tmp_path_factory.mktemp('sqlite') / 'winnow.sqlite3'}"
        if server is None:
            message = "needs PostgreSQL: set TEST_DATABASE_URL=postgres://USER:PASS@HOST/DB"
            if os.environ.get("WINNOW_REQUIRE_SERVICES") == "1":
                pytest.fail(message)
            pytest.skip(message)
        import psycopg

        name = f"winnow_backup_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(admin(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        created.append(name)
        auth = f"{server['USER']}:{server['PASSWORD']}@" if server.get("USER") else ""
        return f"postgres://{auth}{server.get('HOST') or '127.0.0.1'}:{server.get('PORT') or 5432}/{name}"

    yield make
    if created:
        import psycopg

        with psycopg.connect(admin(), autocommit=True) as conn:
            for name in created:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _build_site(
    kind: str, new_database: Callable[[str], str], tmp: Path
) -> tuple[Site, dict[str, Any], Path]:
    site = Site(url=new_database(kind), var=tmp / "var")
    site.manage("migrate", "--noinput", "-v0")
    state = site.probe("build", str(tmp / "outside-run"))
    archive = tmp / "site.tar.gz"
    output = site.manage("backup", str(archive)).stdout
    assert "demo-wsc@1.0.0: 6 files, files match the manifest" in output
    return site, state, archive


@pytest.fixture(scope="module")
def sqlite_site(new_database, tmp_path_factory) -> tuple[Site, dict[str, Any], Path]:
    return _build_site("sqlite", new_database, tmp_path_factory.mktemp("sqlite-site"))


@pytest.fixture(scope="module")
def postgres_site(new_database, tmp_path_factory) -> tuple[Site, dict[str, Any], Path]:
    return _build_site("postgresql", new_database, tmp_path_factory.mktemp("postgres-site"))


def _assert_same_site(before: dict[str, Any], after: dict[str, Any]) -> None:
    assert after["counts"] == before["counts"]
    assert after["releases"] == before["releases"]
    # every run, its metrics, result files and upload, byte for byte (only where a folder
    # or upload outside MEDIA_ROOT now lies differs: under the new MEDIA_ROOT, restored/;
    # uploads live outside it, in WINNOW_UPLOAD_DIR)
    assert [{**r, "under_media": None, "upload_under_media": None} for r in after["runs"]] == [
        {**r, "under_media": None, "upload_under_media": None} for r in before["runs"]
    ]
    # the site really has what a backup must carry
    assert [r["status"] for r in after["releases"]] == ["published", "published"]
    assert all(f[1] == f[3] for r in after["releases"] for f in r["files"])  # bytes on disk match
    assert any(r["upload"] and r["upload_under_media"] for r in after["runs"])  # the uploaded predictions
    assert any(r["results"] and not r["under_media"] for r in before["runs"])  # --out outside MEDIA_ROOT
    assert all(r["results"] and "results.json" in r["results"] for r in after["runs"])
    # published releases are as immutable after the restore as before
    assert after["guard_refusals"] == [True, True, True]
    assert after["new_id_free"] is True


@pytest.mark.parametrize("target", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def test_a_sqlite_site_restores_into_an_empty_database_with_its_releases_runs_and_uploads(
    sqlite_site, new_database, tmp_path, target
):
    _source, before, archive = sqlite_site
    restored = Site(url=new_database(target), var=tmp_path / "restored-var")
    output = restored.manage("restore", str(archive)).stdout
    assert "every checksum matches" in output
    assert "post-restore check: 2 published releases" in output
    assert "demo-wsc@1.0.0: 6 files match the manifest" in output
    assert "every published release's files match its manifest" in output
    after = restored.probe("state")
    assert after["vendor"] == target
    _assert_same_site(before, after)
    # the run folder that lay outside MEDIA_ROOT now lies under the new one
    assert all(r["under_media"] for r in after["runs"])


@pytest.mark.postgres
def test_a_postgresql_site_round_trips_into_an_empty_postgresql_database(
    postgres_site, new_database, tmp_path
):
    _source, before, archive = postgres_site
    restored = Site(url=new_database("postgresql"), var=tmp_path / "restored-var")
    restored.manage("restore", str(archive))
    _assert_same_site(before, restored.probe("state"))


def _rewrite_archive(source: Path, target: Path, change: Callable[[str, bytes], bytes]) -> None:
    with tarfile.open(source, "r:gz") as old, tarfile.open(target, "w:gz") as new:
        for member in old.getmembers():
            data = old.extractfile(member).read()  # type: ignore[union-attr]
            data = change(member.name, data)
            member.size = len(data)
            new.addfile(member, io.BytesIO(data))


def test_a_tampered_archive_is_refused_with_the_name_of_the_file_and_nothing_restored(
    sqlite_site, new_database, tmp_path
):
    _source, _before, archive = sqlite_site
    tampered = tmp_path / "tampered.tar.gz"
    name = "media/releases/demo-wsc/1.0.0/wsc.jsonl"
    _rewrite_archive(
        archive, tampered, lambda member, data: data.replace(b'"A"', b'"B"', 1) if member == name else data
    )
    target = Site(url=new_database("sqlite"), var=tmp_path / "var")
    result = target.manage("restore", str(tampered), check=False)
    assert result.returncode != 0
    assert f"{name} does not match its SHA-256 in the manifest" in result.stderr
    assert not (target.var / "media" / "releases").exists()
    assert "[X]" not in target.manage("showmigrations", "releases").stdout  # no table was made


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda done: [*done, "releases.0099_from_the_future"], "newer than this code: "),
        (lambda done: [m for m in done if m != "releases.0001_initial"], "older than this code: "),
    ],
    ids=["newer", "older"],
)
def test_an_archive_from_another_schema_is_refused_before_anything_changes(
    sqlite_site, new_database, tmp_path, change, message
):
    _source, _before, archive = sqlite_site
    other = tmp_path / "other.tar.gz"

    def edit_migrations(member: str, data: bytes) -> bytes:
        if member != "manifest.json":
            return data
        manifest = json.loads(data)
        manifest["database"]["migrations"] = change(manifest["database"]["migrations"])
        return json.dumps(manifest).encode()

    _rewrite_archive(archive, other, edit_migrations)
    target = Site(url=new_database("sqlite"), var=tmp_path / "var")
    result = target.manage("restore", str(other), check=False)
    assert result.returncode != 0
    assert f"the archive is {message}" in result.stderr
    assert "releases.0" in result.stderr  # names the migration
    assert "[X]" not in target.manage("showmigrations", "releases").stdout


def test_restore_into_a_database_that_is_not_empty_is_refused_and_changes_nothing(sqlite_site, tmp_path):
    source, before, archive = sqlite_site
    result = source.manage("restore", str(archive), check=False)
    assert result.returncode != 0
    assert "the target is not empty: the database has rows" in result.stderr
    assert "--replace" in result.stderr
    after = source.probe("state")
    assert after["counts"] == before["counts"] and after["releases"] == before["releases"]


def test_restore_with_replace_puts_the_site_back_over_a_changed_one_and_keeps_the_old_aside(
    sqlite_site, new_database, tmp_path
):
    _source, before, archive = sqlite_site
    target = Site(url=new_database("sqlite"), var=tmp_path / "var")
    target.manage("restore", str(archive))
    target.manage("createsuperuser", "--noinput", "--username", "added-later", "--email", "a@example.org")
    assert target.probe("state")["counts"]["auth.user"] == before["counts"]["auth.user"] + 1
    output = target.manage("restore", "--replace", str(archive)).stdout
    assert "kept aside:" in output and ".before-restore-" in output
    _assert_same_site(before, target.probe("state"))


@pytest.mark.parametrize("target", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def test_a_restore_that_fails_midway_leaves_no_row_and_no_file_and_says_so(
    sqlite_site, new_database, tmp_path, target
):
    _source, _before, archive = sqlite_site
    broken = tmp_path / "broken.tar.gz"

    def miscount(member: str, data: bytes) -> bytes:
        if member != "manifest.json":
            return data
        manifest = json.loads(data)
        manifest["database"]["counts"]["evaluation.evaluationrun"] += 1  # found out after the rows load
        return json.dumps(manifest).encode()

    _rewrite_archive(archive, broken, miscount)
    site = Site(url=new_database(target), var=tmp_path / "var")
    result = site.manage("restore", str(broken), check=False)
    assert result.returncode != 0
    assert (
        "restore failed, the database part was rolled back and no file was moved into MEDIA_ROOT"
        in result.stderr
    )
    assert "evaluation.evaluationrun" in result.stderr
    assert not any(p.is_file() for p in (site.var / "media").rglob("*"))
    if target == "postgresql":  # the migration was in the transaction too: not a table made
        assert "[X]" not in site.manage("showmigrations", "releases", "datasets").stdout
        return
    state = site.probe("state")
    assert (
        sum(state["counts"].values())
        == state["counts"]["contenttypes.contenttype"]
        + state["counts"]["auth.permission"]
        + state["counts"]["auth.group"]
    )  # only what migrate makes
    assert state["releases"] == [] and state["runs"] == []
