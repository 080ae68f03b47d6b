"""Writing Winograd questions: WinoWhy's schemas with their reasons (and a curator's own
schemas), and Trichelair et al.'s switchable/associative labels matched to them by text."""

from __future__ import annotations

import re
from typing import Any

from datasets.importers.base import DatasetImportError
from datasets.importers.records import TrichelairData, WinoWhyData
from datasets.labels import import_labels_record
from datasets.models import ImportBatch, Reason, Schema
from datasets.services.rows import Tally, _apply, _differs, _refresh


def write_winowhy(
    data: WinoWhyData, batch: ImportBatch, options: dict[str, Any]
) -> tuple[dict[str, Tally], dict[str, Any]]:
    collection = str(options.get("collection") or "wsc273")
    existing = {s.external_id: s for s in Schema.objects.filter(collection=collection)}
    schema_fields = [
        "text_before",
        "pronoun",
        "text_after",
        "candidate_a",
        "candidate_b",
        "answer",
        "source",
        "source_file",
        "source_row",
        "file_checksum",
    ]
    if data.categories_given:
        schema_fields.append("knowledge_types")
    tally = Tally()
    to_create: list[Schema] = []
    to_update: list[Schema] = []
    content_updated: set[str] = set()
    moved = 0
    for record in data.schemas:
        values = {
            "text_before": record.text_before,
            "pronoun": record.pronoun,
            "text_after": record.text_after,
            "candidate_a": record.candidate_a,
            "candidate_b": record.candidate_b,
            "answer": record.answer,
            "source": record.source,
            "source_file": record.provenance.source_file,
            "source_row": record.provenance.source_row,
            "file_checksum": record.provenance.file_checksum,
        }
        if data.categories_given:
            values["knowledge_types"] = record.knowledge_types or []
        schema = existing.get(record.external_id)
        if schema is None:
            schema = Schema(
                collection=collection, external_id=record.external_id, import_batch=batch, **values
            )
            to_create.append(schema)
            existing[record.external_id] = schema
        elif (status := _refresh(schema, values, batch)) != "unchanged":
            to_update.append(schema)
            if status == "updated":
                content_updated.add(record.external_id)
            else:
                moved += 1
    Schema.objects.bulk_create(to_create)
    if to_update:
        Schema.objects.bulk_update(to_update, [*schema_fields, "import_batch"])

    # Twins: set both directions; clear changed ones first so no two rows ever share a twin.
    wanted: dict[str, int | None] = {}
    for record in data.schemas:
        twin = existing[record.twin_external_id] if record.twin_external_id else None
        wanted[record.external_id] = twin.pk if twin else None
    changed = [existing[e] for e, pk in wanted.items() if existing[e].twin_id != pk]
    if changed:
        for schema in changed:
            schema.twin_id = None
        Schema.objects.bulk_update(changed, ["twin"])
        for schema in changed:
            schema.twin_id = wanted[schema.external_id]
            schema.import_batch = batch
        Schema.objects.bulk_update(changed, ["twin", "import_batch"])
    created_ids = {s.external_id for s in to_create}
    updated_ids = content_updated | {s.external_id for s in changed}
    tally.created = len(created_ids)
    tally.updated = len(updated_ids - created_ids)
    tally.unchanged = len(data.schemas) - tally.created - tally.updated

    reasons = Tally()
    by_key = {(r.schema_id, r.position): r for r in Reason.objects.filter(schema__collection=collection)}
    new_reasons: list[Reason] = []
    changed_reasons: list[Reason] = []
    reason_fields = [
        "text",
        "origin",
        "plausibility",
        "label",
        "source_label",
        "source_file",
        "source_row",
        "file_checksum",
    ]
    touched: list[Reason] = []
    for record in data.schemas:
        schema = existing[record.external_id]
        for r in record.reasons:
            values = {
                "text": r.text,
                "origin": r.origin,
                "plausibility": r.plausibility,
                "label": r.label,
                "source_label": r.source_label,
                "source_file": r.provenance.source_file,
                "source_row": r.provenance.source_row,
                "file_checksum": r.provenance.file_checksum,
            }
            reason = by_key.get((schema.pk, r.position))
            if reason is None:
                reason = Reason(schema=schema, position=r.position, import_batch=batch, **values)
                new_reasons.append(reason)
                touched.append(reason)
            else:
                touched.append(reason)
                status = _refresh(reason, values, batch)
                reasons.count_existing(status)
                if status != "unchanged":
                    changed_reasons.append(reason)
                    moved += status == "moved"
    Reason.objects.bulk_create(new_reasons, batch_size=1000)
    if changed_reasons:
        Reason.objects.bulk_update(changed_reasons, [*reason_fields, "import_batch"], batch_size=1000)
    reasons.created = len(new_reasons)
    # The labels the file gave, as this import's layer (datasets.labels).
    if data.categories_given:
        import_labels_record(batch, [existing[r.external_id] for r in data.schemas], ["knowledge_types"])
    import_labels_record(batch, touched, ["plausibility"])

    knowledge: dict[str, int] = {}
    if data.categories_given:
        for record in data.schemas:
            for kind in record.knowledge_types or []:
                knowledge[kind] = knowledge.get(kind, 0) + 1
    summary = {
        "collection": collection,
        "schemas": len(data.schemas),
        "reasons": sum(len(s.reasons) for s in data.schemas),
        "twin_pairs": len(data.twin_pairs),
        "provenance_refreshed": moved,
        "schemas_with_twin": 2 * len(data.twin_pairs),
        "without_twin": [s.external_id for s in data.schemas if not s.twin_external_id],
        "knowledge_types": dict(sorted(knowledge.items())),
    }
    return {"schemas": tally, "reasons": reasons}, summary


