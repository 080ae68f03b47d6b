"""Backup and restore of a whole site, on SQLite and PostgreSQL alike (issue 16, item 4).

A backup is one archive (``backups.archive``): every row of every table as JSON Lines (one
file per model, read in one consistent snapshot), every file under MEDIA_ROOT (release
files, evaluation run results, uploaded predictions), the run folders and uploads that
live outside MEDIA_ROOT, and a manifest with the counts, the SHA-256 of every member, the
applied migrations and the Winnow version.

Restore loads it into an empty database of either kind (so ``backup`` on SQLite then
``restore`` on PostgreSQL moves a site), in one transaction. Published releases come back
through the path the immutability guard permits, never around it: a published release's
row is inserted as approved, its items and files are inserted, then the row is published
with the one UPDATE that both ``ReleaseQuerySet.update`` and the database triggers of
``datasets.0004`` allow (from approved to published). Nothing is dropped or disabled.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import tomllib
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.apps import apps
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.contenttypes.models import ContentType
from django.core import serializers
from django.core.management import call_command
from django.core.management.color import no_style
from django.db import DEFAULT_DB_ALIAS, connection, router, transaction
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder
from django.db.models import Model

from backups.archive import ArchiveWriter, archive_extract
from backups.errors import BackupError
from core.roles import Role, roles_forget
from releases.errors import ReleaseIntegrityError
from releases.exports import file_sha256, verify_folder
from releases.models import Release, ReleaseStatus
from releases.selectors import release_file_verified_path
from releases.services import release_folder

Log = Callable[[str], None]

#: Columns that hold a path on this machine: rewritten when MEDIA_ROOT moves, and the
#: files they name are backed up even when they lie outside MEDIA_ROOT (model paths are
#: not: models are installed, not produced by the site).
PATH_FIELDS: dict[str, tuple[str, ...]] = {
    "evaluation.evaluationrun": ("release_path", "results_dir", "predictions_path"),
    "evaluation.clozerun": ("out_dir",),
}
#: Rows that ``migrate`` itself creates: a database holding only these is empty.
CREATED_BY_MIGRATE = {"contenttypes.contenttype", "auth.permission"}


def _noop(message: str) -> None:
    return None


def winnow_version() -> str:
    try:
        with (Path(settings.BASE_DIR) / "pyproject.toml").open("rb") as handle:
            return str(tomllib.load(handle)["project"]["version"])
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return "unknown"


def site_models() -> list[type[Model]]:
    """Every model with a table, parents before the models that point at them."""
    app_list: Any = [(config, None) for config in apps.get_app_configs() if config.models_module is not None]
    ordered = serializers.sort_dependencies(app_list, allow_cycles=True)
    return [
        model
        for model in ordered
        if model._meta.managed
        and not model._meta.proxy
        and router.allow_migrate_model(DEFAULT_DB_ALIAS, model)
    ]


def _applied_migrations() -> list[str]:
    return sorted(f"{app}.{name}" for app, name in MigrationRecorder(connection).applied_migrations())


def _code_migrations() -> set[str]:
    loader = MigrationLoader(None, ignore_no_migrations=True)
    return {f"{app}.{name}" for app, name in loader.graph.nodes}


@contextmanager
def _snapshot() -> Iterator[None]:
    """One consistent read of the database that blocks no writer."""
    if connection.in_atomic_block:  # already inside a transaction (tests)
        yield
    elif connection.vendor == "postgresql":
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield
    else:
        # SQLite in WAL mode: a deferred transaction reads one snapshot; the configured
        # BEGIN IMMEDIATE would hold the write lock for the whole backup.
        connection.ensure_connection()
        with connection.cursor() as cursor:
            cursor.execute("BEGIN DEFERRED")
        try:
            yield
        finally:
            with connection.cursor() as cursor:
                cursor.execute("ROLLBACK")


def _counting(rows: Iterable[Any], counter: list[int]) -> Iterator[Any]:
    for row in rows:
        counter[0] += 1
        yield row


def _is_under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _files_under(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            yield path


# --- check --------------------------------------------------------------------------------


@dataclass
class ReleaseCheck:
    ref: str
    files: int
    problems: list[str] = field(default_factory=list)

    @property
    def line(self) -> str:
        if not self.problems:
            return f"{self.ref}: {self.files} files match the manifest"
        return f"{self.ref}: DOES NOT MATCH: " + "; ".join(self.problems)


def published_releases_check() -> list[ReleaseCheck]:
    """Every published release's files against its manifest and its file rows."""
    checks = []
    for release in Release.objects.published().prefetch_related("files").order_by("name", "version"):
        problems = [
            f"{release.ref}/{problem}"
            for problem in verify_folder(manifest=release.manifest or {}, folder=release_folder(release))
        ]
        files = list(release.files.all())
        for release_file in files:
            try:
                release_file_verified_path(release_file=release_file)
            except ReleaseIntegrityError as exc:
                if str(exc) not in problems:
                    problems.append(str(exc))
        checks.append(ReleaseCheck(ref=release.ref, files=len(files), problems=problems))
    return checks


