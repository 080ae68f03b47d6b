"""The backup archive: one ``.tar.gz`` whose last member, ``manifest.json``, lists every
other member with its size and SHA-256 (no Django here).

Members are hashed while they are written (the bytes in the archive are the bytes hashed,
even if a file on disk changes meanwhile), and checked again after they are extracted:
an archive with a missing, extra or altered member is refused with the member's name.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
from pathlib import Path
from typing import IO, Any

from backups.errors import BackupError
from releases.exports import file_sha256

FORMAT = "winnow-backup"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"


class _HashingReader:
    """Reads a file for tarfile and hashes exactly the bytes tarfile takes."""

    def __init__(self, handle: IO[bytes]) -> None:
        self._handle = handle
        self.sha = hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        data = self._handle.read(size)
        self.sha.update(data)
        return data


class ArchiveWriter:
    """Writes ``path`` through ``path.partial``: an interrupted backup leaves no archive."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._partial = path.with_name(path.name + ".partial")
        path.parent.mkdir(parents=True, exist_ok=True)
        self._tar = tarfile.open(self._partial, "w:gz")  # noqa: SIM115 (closed in close/abort)
        self.files: dict[str, dict[str, Any]] = {}

    @property
    def partial(self) -> Path:
        return self._partial

    def add_file(self, name: str, source: Path) -> None:
        with source.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            info = tarfile.TarInfo(name)
            info.size = size
            info.mtime = int(os.fstat(handle.fileno()).st_mtime)
            info.mode = 0o644
            reader = _HashingReader(handle)
            self._tar.addfile(info, reader)
        self.files[name] = {"size": size, "sha256": reader.sha.hexdigest()}

    def add_bytes(self, name: str, data: bytes) -> None:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        info.mode = 0o644
        self._tar.addfile(info, io.BytesIO(data))
        self.files[name] = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}

    def close(self, manifest: dict[str, Any]) -> dict[str, Any]:
        """Write the manifest (with every member's checksum) last and move the archive into place."""
        manifest = {"format": FORMAT, "format_version": FORMAT_VERSION, **manifest, "files": self.files}
        data = (json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
        info = tarfile.TarInfo(MANIFEST)
        info.size = len(data)
        info.mode = 0o644
        self._tar.addfile(info, io.BytesIO(data))
        self._tar.close()
        os.replace(self._partial, self.path)
        return manifest

    def abort(self) -> None:
        self._tar.close()
        self._partial.unlink(missing_ok=True)


def archive_extract(*, archive: Path, dest: Path) -> dict[str, Any]:
    """Extract ``archive`` into the empty folder ``dest`` and check every member against the
    manifest; returns the manifest. Refuses (BackupError) a member that is missing, extra,
    or whose size or SHA-256 differs, naming it."""
    if not archive.is_file():
        raise BackupError(f"{archive}: no such backup archive")
    try:
        with tarfile.open(archive, "r:*") as tar:
            # filter="data": no absolute paths, no "..", no links out, no devices.
            tar.extractall(dest, filter="data")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise BackupError(f"{archive}: not a readable backup archive ({exc})") from exc
    manifest_path = dest / MANIFEST
    if not manifest_path.is_file():
        raise BackupError(f"{archive}: {MANIFEST} is missing: this is not a Winnow backup")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise BackupError(f"{archive}: {MANIFEST} is not valid JSON ({exc})") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BackupError(f"{archive}: {MANIFEST} is not a Winnow backup manifest")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise BackupError(
            f"{archive}: backup format {manifest.get('format_version')} (this Winnow reads {FORMAT_VERSION})"
        )
    listed: dict[str, dict[str, Any]] = manifest.get("files") or {}
    found = {p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()} - {MANIFEST}
    for name in sorted(found - set(listed)):
        raise BackupError(f"{archive}: {name} is in the archive but not in its manifest (tampered archive?)")
    for name, entry in sorted(listed.items()):
        path = dest / name
        if not path.is_file():
            raise BackupError(f"{archive}: {name} is listed in the manifest but missing from the archive")
        if path.stat().st_size != entry.get("size") or file_sha256(path) != entry.get("sha256"):
            raise BackupError(
                f"{archive}: {name} does not match its SHA-256 in the manifest (tampered or damaged archive)"
            )
    return manifest
