"""The release shape of WSC: one payload per schema, with its switched sentence."""

from collections.abc import Iterator
from typing import Any

from django.db.models import QuerySet

from datasets.models import Schema
from releases.card import CARD_SECTIONS
from releases.dataset import Dataset
from releases.shapes import adversarial
from releases.shapes.base import (
    CHUNK,
    ReleaseShape,
    Row,
    Selection,
    bool_or_none,
    own_collections,
    switched_parts,
)


def schema_queryset(selection: Selection) -> QuerySet[Schema]:
    """The selection's collection; without one, every collection of the public sets (a
    curator's own items are released only under their collection's name)."""
    if selection.get("collection"):
        schemas = Schema.objects.filter(collection=selection["collection"])
        if selection.get("adversarial"):  # only the validated items' schemas
            return schemas.filter(
                id__in=list(adversarial.row_fields(selection["collection"], selection, comve=False))
            )
        return schemas
    return Schema.objects.exclude(collection__in=own_collections())


def _queryset(dataset: str, selection: Selection) -> QuerySet[Schema]:
    return schema_queryset(selection)


def _rows(dataset: str, selection: Selection) -> Iterator[Row]:
    # the adversarial items' fields (round, models fooled, votes, tries...); others add none
    written = adversarial.row_fields(str(selection.get("collection") or ""), selection, comve=False)
    rows = (
        schema_queryset(selection)
        .order_by("collection", "id")
        .values(
            "id",
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
                "switchable": bool_or_none(r["switchable"]),
                "associative": bool_or_none(r["associative"]),
                "knowledge_types": sorted(r["knowledge_types"] or []),
                **adversarial.copied(written.get(r["id"])),
            },
            {"schema": r["id"]},
        )


def _label_rows(dataset: str, selection: Selection, target: str) -> Any:
    return schema_queryset(selection).values_list("id", flat=True)


SHAPE = ReleaseShape(
    dataset=Dataset.WSC,
    queryset=_queryset,
    rows=_rows,
    labels={"switchable": "schema", "associative": "schema", "knowledge_types": "schema"},
    label_rows=_label_rows,
    source_fields=(("source_file", "file_checksum"),),
    agreement_field="items__schema_id__in",
    card=CARD_SECTIONS[Dataset.WSC],
)