# --- backup -------------------------------------------------------------------------------


def backup_create(*, path: Path, log: Log = _noop) -> dict[str, Any]:
    """Write the site into the archive ``path``; returns its manifest."""
    media_root = Path(settings.MEDIA_ROOT).resolve()
    path = path.resolve()
    writer = ArchiveWriter(path)
    try:
        with tempfile.TemporaryDirectory(prefix="winnow-backup-") as tmp, _snapshot():
            order, counts = [], {}
            outside: dict[str, int] = {}
            for model in site_models():
                label = model._meta.label_lower
                dump = Path(tmp) / f"{label}.jsonl"
                counter = [0]
                with dump.open("w", encoding="utf-8") as handle:
                    rows = model._base_manager.order_by("pk").iterator(chunk_size=2000)
                    serializers.serialize("jsonl", _counting(rows, counter), stream=handle)
                writer.add_file(f"database/{label}.jsonl", dump)
                dump.unlink()
                order.append(label)
                counts[label] = counter[0]
                for column in PATH_FIELDS.get(label, ()):
                    for value in model._base_manager.exclude(**{column: ""}).values_list(column, flat=True):
                        source = Path(value)
                        if (
                            value not in outside
                            and source.exists()
                            and not _is_under(source.resolve(), media_root)
                        ):
                            outside[value] = len(outside)
            migrations = _applied_migrations()
            checks = published_releases_check()
            media_files = 0
            if media_root.is_dir():
                for source in _files_under(media_root):
                    if source in (path, writer.partial):
                        continue
                    writer.add_file("media/" + source.relative_to(media_root).as_posix(), source)
                    media_files += 1
            external = []
            for value, index in outside.items():
                source = Path(value)
                sources = [source] if source.is_file() else list(_files_under(source))
                for item in sources:
                    rel = (
                        source.name
                        if item == source
                        else f"{source.name}/{item.relative_to(source).as_posix()}"
                    )
                    writer.add_file(f"external/{index}/{rel}", item)
                external.append({"index": index, "path": value, "name": source.name, "files": len(sources)})
                log(f"outside MEDIA_ROOT, backed up too: {value}")
        manifest = writer.close(
            {
                "winnow_version": winnow_version(),
                "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
                "database": {
                    "vendor": connection.vendor,
                    "migrations": migrations,
                    "models": order,
                    "counts": counts,
                },
                "media_root": str(media_root),
                "media_files": media_files,
                "external": external,
                "published_releases": [
                    {"ref": c.ref, "files": c.files, "problems": c.problems} for c in checks
                ],
            }
        )
    except BaseException:
        writer.abort()
        raise
    return manifest


# --- restore ------------------------------------------------------------------------------


@dataclass
class RestoreReport:
    manifest: dict[str, Any]
    rows: int
    tables: int
    media_files: int
    moved_aside: list[str]
    checks: list[ReleaseCheck]

    @property
    def problems(self) -> list[str]:
        return [problem for check in self.checks for problem in check.problems]


