"""The release shape of ComVE and of the Sen-Making pilot: one payload per item, its
three subtasks' fields side by side."""

from collections.abc import Iterator
from typing import Any

from django.db.models import QuerySet

from datasets.models import COMVE_CONTENT_FIELDS, ComVEItem
from releases.card import CARD_SECTIONS
from releases.dataset import Dataset
from releases.shapes import adversarial
from releases.shapes.base import CHUNK, ReleaseShape, Row, Selection


def comve_queryset(dataset: str, selection: Selection) -> QuerySet[ComVEItem]:
    # The public items have no collection; a curator's own items only with theirs named.
    qs = ComVEItem.objects.filter(dataset=dataset, collection=selection.get("collection") or "")
    if selection.get("split"):
        qs = qs.filter(split=selection["split"])
    if selection.get("adversarial") and selection.get("collection"):  # only the validated items
        qs = qs.filter(id__in=list(adversarial.row_fields(selection["collection"], selection, comve=True)))
    return qs


def _rows(dataset: str, selection: Selection) -> Iterator[Row]:
    # the adversarial items' fields (round, models fooled, votes, tries...); others add none
    written = adversarial.row_fields(str(selection.get("collection") or ""), selection, comve=True)
    rows = (
        comve_queryset(dataset, selection)
        .order_by("split", "id")
        .values(
            "id",
            "needs_rewrite",
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
        # A curator's own items carry their rewrite flag (a label, from a check campaign).
        own_collection = (
            {"collection": r["collection"], "needs_rewrite": bool(r["needs_rewrite"])}
            if r["collection"]
            else {}
        )
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
                **adversarial.copied(written.get(r["id"])),
            },
            {"comve_item": r["id"]},
        )


def _label_rows(dataset: str, selection: Selection, target: str) -> Any:
    return comve_queryset(dataset, selection).values_list("id", flat=True)


def _shape(dataset: Dataset) -> ReleaseShape:
    return ReleaseShape(
        dataset=dataset,
        queryset=comve_queryset,
        rows=_rows,
        labels={"needs_rewrite": "comve_item"},
        label_rows=_label_rows,
        source_fields=(("source_file", "file_checksum"),),
        agreement_field="items__comve_item_id__in",
        card=CARD_SECTIONS[dataset],
    )


COMVE = _shape(Dataset.COMVE)
SENMAKING = _shape(Dataset.SENMAKING)