_NORM_RE = re.compile(r"[^a-z0-9]+")


def text_key(before: str, pronoun: str, after: str) -> tuple[str, str, str]:
    """How a sentence is matched to a schema: case, whitespace and punctuation ignored,
    but the pronoun's position kept (two WSC questions differ only in it)."""
    before, pronoun, after = (_NORM_RE.sub(" ", part.lower()).strip() for part in (before, pronoun, after))
    return before, pronoun, after


def write_trichelair(
    data: TrichelairData, batch: ImportBatch, options: dict[str, Any]
) -> tuple[dict[str, Tally], dict[str, Any]]:
    collection = str(options.get("collection") or "wsc273")
    schemas = list(Schema.objects.filter(collection=collection))
    if not schemas:
        raise DatasetImportError(
            f"there are no schemas in collection {collection!r} to put the labels on: "
            "import winowhy.json first",
            file=data.files[0]["name"],
        )
    index: dict[tuple[str, str, str], list[Schema]] = {}
    for schema in schemas:
        index.setdefault(text_key(schema.text_before, schema.pronoun, schema.text_after), []).append(schema)
    matched: dict[int, str] = {}
    warnings: list[str] = []
    to_update: list[Schema] = []
    fields: set[str] = set()
    tally = Tally()
    for record in data.rows:
        keys = [text_key(record.before, record.pronoun, record.after)]
        if record.alternative:
            keys.append(text_key(*record.alternative))
        found = {s.pk: s for key in keys for s in index.get(key, [])}
        file, row = record.file, record.row
        if not found:
            raise DatasetImportError(
                f"matches no schema of collection {collection!r} by text "
                f"({record.before} [{record.pronoun}] {record.after!s:.40})",
                file=file,
                row=row,
                field="sentence",
            )
        if len(found) > 1:
            ids = ", ".join(sorted(s.external_id for s in found.values()))
            raise DatasetImportError(f"matches several schemas ({ids})", file=file, row=row, field="sentence")
        schema = next(iter(found.values()))
        if schema.pk in matched:
            raise DatasetImportError(
                f"matches schema {schema.external_id}, which {matched[schema.pk]} matched already",
                file=file,
                row=row,
                field="sentence",
            )
        matched[schema.pk] = f"{record.file} row {record.row}"
        warnings.extend(_disagreements(record, schema))
        values: dict[str, Any] = {}
        if record.switchable is not None:
            values["switchable"] = record.switchable
            values["switched_text"] = record.switched_text or ""
        if record.associative is not None:
            values["associative"] = record.associative
        fields.update(values)
        if _differs(schema, values):
            _apply(schema, values)
            to_update.append(schema)
        else:
            tally.unchanged += 1
    if to_update:
        Schema.objects.bulk_update(to_update, sorted(fields))
    tally.updated = len(to_update)
    labelled = [s for s in schemas if s.pk in matched]
    import_labels_record(batch, labelled, [n for n in ("switchable", "associative") if n in fields])
    summary = {
        "collection": collection,
        "rows": len(data.rows),
        "matched": len(matched),
        "switchable": sum(1 for r in data.rows if r.switchable),
        "associative": sum(1 for r in data.rows if r.associative),
        "schemas_without_labels": len(schemas) - len(matched),
    }
    data.warnings.extend(warnings)
    return {"schemas": tally}, summary


def _disagreements(record: Any, schema: Schema) -> list[str]:
    """Where a Trichelair row says something else than the schema it matched (kept as the
    schema says; reported so that a curator can look)."""
    out = []

    def same(a: str, b: str) -> bool:
        return _NORM_RE.sub(" ", a.lower()).strip() == _NORM_RE.sub(" ", b.lower()).strip()

    where = f"{record.file} row {record.row}"
    if record.candidates and not (
        same(record.candidates[0], schema.candidate_a) and same(record.candidates[1], schema.candidate_b)
    ):
        out.append(
            f"{where} field 'answer0'/'answer1': {record.candidates[0]!r}, {record.candidates[1]!r} differ from "
            f"schema {schema.external_id}'s candidates {schema.candidate_a!r}, {schema.candidate_b!r}"
        )
    elif record.correct and not same(record.correct, schema.correct_candidate):
        out.append(
            f"{where} field 'correct_answer': {record.correct!r} is not schema {schema.external_id}'s "
            f"answer {schema.correct_candidate!r}"
        )
    return out
