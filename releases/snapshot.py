"""Canonical payloads of the current items, read in a fixed order with bounded memory.

A payload is what a ReleaseItem freezes and what the files are built from; its fields
are the JSONL fields documented in docs/formats.md.
"""

import re
from collections.abc import Iterator
from typing import Any

from django.db.models import QuerySet

from datasets.models import COMVE_CONTENT_FIELDS, OWN_FORMATS, ComVEItem, ImportBatch, Reason, Schema
from releases.models import ReleaseDataset

CHUNK = 2000
BRACKETED = re.compile(r"^(?P<before>.*?)\[(?P<pronoun>[^\[\]]+)\](?P<after>.*)$", re.S)


def switched_parts(text: str) -> tuple[str, str, str, str]:
    """(sentence, text before, pronoun, text after) of a switched sentence.

    The importer keeps the pronoun in [brackets] as the Trichelair file has it; the
    release gives the plain sentence and its three parts. Without brackets the parts are "".
    """
    match = BRACKETED.match(text or "")
    if match is None:
        return (text or "").strip(), "", "", ""
    before, pronoun, after = match["before"], match["pronoun"], match["after"]
    return (before + pronoun + after).strip(), before.strip(), pronoun.strip(), after.strip()


def _bool(value: Any) -> bool | None:
    return None if value is None else bool(value)


def own_collections() -> Any:
    """The collections a curator's own schemas were imported into (values of ``collection``)."""
    return Schema.objects.filter(import_batch__format__in=OWN_FORMATS).values("collection")


def schema_queryset(selection: dict[str, Any]) -> QuerySet[Schema]:
    """The selection's collection; without one, every collection of the public sets (a
    curator's own items are released only under their collection's name)."""
    if selection.get("collection"):
        return Schema.objects.filter(collection=selection["collection"])
    return Schema.objects.exclude(collection__in=own_collections())


def reason_queryset(selection: dict[str, Any]) -> QuerySet[Reason]:
    if selection.get("collection"):
        return Reason.objects.filter(schema__collection=selection["collection"])
    return Reason.objects.exclude(schema__collection__in=own_collections())


def comve_queryset(dataset: str, selection: dict[str, Any]) -> QuerySet[ComVEItem]:
    # The public items have no collection; a curator's own items only with theirs named.
    qs = ComVEItem.objects.filter(dataset=dataset, collection=selection.get("collection") or "")
    if selection.get("split"):
        qs = qs.filter(split=selection["split"])
    return qs


def item_queryset(dataset: str, selection: dict[str, Any]) -> QuerySet:
    if dataset == ReleaseDataset.WSC:
        return schema_queryset(selection)
    if dataset == ReleaseDataset.WINOWHY:
        return reason_queryset(selection)
    return comve_queryset(dataset, selection)


