"""Writing ComVE items (SemEval-2020 Task 4, the Sen-Making pilot, a curator's own items)."""

from __future__ import annotations

from typing import Any

from datasets.importers.records import ComVEData
from datasets.models import COMVE_CONTENT_FIELDS, ComVEItem, ImportBatch
from datasets.services.rows import PROVENANCE_FIELDS, Tally, _refresh

COMVE_FIELDS = [*COMVE_CONTENT_FIELDS, *PROVENANCE_FIELDS]


def _existing_comve_items(dataset: str, split: str, collection: str = "") -> dict[str, ComVEItem]:
    """The split's items already in the database, in one query."""
    items = ComVEItem.objects.filter(dataset=dataset, collection=collection, split=split)
    return {i.external_id: i for i in items}


def write_comve(data: ComVEData, batch: ImportBatch) -> tuple[dict[str, Tally], dict[str, Any]]:
    existing = _existing_comve_items(data.dataset, data.split, data.collection)
    tally = Tally()
    to_create: list[ComVEItem] = []
    to_update: list[ComVEItem] = []
    moved = 0
    for record in data.items:
        values = {
            "statement_0": record.statement_0,
            "statement_1": record.statement_1,
            "false_index": record.false_index,
            "false_statement": record.false_statement,
            "false_statement_c": record.false_statement_c,
            "option_a": record.option_a,
            "option_b": record.option_b,
            "option_c": record.option_c,
            "correct_option": record.correct_option,
            "references": record.references,
            "has_a": record.has_a,
            "has_b": record.has_b,
            "has_c": record.has_c,
            "source_file": record.provenance.source_file,
            "source_row": record.provenance.source_row,
            "file_checksum": record.provenance.file_checksum,
        }
        item = existing.get(record.external_id)
        if item is None:
            to_create.append(
                ComVEItem(
                    dataset=data.dataset,
                    collection=data.collection,
                    split=data.split,
                    external_id=record.external_id,
                    import_batch=batch,
                    **values,
                )
            )
        else:
            status = _refresh(item, values, batch)
            tally.count_existing(status)
            if status != "unchanged":
                to_update.append(item)
                moved += status == "moved"
    ComVEItem.objects.bulk_create(to_create, batch_size=2000)
    if to_update:
        ComVEItem.objects.bulk_update(to_update, [*COMVE_FIELDS, "import_batch"], batch_size=1000)
    tally.created = len(to_create)
    summary = {
        "dataset": data.dataset,
        "collection": data.collection,
        "split": data.split,
        "items": len(data.items),
        "provenance_refreshed": moved,
        "subtask_a": sum(1 for r in data.items if r.has_a),
        "subtask_b": sum(1 for r in data.items if r.has_b),
        "subtask_c": sum(1 for r in data.items if r.has_c),
    }
    return {"items": tally}, summary
