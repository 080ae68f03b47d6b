"""The release shape of WinoWhy: one payload per reason, with its question's schema."""

from collections.abc import Iterator
from typing import Any

from django.db.models import QuerySet

from datasets.models import Reason
from releases.card import CARD_SECTIONS
from releases.dataset import Dataset
from releases.shapes.base import CHUNK, ReleaseShape, Row, Selection, own_collections


def reason_queryset(selection: Selection) -> QuerySet[Reason]:
    if selection.get("collection"):
        return Reason.objects.filter(schema__collection=selection["collection"])
    return Reason.objects.exclude(schema__collection__in=own_collections())


def _queryset(dataset: str, selection: Selection) -> QuerySet[Reason]:
    return reason_queryset(selection)


def _rows(dataset: str, selection: Selection) -> Iterator[Row]:
    rows = (
        reason_queryset(selection)
        .order_by("schema__collection", "schema_id", "position")
        .values(
            "id",
            "schema_id",
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
            {"reason": r["id"], "schema": r["schema_id"]},
        )


def _label_rows(dataset: str, selection: Selection, target: str) -> Any:
    field = "schema_id" if target == "schema" else "id"
    return reason_queryset(selection).values_list(field, flat=True)


SHAPE = ReleaseShape(
    dataset=Dataset.WINOWHY,
    queryset=_queryset,
    rows=_rows,
    # a reason carries its question's major types too
    labels={"plausibility": "reason", "knowledge_type": "reason", "knowledge_types": "schema"},
    label_rows=_label_rows,
    # the reasons' file, and the questions'
    source_fields=(("source_file", "file_checksum"), ("schema__source_file", "schema__file_checksum")),
    agreement_field="items__reason_id__in",
    card=CARD_SECTIONS[Dataset.WINOWHY],
)
