"""Writing reasons of schemas already in a collection: a curator's own reason files, and a
language model's generated candidates."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from core.roles import Actor, account_of
from datasets.importers.base import DatasetImportError
from datasets.importers.records import ReasonRowsData
from datasets.labels import import_labels_record
from datasets.models import ImportBatch, Reason, Schema
from datasets.services.rows import PROVENANCE_FIELDS, Tally, _json_safe, _refresh


class _CollectionReasons:
    """The reasons a collection has, by (schema id, text), and the next free position of
    each schema: where a curator's reasons and a model's candidates are added."""

    def __init__(self, collection: str) -> None:
        self.by_text: dict[tuple[int, str], Reason] = {}
        self._last: dict[int, int] = {}
        for reason in Reason.objects.filter(schema__collection=collection):
            self.by_text[(reason.schema_id, reason.text)] = reason
            self._last[reason.schema_id] = max(self._last.get(reason.schema_id, -1), reason.position)

    def next_position(self, schema_id: int) -> int:
        """The position after the schema's last reason (taken: the next call gives the one after)."""
        self._last[schema_id] = self._last.get(schema_id, -1) + 1
        return self._last[schema_id]


def write_reasons(
    data: ReasonRowsData, batch: ImportBatch, options: dict[str, Any]
) -> tuple[dict[str, Tally], dict[str, Any]]:
    """Reasons for schemas already in the collection. A reason is the same reason when its
    schema and text are (so a second import of the file creates nothing); new ones are
    numbered after the schema's last reason."""
    collection = str(options["collection"])
    schemas = {s.external_id: s for s in Schema.objects.filter(collection=collection)}
    missing = sorted({r.schema_external_id for r in data.reasons} - set(schemas), key=str)
    if missing:
        first = next(r for r in data.reasons if r.schema_external_id == missing[0])
        raise DatasetImportError(
            f"no schema {missing[0]!r} in collection {collection!r}"
            + (f" ({len(missing) - 1} more ids are missing too)" if len(missing) > 1 else "")
            + ": import the schemas first",
            file=first.provenance.source_file,
            row=first.provenance.source_row,
            field="schema",
        )
    existing = _CollectionReasons(collection)
    tally = Tally()
    to_create: list[Reason] = []
    to_update: list[Reason] = []
    fields = ["origin", "plausibility", "label", "knowledge_type", *PROVENANCE_FIELDS]
    touched: list[Reason] = []
    for record in data.reasons:
        schema = schemas[record.schema_external_id]
        values = {
            "origin": record.origin,
            "plausibility": record.plausibility,
            "label": record.label,
            "knowledge_type": record.knowledge_type,
            "source_file": record.provenance.source_file,
            "source_row": record.provenance.source_row,
            "file_checksum": record.provenance.file_checksum,
        }
        reason = existing.by_text.get((schema.pk, record.text))
        if reason is None:
            position = existing.next_position(schema.pk)
            reason = Reason(schema=schema, position=position, text=record.text, import_batch=batch, **values)
            to_create.append(reason)
            touched.append(reason)
        else:
            touched.append(reason)
            status = _refresh(reason, values, batch)
            tally.count_existing(status)
            if status != "unchanged":
                to_update.append(reason)
    Reason.objects.bulk_create(to_create, batch_size=1000)
    if to_update:
        Reason.objects.bulk_update(to_update, [*fields, "import_batch"], batch_size=1000)
    tally.created = len(to_create)
    import_labels_record(batch, touched, ["plausibility", "knowledge_type"])
    origins: dict[str, int] = {}
    for record in data.reasons:
        origins[record.origin] = origins.get(record.origin, 0) + 1
    summary = {
        "collection": collection,
        "reasons": len(data.reasons),
        "schemas": len({r.schema_external_id for r in data.reasons}),
        "origins": dict(sorted(origins.items())),
    }
    return {"reasons": tally}, summary


@dataclass
class GeneratedReasons:
    """What :func:`generated_reasons_add` stored: the batch and the counts per schema."""

    batch: ImportBatch
    created: int
    per_schema: dict[str, int]


def generated_reasons_add(
    *,
    collection: str,
    reasons: dict[str, list[str]],
    model: dict[str, Any],
    settings: dict[str, Any],
    user: Actor | None = None,
) -> GeneratedReasons:
    """Store a language model's candidate reasons (``reasons``: schema id -> texts, already
    cleaned of empty and duplicate outputs) as reasons of origin ``generated``, numbered after
    each schema's last reason, in one transaction. The import batch records the model's
    identity (name, SHA-256) and the decoding settings; each reason's provenance names the
    model and its place among its question's outputs. A text the schema has already is
    skipped, so running the same generation again adds nothing."""
    with transaction.atomic():
        schemas = {s.external_id: s for s in Schema.objects.filter(collection=collection)}
        missing = sorted(set(reasons) - set(schemas))
        if missing:
            raise DatasetImportError(f"no schema {missing[0]!r} in collection {collection!r}", field="schema")
        batch = ImportBatch.objects.create(
            format="generated",
            files=[],
            options=_json_safe({"collection": collection, **settings})
            | {"model": {k: v for k, v in model.items() if isinstance(v, str | int | float)}},
            created_by=account_of(user),
        )
        existing = _CollectionReasons(collection)
        rows: list[Reason] = []
        per_schema: dict[str, int] = {}
        source = str(model.get("name") or "model")[:255]
        checksum = str(model.get("sha256") or "")[:64]
        for external_id, texts in reasons.items():
            schema = schemas[external_id]
            for index, text in enumerate(texts, start=1):
                if (schema.pk, text) in existing.by_text:
                    continue
                rows.append(
                    Reason(
                        schema=schema,
                        position=existing.next_position(schema.pk),
                        text=text,
                        origin="generated",
                        source_file=source,
                        source_row=index,
                        file_checksum=checksum,
                        import_batch=batch,
                    )
                )
                existing.by_text[(schema.pk, text)] = rows[-1]
                per_schema[external_id] = per_schema.get(external_id, 0) + 1
        Reason.objects.bulk_create(rows, batch_size=1000)
        batch.created = len(rows)
        batch.summary = {"collection": collection, "reasons": len(rows), "schemas": len(per_schema)}
        batch.save(update_fields=["created", "summary"])
    return GeneratedReasons(batch=batch, created=len(rows), per_schema=per_schema)