def _check_migrations(manifest: dict[str, Any]) -> None:
    archived = set(manifest["database"]["migrations"])
    known = _code_migrations()
    made_by = f"Winnow {manifest.get('winnow_version', '?')}"
    unknown = sorted(archived - known)
    if unknown:
        raise BackupError(
            f"the archive is newer than this code: its database has migrations this Winnow does not "
            f"know ({', '.join(unknown[:5])}{', ...' if len(unknown) > 5 else ''}); restore it with "
            f"{made_by} (which made it) or later"
        )
    missing = sorted(known - archived)
    if missing:
        raise BackupError(
            f"the archive is older than this code: migrations {', '.join(missing[:5])}"
            f"{', ...' if len(missing) > 5 else ''} were not applied when it was made; restore it with "
            f"{made_by} (which made it), then update the code and run `manage.py migrate`"
        )


def backup_check(*, archive: Path) -> dict[str, Any]:
    """Check an archive without touching the site: checksums and migrations; its manifest."""
    with tempfile.TemporaryDirectory(prefix="winnow-backup-check-") as tmp:
        manifest = archive_extract(archive=archive, dest=Path(tmp))
    _check_migrations(manifest)
    return manifest


def _database_rows() -> dict[str, int]:
    """Rows in the target's tables, less what ``migrate`` creates (content types,
    permissions, the role groups)."""
    tables = set(connection.introspection.table_names())
    found = {}
    for model in site_models():
        label = model._meta.label_lower
        if model._meta.db_table not in tables or label in CREATED_BY_MIGRATE:
            continue
        rows = model._base_manager.all()
        if model is Group:
            rows = rows.exclude(name__in=[role.value for role in Role])
        count = rows.count()
        if count:
            found[label] = count
    return found


def _media_conflicts(media_root: Path, manifest: dict[str, Any]) -> list[str]:
    """Files under MEDIA_ROOT that the archive does not have, or has with other bytes."""
    archived = {
        name[len("media/") :]: entry for name, entry in manifest["files"].items() if name.startswith("media/")
    }
    conflicts = []
    if media_root.is_dir():
        for path in _files_under(media_root):
            entry = archived.get(path.relative_to(media_root).as_posix())
            if entry is None or path.stat().st_size != entry["size"] or file_sha256(path) != entry["sha256"]:
                conflicts.append(path.relative_to(media_root).as_posix())
    return conflicts


def _drop_all_tables() -> None:
    """--replace: the target's tables go (their triggers with them); migrate makes them again."""
    quote = connection.ops.quote_name
    tables = connection.introspection.table_names()
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            for table in tables:
                cursor.execute(f"DROP TABLE IF EXISTS {quote(table)} CASCADE")
        else:
            cursor.execute("PRAGMA foreign_keys = OFF")
            for table in tables:
                cursor.execute(f"DROP TABLE IF EXISTS {quote(table)}")
            cursor.execute("PRAGMA foreign_keys = ON")


class _Placement:
    """Moves the extracted files into MEDIA_ROOT, and back out if the restore fails."""

    def __init__(self, *, staging: Path, media_root: Path, manifest: dict[str, Any], stamp: str) -> None:
        self.staging = staging
        self.media_root = media_root
        self.manifest = manifest
        self.stamp = stamp
        self.created: list[Path] = []
        self.aside: Path | None = None

    def external_target(self, index: int, name: str) -> Path:
        return self.media_root / "restored" / self.stamp / str(index) / name

    def apply(self, *, replace: bool) -> None:
        staged = self.staging / "media"
        if replace and self.media_root.exists() and any(self.media_root.iterdir()):
            self.aside = self.media_root.with_name(f"{self.media_root.name}.before-restore-{self.stamp}")
            shutil.move(self.media_root, self.aside)
        self.media_root.mkdir(parents=True, exist_ok=True)
        if staged.is_dir():
            for source in _files_under(staged):
                target = self.media_root / source.relative_to(staged)
                if not target.exists():
                    self.created.append(target)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(source, target)
        for entry in self.manifest.get("external", []):
            source = self.staging / "external" / str(entry["index"]) / entry["name"]
            target = self.external_target(entry["index"], entry["name"])
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(source, target)
            self.created.append(target)

    def undo(self) -> None:
        for path in reversed(self.created):
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        if self.aside is not None:
            shutil.rmtree(self.media_root, ignore_errors=True)
            shutil.move(self.aside, self.media_root)
            self.aside = None


