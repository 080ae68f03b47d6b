"""manage.py restore ARCHIVE: a site back from `manage.py backup`, into SQLite or PostgreSQL."""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from backups.errors import BackupError
from backups.services import backup_check, backup_restore, manifest_summary


class Command(BaseCommand):
    help = (
        "Restore a site from an archive of `manage.py backup` into the database DATABASE_URL "
        "names (SQLite or PostgreSQL: a backup made on SQLite restored with a postgres:// "
        "DATABASE_URL moves the site to PostgreSQL) and into MEDIA_ROOT. Stop the web process "
        "and the workers first. Before touching anything it checks the SHA-256 of every file "
        "in the archive (a tampered or damaged file is refused by name) and the migrations "
        "(an archive from a newer Winnow, or an older one, is refused), and it refuses a "
        "target that is not empty: a database with rows other than those `migrate` creates, "
        "or a MEDIA_ROOT with files the archive does not have; --replace replaces them "
        "instead (the tables are dropped and made again by migrate, MEDIA_ROOT and an SQLite "
        "file are kept aside as *.before-restore-TIME). It migrates the database, loads every "
        "row in one transaction (published releases come back published and still immutable: "
        "the guard is never lifted) and moves the files into place; if anything fails, the "
        "database part rolls back and the files move out again, and the command says so. "
        "Afterwards it checks every published release's files against its manifest and prints "
        "one line per release; it exits with an error if any does not match."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("archive", help="a .tar.gz written by `manage.py backup`")
        parser.add_argument(
            "--replace",
            action="store_true",
            help="restore even into a non-empty database / MEDIA_ROOT, replacing what is there",
        )
        parser.add_argument(
            "--check-only",
            action="store_true",
            help="only check the archive (checksums, migrations) and print its manifest's summary",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        archive = Path(opts["archive"])
        try:
            if opts["check_only"]:
                manifest = backup_check(archive=archive)
                self.stdout.write(f"{archive}: every checksum matches and this Winnow can restore it")
                self.stdout.write(manifest_summary(manifest))
                return
            report = backup_restore(
                archive=archive, replace=opts["replace"], log=lambda line: self.stdout.write(line)
            )
        except BackupError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"restored into {connection.vendor} ({connection.settings_dict['NAME']}): {report.rows} rows "
            f"in {report.tables} tables, {report.media_files} files under MEDIA_ROOT"
        )
        self.stdout.write(manifest_summary(report.manifest))
        for kept in report.moved_aside:
            self.stdout.write(f"kept aside: {kept}")
        self.stdout.write(f"post-restore check: {len(report.checks)} published releases")
        for check in report.checks:
            self.stdout.write(f"  {check.line}")
        if report.problems:
            raise CommandError(
                f"restored, but {len(report.problems)} release files do not match their manifest "
                "(these releases cannot be downloaded or evaluated until the files are put back): "
                + "; ".join(report.problems)
            )
        self.stdout.write("post-restore check: every published release's files match its manifest")
