"""Writes of the datasets app.

``dataset_import`` is the one way items enter Winnow (command line, upload page, demo
data). It parses and checks every file completely before it writes anything, then writes
in one transaction with bulk queries: a bad file writes nothing, and a second run of the
same files creates nothing and reports what it left unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Model

from core.roles import Actor, account_of
from datasets.importers import PARSERS
from datasets.importers.base import DatasetImportError, ImportError_
from datasets.importers.records import ComVEData, ReasonRowsData, TrichelairData, WinoWhyData
from datasets.labels import import_labels_record
from datasets.models import (
    COMVE_CONTENT_FIELDS,
    OWN_FORMATS,
    PUBLIC_COLLECTIONS,
    ComVEItem,
    ImportBatch,
    Reason,
    Schema,
)

__all__ = ["DatasetImportError", "ImportError_", "ImportResult", "dataset_import"]

MAX_WARNINGS_STORED = 100
#: Rows shown in an import's preview.
SAMPLE_ROWS = 5


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


@dataclass
class ImportResult:
    """What an import did: totals over all item kinds, per kind, and the batch it recorded."""

    batch: ImportBatch
    created: int
    updated: int
    unchanged: int
    counts: dict[str, dict[str, int]]
    warnings: list[str] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    sample: list[dict[str, str]] = field(default_factory=list)

    @property
    def dry_run(self) -> bool:
        return bool(self.summary.get("dry_run"))

    def highlights(self) -> list[str]:
        """One line per thing a curator checks after an import (twins, labels, split)."""
        s = self.summary
        fmt = self.batch.format
        if fmt == "winowhy":
            lines = [f"twins linked: {s['schemas_with_twin']} schemas in {s['twin_pairs']} pairs"]
            if s["knowledge_types"]:
                lines.append(
                    "knowledge types: " + ", ".join(f"{k} {n}" for k, n in s["knowledge_types"].items())
                )
            return lines
        if fmt == "schemas":
            return [
                f"collection {s['collection']}: {s['schemas']} schemas, "
                f"twins linked: {s['schemas_with_twin']} schemas in {s['twin_pairs']} "
                f"pair{'s' if s['twin_pairs'] != 1 else ''}"
            ]
        if fmt == "reasons":
            origins = ", ".join(f"{k} {n}" for k, n in s["origins"].items())
            return [
                f"collection {s['collection']}: {s['reasons']} reasons for {s['schemas']} schemas ({origins})"
            ]
        if fmt == "trichelair":
            return [
                f"matched {s['matched']} rows to schemas by text: "
                f"{s['switchable']} switchable, {s['associative']} associative"
            ]
        where = f"{s['dataset']}/{s['collection']}" if s.get("collection") else s["dataset"]
        return [
            f"{where}/{s['split']}: {s['items']} items "
            f"(subtask A {s['subtask_a']}, B {s['subtask_b']}, C {s['subtask_c']})"
        ]

    def describe(self) -> str:
        parts = [
            f"{kind}: {c['created']} created, {c['updated']} updated, {c['unchanged']} unchanged"
            for kind, c in self.counts.items()
        ]
        return "; ".join(parts)


def _json_safe(options: dict[str, Any]) -> dict[str, Any]:
    safe: dict[str, Any] = {}
    for key, value in options.items():
        if isinstance(value, Path):
            value = value.name
        if isinstance(value, str | int | float | bool) or value is None:
            safe[key] = value
    return safe


def dataset_import(
    *, format: str, paths: list[Path], options: dict[str, Any] | None = None, user: Actor | None = None
) -> ImportResult:
    """Import files of ``format`` (winowhy, trichelair, comve, senmaking).

    ``options``: ``categories`` (winowhy: path of cat_ref.json), ``collection`` (winowhy,
    trichelair: default ``wsc273``), ``split`` and ``dataset`` (comve, senmaking),
    ``uploaded`` (files came from the upload page: their temporary paths are not recorded),
    ``dry_run`` (check and count everything, then roll back: nothing is written).
    A curator's own items (``schemas``, ``reasons``, ``comve-items``) need a ``collection``
    that is not a public set's.
    Raises :class:`DatasetImportError` (file, row, field, reason) and writes nothing then.
    """
    options = dict(options or {})
    parser = PARSERS.get(format)
    if parser is None:
        raise DatasetImportError(f"unknown format {format!r} (expected one of: {', '.join(PARSERS)})")
    if format in OWN_FORMATS:
        _check_own_collection(format, options)
    parsed = parser([Path(p) for p in paths], options)  # everything is read and checked first
    files = [dict(f) for f in parsed.files]
    if options.get("uploaded"):
        for f in files:
            f.pop("path", None)
    try:
        return _write(format, parsed, files, options, user)
    except IntegrityError as exc:
        # Another import wrote the same items between our read and our write (PostgreSQL
        # runs imports side by side; SQLite's immediate transactions queue them).
        raise DatasetImportError(
            f"another import of the same items ran at the same time; nothing was written, run it again ({exc})"
        ) from exc


def _check_own_collection(format: str, options: dict[str, Any]) -> None:
    """Own items stay apart from the public sets: a named collection, never a public one."""
    collection = str(options.get("collection") or "").strip()
    if not collection:
        raise DatasetImportError(
            "give your items a collection name (letters, digits, - and _), so that they stay apart "
            "from the public sets",
            field="collection",
        )
    if not re.fullmatch(r"[-a-zA-Z0-9_]{1,20}", collection):
        raise DatasetImportError(f"{collection!r}: use up to 20 letters, digits, - and _", field="collection")
    public = [f for f in PARSERS if f not in OWN_FORMATS]
    if collection in PUBLIC_COLLECTIONS or (
        Schema.objects.filter(collection=collection, import_batch__format__in=public).exists()
        or ComVEItem.objects.filter(collection=collection, import_batch__format__in=public).exists()
    ):
        raise DatasetImportError(
            f"{collection!r} holds a public data set; choose another name for your own items",
            field="collection",
        )
    options["collection"] = collection


def _sample(parsed: WinoWhyData | TrichelairData | ComVEData | ReasonRowsData) -> list[dict[str, str]]:
    """The first rows as the import read them, for the preview."""
    if isinstance(parsed, WinoWhyData):
        return [
            {
                "id": s.external_id,
                "sentence": " ".join(p for p in (s.text_before, f"[{s.pronoun}]", s.text_after) if p),
                "candidates": f"A: {s.candidate_a} / B: {s.candidate_b}",
                "answer": s.answer,
                "twin": s.twin_external_id or "",
            }
            for s in parsed.schemas[:SAMPLE_ROWS]
        ]
    if isinstance(parsed, ReasonRowsData):
        return [
            {
                "schema": r.schema_external_id,
                "text": r.text,
                "origin": r.origin,
                "plausibility": "" if r.plausibility is None else f"{r.plausibility:g}",
                "label": r.label,
                "knowledge type": r.knowledge_type,
            }
            for r in parsed.reasons[:SAMPLE_ROWS]
        ]
    if isinstance(parsed, ComVEData):
        return [
            {
                "id": i.external_id,
                "statements": f"0: {i.statement_0} / 1: {i.statement_1}" if i.has_a else "",
                "against common sense": i.false_statement,
                "reasons": f"A: {i.option_a} / B: {i.option_b} / C: {i.option_c} ({i.correct_option})"
                if i.has_b
                else "",
                "references": " | ".join(i.references),
            }
            for i in parsed.items[:SAMPLE_ROWS]
        ]
    return [
        {
            "file": r.file,
            "row": str(r.row),
            "sentence": f"{r.before} [{r.pronoun}] {r.after}",
            "switchable": "" if r.switchable is None else str(r.switchable),
            "associative": "" if r.associative is None else str(r.associative),
        }
        for r in parsed.rows[:SAMPLE_ROWS]
    ]


def _write(
    format: str,
    parsed: WinoWhyData | TrichelairData | ComVEData | ReasonRowsData,
    files: list[dict[str, Any]],
    options: dict[str, Any],
    user: Actor | None,
) -> ImportResult:
    with transaction.atomic():
        batch = ImportBatch.objects.create(
            format=format,
            files=files,
            options=_json_safe(options),
            created_by=account_of(user),
        )
        if isinstance(parsed, WinoWhyData):
            counts, summary = _write_winowhy(parsed, batch, options)
            if format == "schemas":  # its file has no reasons: they come in a file of their own
                counts.pop("reasons")
        elif isinstance(parsed, TrichelairData):
            counts, summary = _write_trichelair(parsed, batch, options)
        elif isinstance(parsed, ReasonRowsData):
            counts, summary = _write_reasons(parsed, batch, options)
        else:
            assert isinstance(parsed, ComVEData)
            counts, summary = _write_comve(parsed, batch)
        totals = Tally(
            created=sum(c.created for c in counts.values()),
            updated=sum(c.updated for c in counts.values()),
            unchanged=sum(c.unchanged for c in counts.values()),
        )
        summary["counts"] = {k: c.as_dict() for k, c in counts.items()}
        summary["warnings"] = parsed.warnings[:MAX_WARNINGS_STORED]
        summary["warning_count"] = len(parsed.warnings)
        batch.created, batch.updated, batch.unchanged = totals.created, totals.updated, totals.unchanged
        batch.summary = summary
        batch.save(update_fields=["created", "updated", "unchanged", "summary"])
        if options.get("dry_run"):
            # Everything was checked and counted against the database; keep none of it.
            transaction.set_rollback(True)
            summary["dry_run"] = True
    return ImportResult(
        batch=batch,
        created=totals.created,
        updated=totals.updated,
        unchanged=totals.unchanged,
        counts=summary["counts"],
        warnings=parsed.warnings,
        summary=summary,
        sample=_sample(parsed),
    )


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


def _write_winowhy(
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


def _write_trichelair(
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


COMVE_FIELDS = [*COMVE_CONTENT_FIELDS, *PROVENANCE_FIELDS]


def _existing_comve_items(dataset: str, split: str, collection: str = "") -> dict[str, ComVEItem]:
    """The split's items already in the database, in one query."""
    items = ComVEItem.objects.filter(dataset=dataset, collection=collection, split=split)
    return {i.external_id: i for i in items}


def _write_comve(data: ComVEData, batch: ImportBatch) -> tuple[dict[str, Tally], dict[str, Any]]:
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


def _write_reasons(
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
