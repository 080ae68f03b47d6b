"""manage.py backup: the whole site in one archive (database, release files, run results, uploads)."""

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from backups.errors import BackupError
from backups.services import backup_create, manifest_summary


class Command(BaseCommand):
    help = (
        "Write a backup of the whole site into one .tar.gz archive: every row of the database "
        "(SQLite or PostgreSQL, read in one consistent snapshot that blocks no writer, as JSON "
        "Lines), every file under MEDIA_ROOT (published release files, evaluation run results, "
        "uploaded predictions), run folders and uploads that lie outside MEDIA_ROOT, and "
        "manifest.json: the row count of every table, the SHA-256 of every file in the archive, "
        "the applied migrations and the Winnow version. Model files are not included. The "
        "archive is written as NAME.partial and renamed when complete. It also checks every "
        "published release's files against its manifest and says which do not match. Restore "
        "with `manage.py restore ARCHIVE`, into SQLite or PostgreSQL (see the docs page "
        "/docs/operations/#backups)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "archive",
            nargs="?",
            default="",
            help="where to write it (default: WINNOW_VAR_DIR/backups/winnow-backup-UTCTIME.tar.gz)",
        )
        parser.add_argument(
            "--keep",
            type=int,
            default=0,
            help="afterwards, delete all but the newest N winnow-backup-*.tar.gz in the archive's folder",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["archive"]:
            path = Path(opts["archive"])
        else:
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
            path = Path(settings.VAR_DIR) / "backups" / f"winnow-backup-{stamp}.tar.gz"
        try:
            manifest = backup_create(path=path, log=lambda line: self.stdout.write(line))
        except (BackupError, OSError) as exc:
            raise CommandError(f"backup failed, no archive written: {exc}") from exc
        self.stdout.write(f"backup written: {path.resolve()}")
        self.stdout.write(manifest_summary(manifest))
        broken = [r for r in manifest["published_releases"] if r["problems"]]
        for release in manifest["published_releases"]:
            state = "DOES NOT MATCH its manifest" if release["problems"] else "files match the manifest"
            self.stdout.write(f"  {release['ref']}: {release['files']} files, {state}")
        if opts["keep"] > 0:
            archives = sorted(path.resolve().parent.glob("winnow-backup-*.tar.gz"))
            for old in archives[: -opts["keep"]]:
                if old != path.resolve():
                    old.unlink()
                    self.stdout.write(f"deleted the older backup {old.name}")
        if broken:
            raise CommandError(
                "the backup was written, but these published releases' files do not match their "
                "manifest on this site: " + "; ".join(p for r in broken for p in r["problems"])
            )