def _wsc(selection: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    rows = (
        schema_queryset(selection)
        .order_by("collection", "id")
        .values(
            "collection",
            "external_id",
            "text_before",
            "pronoun",
            "text_after",
            "candidate_a",
            "candidate_b",
            "answer",
            "source",
            "twin__external_id",
            "switched_text",
            "switchable",
            "associative",
            "knowledge_types",
        )
    )
    for r in rows.iterator(chunk_size=CHUNK):
        sentence = " ".join(p for p in (r["text_before"], r["pronoun"], r["text_after"]) if p)
        switched, switched_before, switched_pronoun, switched_after = switched_parts(r["switched_text"])
        yield (
            f"{r['collection']}:{r['external_id']}",
            {
                "id": r["external_id"],
                "collection": r["collection"],
                "text_before": r["text_before"],
                "pronoun": r["pronoun"],
                "text_after": r["text_after"],
                "sentence": sentence,
                "candidates": [r["candidate_a"], r["candidate_b"]],
                "answer": r["answer"],
                "source": r["source"],
                "twin": r["twin__external_id"],
                "switched": switched,
                "switched_text_before": switched_before,
                "switched_pronoun": switched_pronoun,
                "switched_text_after": switched_after,
                "switchable": _bool(r["switchable"]),
                "associative": _bool(r["associative"]),
                "knowledge_types": sorted(r["knowledge_types"] or []),
            },
        )


def _winowhy(selection: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    rows = (
        reason_queryset(selection)
        .order_by("schema__collection", "schema_id", "position")
        .values(
            "schema__collection",
            "schema__external_id",
            "schema__text_before",
            "schema__pronoun",
            "schema__text_after",
            "schema__candidate_a",
            "schema__candidate_b",
            "schema__answer",
            "schema__knowledge_types",
            "position",
            "text",
            "origin",
            "plausibility",
            "label",
            "source_label",
            "knowledge_type",
        )
    )
    for r in rows.iterator(chunk_size=CHUNK):
        sentence = " ".join(
            p for p in (r["schema__text_before"], r["schema__pronoun"], r["schema__text_after"]) if p
        )
        schema_id = r["schema__external_id"]
        yield (
            f"{r['schema__collection']}:{schema_id}.{r['position']}",
            {
                "id": f"{schema_id}.{r['position']}",
                "schema_id": schema_id,
                "position": r["position"],
                "sentence": sentence,
                "pronoun": r["schema__pronoun"],
                "candidates": [r["schema__candidate_a"], r["schema__candidate_b"]],
                "answer": r["schema__answer"],
                "text": r["text"],
                "origin": r["origin"],
                "score": r["plausibility"],
                "label": r["label"],
                "source_label": r["source_label"],
                "knowledge_type": r["knowledge_type"],
                "knowledge_types": sorted(r["schema__knowledge_types"] or []),
            },
        )


def _comve(dataset: str, selection: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    rows = (
        comve_queryset(dataset, selection)
        .order_by("split", "id")
        .values(
            "dataset",
            "collection",
            "split",
            "external_id",
            *COMVE_CONTENT_FIELDS,
        )
    )
    for r in rows.iterator(chunk_size=CHUNK):
        # Subtask C's own false statement only where its file differs from subtask B's, so
        # that the payloads (and digests) of every other item stay as they were.
        own_c = {"false_sent_c": r["false_statement_c"]} if r["false_statement_c"] else {}
        # Keys and payloads of the public items are as they always were (their digests too).
        where = f"{r['dataset']}/{r['collection']}" if r["collection"] else r["dataset"]
        own_collection = {"collection": r["collection"]} if r["collection"] else {}
        yield (
            f"{where}/{r['split']}:{r['external_id']}",
            {
                "id": r["external_id"],
                "split": r["split"],
                "sent0": r["statement_0"],
                "sent1": r["statement_1"],
                "false_index": r["false_index"],
                "false_sent": r["false_statement"],
                "option_a": r["option_a"],
                "option_b": r["option_b"],
                "option_c": r["option_c"],
                "correct_option": r["correct_option"],
                "references": list(r["references"] or []),
                "has_a": bool(r["has_a"]),
                "has_b": bool(r["has_b"]),
                "has_c": bool(r["has_c"]),
                **own_c,
                **own_collection,
            },
        )


def item_payloads(dataset: str, selection: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(key, payload) for every item of the selection, in release order."""
    if dataset == ReleaseDataset.WSC:
        return _wsc(selection)
    if dataset == ReleaseDataset.WINOWHY:
        return _winowhy(selection)
    return _comve(dataset, selection)


def source_files(dataset: str, selection: dict[str, Any]) -> list[dict[str, str]]:
    """Distinct (file, SHA-256) of the imported files the selection came from."""
    qs = item_queryset(dataset, selection)
    pairs = set(qs.values_list("source_file", "file_checksum").distinct())
    if dataset == ReleaseDataset.WINOWHY:
        pairs |= set(
            qs.values_list("schema__source_file", "schema__file_checksum").distinct()  # the questions
        )
    # Every file of the import batches involved (e.g. the Trichelair label files, whose rows
    # update schemas whose provenance names winowhy.json).
    batch_ids = set(qs.exclude(import_batch=None).values_list("import_batch_id", flat=True).distinct())
    for files in ImportBatch.objects.filter(pk__in=batch_ids).values_list("files", flat=True):
        for entry in files or []:
            if isinstance(entry, dict) and entry.get("sha256"):
                pairs.add((str(entry.get("name") or entry.get("path") or ""), str(entry["sha256"])))
    return [{"file": f, "sha256": c} for f, c in sorted(pairs)]
