"""Semantic versions "X.Y.Z" (pure)."""

import re

from releases.errors import ReleaseValidationError

SEMVER = re.compile(r"^(0|[1-9]\d{0,5})\.(0|[1-9]\d{0,5})\.(0|[1-9]\d{0,5})$")


def parse_version(text: str) -> tuple[int, int, int]:
    """(major, minor, patch) of "X.Y.Z"; anything else is a ReleaseValidationError."""
    match = SEMVER.match(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise ReleaseValidationError(
            f"version {text!r} is not a semantic version X.Y.Z (three numbers, no leading zeros)",
            field="version",
        )
    major, minor, patch = (int(g) for g in match.groups())
    return major, minor, patch


def parse_ref(ref: str) -> tuple[str, str]:
    """NAME@X.Y.Z -> (NAME, X.Y.Z)."""
    name, sep, version = ref.partition("@")
    if not sep or not name or not version:
        raise ReleaseValidationError(f"release reference {ref!r} is not NAME@X.Y.Z")
    parse_version(version)
    return name, version


def next_versions(version: str) -> dict[str, str]:
    """The versions that may follow ``version``: a fix, new labels or items, a changed format."""
    major, minor, patch = parse_version(version)
    return {
        "fix": f"{major}.{minor}.{patch + 1}",
        "labels": f"{major}.{minor + 1}.0",
        "format": f"{major + 1}.0.0",
    }
