"""A release as one download: a zip of exactly its manifest's files (pure: no Django).

Deterministic: members in name order under ``NAME-VERSION/``, each with the same fixed
timestamp (1980-01-01, zip's earliest) and permissions, deflated at the default level, so
that the same release gives the same bytes, and the same SHA-256, every time it is built.
Written to a temporary name beside the target and renamed into place, so that two workers
building it at once never serve half a file.
"""

import os
import shutil
import uuid
import zipfile
from collections.abc import Iterable
from pathlib import Path

from releases.exports import file_sha256

FIXED_TIME = (1980, 1, 1, 0, 0, 0)


def bundle_name(name: str, version: str) -> str:
    return f"{name}-{version}.zip"


def write_bundle(out: Path, *, prefix: str, files: Iterable[tuple[str, Path]]) -> str:
    """Zip ``files`` (name in the archive, path on disk) under ``prefix/`` into ``out``;
    the archive's SHA-256."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{uuid.uuid4().hex}.tmp")
    try:
        with zipfile.ZipFile(tmp, "w") as archive:
            for name, path in sorted(files):
                info = zipfile.ZipInfo(f"{prefix}/{name}", date_time=FIXED_TIME)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.create_system = 3  # Unix, so that the permissions below are read
                info.external_attr = 0o644 << 16
                with path.open("rb") as source, archive.open(info, "w") as target:
                    shutil.copyfileobj(source, target, 1 << 20)
        digest = file_sha256(tmp)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return digest
