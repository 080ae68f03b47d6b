"""``dataset_import``: the one way items enter Winnow (command line, upload page, demo
data). It parses and checks every file completely before it writes anything, then writes
in one transaction with bulk queries: a bad file writes nothing, and a second run of the
same files creates nothing and reports what it left unchanged. Each format's rows are
written by the module of its family (``winograd``, ``comve``, ``reasons``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import IntegrityError, transaction

from core.roles import Actor, account_of
from datasets.importers import PARSERS
from datasets.importers.base import DatasetImportError
from datasets.importers.records import ComVEData, ReasonRowsData, TrichelairData, WinoWhyData
from datasets.models import OWN_FORMATS, PUBLIC_COLLECTIONS, ComVEItem, ImportBatch, Schema
from datasets.services.collections import CARD_FIELDS, collection_describe
from datasets.services.comve import write_comve
from datasets.services.reasons import write_reasons
from datasets.services.rows import Tally, _json_safe
from datasets.services.winograd import write_trichelair, write_winowhy

MAX_WARNINGS_STORED = 100
#: Rows shown in an import's preview.
SAMPLE_ROWS = 5


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


def dataset_import(
    *, format: str, paths: list[Path], options: dict[str, Any] | None = None, user: Actor | None = None
) -> ImportResult:
    """Import files of ``format`` (winowhy, trichelair, comve, senmaking).

    ``options``: ``categories`` (winowhy: path of cat_ref.json), ``collection`` (winowhy,
    trichelair: default ``wsc273``), ``split`` and ``dataset`` (comve, senmaking),
    ``uploaded`` (files came from the upload page: their temporary paths are not recorded),
    ``dry_run`` (check and count everything, then roll back: nothing is written).
    A curator's own items (``schemas``, ``reasons``, ``comve-items``) need a ``collection``
    that is not a public set's; ``collection_card`` ({title, description, licence,
    citation}) describes it for the cards of its releases (blank values change nothing).
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
            counts, summary = write_winowhy(parsed, batch, options)
            if format == "schemas":  # its file has no reasons: they come in a file of their own
                counts.pop("reasons")
        elif isinstance(parsed, TrichelairData):
            counts, summary = write_trichelair(parsed, batch, options)
        elif isinstance(parsed, ReasonRowsData):
            counts, summary = write_reasons(parsed, batch, options)
        else:
            assert isinstance(parsed, ComVEData)
            counts, summary = write_comve(parsed, batch)
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
        if format in OWN_FORMATS:  # what the curator said of the collection, for its cards
            card = options.get("collection_card") or {}
            collection_describe(name=str(options["collection"]), **{k: card.get(k) for k in CARD_FIELDS})
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