def _path_rewriter(manifest: dict[str, Any], placement: _Placement) -> Callable[[str], str]:
    old_root = manifest["media_root"]
    new_root = str(placement.media_root)
    outside = {
        e["path"]: str(placement.external_target(e["index"], e["name"])) for e in manifest.get("external", [])
    }

    def rewrite(value: str) -> str:
        if value in outside:
            return outside[value]
        if value == old_root or value.startswith(old_root + os.sep):
            return new_root + value[len(old_root) :]
        return value

    return rewrite


LOAD_BATCH = 500


def _insert(model: type[Model], records: list[Any]) -> None:
    """Rows as they were: the raw INSERT that ``save(raw=True)`` (loaddata) makes for one
    object, made for a batch; auto_now fields keep their stored values."""
    if not records:
        return
    if model._meta.parents:  # multi-table inheritance: one object at a time, as loaddata
        for record in records:
            record.save(using=connection.alias)
        return
    fields = list(model._meta.local_concrete_fields)
    objects = [record.object for record in records]
    size = max(1, connection.ops.bulk_batch_size(fields, objects))
    for start in range(0, len(objects), size):
        model._base_manager._insert(  # type: ignore[attr-defined]
            objects[start : start + size], fields=fields, using=connection.alias, raw=True
        )
    for record in records:
        for name, values in (record.m2m_data or {}).items():
            getattr(record.object, name).set(values)


def _load(*, staging: Path, manifest: dict[str, Any], rewrite: Callable[[str], str], log: Log) -> int:
    """Every row of the archive into the (migrated, empty) database; returns the row count."""
    models = {model._meta.label_lower: model for model in site_models()}
    quote = connection.ops.quote_name
    # Empty what migrate created (content types, permissions, role groups) so the archive's
    # rows keep their ids; every table is empty of site data (checked before).
    with connection.cursor() as cursor:
        for table_model in apps.get_models(include_auto_created=True):
            if router.allow_migrate_model(DEFAULT_DB_ALIAS, table_model) and table_model._meta.managed:
                cursor.execute(f"DELETE FROM {quote(table_model._meta.db_table)}")  # noqa: S608 (a table name)
    published: list[int] = []
    total = 0
    for label in manifest["database"]["models"]:
        model = models.get(label)
        if model is None:  # the migration check makes this a bug, not an archive problem
            raise BackupError(f"the archive has rows of {label}, a model this Winnow does not have")
        count = 0
        batch: list[Any] = []
        with (staging / "database" / f"{label}.jsonl").open(encoding="utf-8") as handle:
            for record in serializers.deserialize("jsonl", handle, using=connection.alias):
                instance: Any = record.object
                if label == "releases.release" and instance.status == ReleaseStatus.PUBLISHED:
                    # In as approved; published below, once its items and files are in.
                    published.append(instance.pk)
                    instance.status = ReleaseStatus.APPROVED
                for column in PATH_FIELDS.get(label, ()):
                    setattr(instance, column, rewrite(getattr(instance, column)))
                batch.append(record)
                if len(batch) >= LOAD_BATCH:
                    _insert(model, batch)
                    batch = []
                count += 1
            _insert(model, batch)
        expected = manifest["database"]["counts"].get(label)
        if count != expected or model._base_manager.count() != expected:
            raise BackupError(f"{label}: {expected} rows in the archive's manifest, {count} loaded")
        total += count
        log(f"{label}: {count} rows")
    # approved -> published: the one change of a release row the guard allows.
    Release.objects.filter(pk__in=published).update(status=ReleaseStatus.PUBLISHED)
    with connection.cursor() as cursor:
        for statement in connection.ops.sequence_reset_sql(no_style(), list(models.values())):
            cursor.execute(statement)
    connection.check_constraints()
    return total


