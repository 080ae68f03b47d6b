"""What every import writer shares: counting rows, and bringing an existing row to a
file's values (content and provenance) under the batch that read it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db.models import Model

from datasets.models import ComVEItem, ImportBatch, Reason, Schema


@dataclass
class Tally:
    created: int = 0
    updated: int = 0
    unchanged: int = 0

    def as_dict(self) -> dict[str, int]:
        return {"created": self.created, "updated": self.updated, "unchanged": self.unchanged}

    def count_existing(self, status: str) -> None:
        """Count a row that was there before, by what `_refresh` said of it: 'updated'
        when its content changed; 'moved' (only its provenance changed) and 'unchanged'
        count as unchanged."""
        if status == "updated":
            self.updated += 1
        else:
            self.unchanged += 1


def _json_safe(options: dict[str, Any]) -> dict[str, Any]:
    safe: dict[str, Any] = {}
    for key, value in options.items():
        if isinstance(value, Path):
            value = value.name
        if isinstance(value, str | int | float | bool) or value is None:
            safe[key] = value
    return safe


PROVENANCE_FIELDS = ("source_file", "source_row", "file_checksum")


def _differs(obj: Model, values: dict[str, Any]) -> bool:
    return any(getattr(obj, name) != value for name, value in values.items())


def _compare(obj: Model, values: dict[str, Any]) -> str:
    """'updated' if the item's content differs, 'moved' if only its provenance does (the
    same item read from another file, row or version of the file), else 'unchanged'."""
    moved = False
    for name, value in values.items():
        if getattr(obj, name) != value:
            if name not in PROVENANCE_FIELDS:
                return "updated"
            moved = True
    return "moved" if moved else "unchanged"


def _apply(obj: Model, values: dict[str, Any]) -> None:
    for name, value in values.items():
        setattr(obj, name, value)


def _refresh(obj: Schema | Reason | ComVEItem, values: dict[str, Any], batch: ImportBatch) -> str:
    """Bring an existing row to the file's values and batch; returns what ``_compare`` said
    (the row must be saved unless 'unchanged')."""
    status = _compare(obj, values)
    if status != "unchanged":
        _apply(obj, values)
        obj.import_batch = batch
    return status