def backup_restore(*, archive: Path, replace: bool = False, log: Log = _noop) -> RestoreReport:
    """Restore the site from ``archive`` into this database and MEDIA_ROOT.

    Refuses (BackupError, nothing touched) an archive whose checksums do not match, one
    made with other migrations than this code's, and a target that is not empty unless
    ``replace``. The rows are loaded in one transaction and the files moved into place
    inside it: if anything fails, the database part rolls back and the files move out.
    """
    media_root = Path(settings.MEDIA_ROOT).resolve()
    media_root.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".winnow-restore-", dir=media_root.parent))
    try:
        manifest = archive_extract(archive=archive, dest=staging)
        _check_migrations(manifest)
        log(
            f"archive {archive.name}: Winnow {manifest.get('winnow_version')}, made {manifest.get('created_at')} "
            f"on {manifest['database']['vendor']}; every checksum matches"
        )
        rows, conflicts = _database_rows(), _media_conflicts(media_root, manifest)
        if (rows or conflicts) and not replace:
            parts = []
            if rows:
                shown = ", ".join(f"{label}: {n}" for label, n in list(rows.items())[:6])
                parts.append(f"the database has rows ({shown}{', ...' if len(rows) > 6 else ''})")
            if conflicts:
                shown = ", ".join(conflicts[:3])
                parts.append(
                    f"MEDIA_ROOT ({media_root}) has files the archive does not ({shown}{', ...' if len(conflicts) > 3 else ''})"
                )
            raise BackupError(
                "the target is not empty: " + " and ".join(parts) + ". Restore into an empty database, "
                "or pass --replace to replace the site (nothing was changed)"
            )
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        placement = _Placement(staging=staging, media_root=media_root, manifest=manifest, stamp=stamp)
        rewrite = _path_rewriter(manifest, placement)
        kept: list[str] = []
        if connection.vendor == "sqlite" and replace and connection.introspection.table_names():
            copy = Path(str(connection.settings_dict["NAME"]) + f".before-restore-{stamp}")
            connection.ensure_connection()
            with closing(sqlite3.connect(str(copy))) as target:
                connection.connection.backup(target)
            kept.append(str(copy))
            log(f"the database before the restore is kept in {copy}")
        try:
            if connection.vendor == "sqlite":
                # SQLite cannot change its schema inside a transaction: drop and migrate
                # first; the rows then load in one transaction.
                if replace:
                    _drop_all_tables()
                call_command("migrate", interactive=False, verbosity=0)
                with transaction.atomic():
                    total = _load(staging=staging, manifest=manifest, rewrite=rewrite, log=log)
                    placement.apply(replace=replace)
            else:
                # PostgreSQL: dropping, migrating and loading are one transaction.
                with transaction.atomic():
                    if replace:
                        _drop_all_tables()
                    call_command("migrate", interactive=False, verbosity=0)
                    total = _load(staging=staging, manifest=manifest, rewrite=rewrite, log=log)
                    placement.apply(replace=replace)
        except BaseException as exc:
            placement.undo()
            if isinstance(exc, Exception):
                state = (
                    "the database part was rolled back and no file was moved into MEDIA_ROOT"
                    if connection.vendor == "postgresql" or not replace
                    else f"the database is now empty (migrated); its previous contents are in {kept[0] if kept else '-'}"
                )
                raise BackupError(f"restore failed, {state}: {exc}") from exc
            raise
        if placement.aside is not None:
            kept.append(str(placement.aside))
        ContentType.objects.clear_cache()
        roles_forget(list(get_user_model()._base_manager.values_list("pk", flat=True)))
        media_files = sum(1 for name in manifest["files"] if name.startswith("media/"))
        return RestoreReport(
            manifest=manifest,
            rows=total,
            tables=len(manifest["database"]["models"]),
            media_files=media_files,
            moved_aside=kept,
            checks=published_releases_check(),
        )
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def manifest_summary(manifest: dict[str, Any]) -> str:
    database = manifest["database"]
    rows = sum(database["counts"].values())
    return (
        f"Winnow {manifest.get('winnow_version')}, {manifest.get('created_at')}, {database['vendor']}: "
        f"{rows} rows in {len(database['models'])} tables, {manifest.get('media_files', 0)} files under MEDIA_ROOT, "
        f"{len(manifest.get('external', []))} folders or files from outside it, "
        f"{len(manifest.get('published_releases', []))} published releases"
    )
