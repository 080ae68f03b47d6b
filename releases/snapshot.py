"""Canonical payloads of the current items, read in a fixed order with bounded memory.

A payload is what a ReleaseItem freezes and what the files are built from; its fields
are the JSONL fields documented in docs/formats.md.
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet

from datasets.models import (
    COMVE_CONTENT_FIELDS,
    OWN_FORMATS,
    ComVEItem,
    ImportBatch,
    Label,
    LabelSourceKind,
    Reason,
    Schema,
)
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


def own_collection(dataset: str, selection: dict[str, Any]) -> str:
    """The selection's collection when it holds a curator's own items ("" for the public
    sets): a ComVE collection always does; a schema collection when its schemas came from
    an own file."""
    collection = str(selection.get("collection") or "")
    if not collection or dataset in (ReleaseDataset.COMVE, ReleaseDataset.SENMAKING):
        return collection
    return collection if own_collections().filter(collection=collection).exists() else ""


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


#: (key, payload, the database ids of the rows its labels are on: {"schema": 1, ...})
Row = tuple[str, dict[str, Any], dict[str, int]]


def _wsc(selection: dict[str, Any]) -> Iterator[Row]:
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
                "switchable": _bool(r["switchable"]),
                "associative": _bool(r["associative"]),
                "knowledge_types": sorted(r["knowledge_types"] or []),
            },
            {"schema": r["id"]},
        )


def _winowhy(selection: dict[str, Any]) -> Iterator[Row]:
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


def _comve(dataset: str, selection: dict[str, Any]) -> Iterator[Row]:
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
            },
            {"comve_item": r["id"]},
        )


def _rows(dataset: str, selection: dict[str, Any]) -> Iterator[Row]:
    if dataset == ReleaseDataset.WSC:
        return _wsc(selection)
    if dataset == ReleaseDataset.WINOWHY:
        return _winowhy(selection)
    return _comve(dataset, selection)


def item_records(
    dataset: str, selection: dict[str, Any], *, labels: "LabelChoice | None" = None
) -> Iterator[tuple[str, dict[str, Any], dict[str, str]]]:
    """(key, payload, label sources {label: source name}) for every item of the
    selection, in release order, each label taken from the source the selection chose
    (``selection["label_sources"]``; see :class:`LabelChoice`)."""
    labels = labels or LabelChoice(dataset, selection)
    for key, payload, ids in _rows(dataset, selection):
        sources = labels.apply(payload, ids)
        yield key, payload, sources


def item_payloads(dataset: str, selection: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(key, payload) for every item of the selection, in release order."""
    for key, payload, _sources in item_records(dataset, selection):
        yield key, payload


# --------------------------------------------------------------------------- label sources

#: The labels an item of each data set carries: label name -> the row it is on ("schema",
#: "reason", "comve_item"). A WinoWhy reason carries its question's major types too.
DATASET_LABELS: dict[str, dict[str, str]] = {
    ReleaseDataset.WSC: {"switchable": "schema", "associative": "schema", "knowledge_types": "schema"},
    ReleaseDataset.WINOWHY: {
        "plausibility": "reason",
        "knowledge_type": "reason",
        "knowledge_types": "schema",
    },
    ReleaseDataset.COMVE: {"needs_rewrite": "comve_item"},
    ReleaseDataset.SENMAKING: {"needs_rewrite": "comve_item"},
}
#: A choice that takes the imported label wherever there is one (the default).
IMPORT_CHOICE = "import"
UNRECORDED = "unrecorded"


def _payload_values(name: str, value: dict[str, Any]) -> dict[str, Any]:
    """A layer's value as the payload's fields."""
    if name == "plausibility":
        return {"score": value.get("plausibility"), "label": value.get("label") or ""}
    if name == "knowledge_types":
        return {"knowledge_types": sorted(value.get("knowledge_types") or [])}
    if name in ("switchable", "associative"):
        return {name: _bool(value.get(name))}
    if name == "needs_rewrite":
        return {"needs_rewrite": bool(value.get("needs_rewrite"))}
    return {name: value.get(name) or ""}


def _has_value(name: str, payload: dict[str, Any]) -> bool:
    """The payload carries label ``name`` (a source must be named for it)."""
    if name == "plausibility":
        return payload.get("score") is not None or bool(payload.get("label"))
    if name == "needs_rewrite":
        return "needs_rewrite" in payload and bool(payload["needs_rewrite"])
    value = payload.get(name)
    return value is not None and value != "" and value != []


@dataclass(frozen=True)
class _Layer:
    source: str
    kind: str
    value: dict[str, Any]


@dataclass
class LabelSourceOption:
    """One source a release can take a label from, for the release form."""

    value: str  # "import" or "campaign:<name>"
    title: str
    items: int  # items of the selection it labels


@dataclass
class LabelChoice:
    """Which source each label of a release's items comes from.

    Per label, ``selection["label_sources"][label]`` names a source: ``"import"`` (the
    default) or ``"campaign:<name>"``. An item takes the chosen campaign's label where that
    campaign labelled it; otherwise the imported label where an import gave one; otherwise
    the label of the campaign that changed it last (which is what the item's fields hold,
    ``datasets.labels``). Where an import and a campaign give an item different labels and no
    choice is made, :meth:`conflicts` names them and a release refuses until the curator
    chooses.
    """

    dataset: str
    selection: dict[str, Any]
    layers: dict[tuple[str, int, str], list[_Layer]] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.names = DATASET_LABELS.get(self.dataset, {})
        self.choice: dict[str, str] = dict(self.selection.get("label_sources") or {})
        for name, target in self.names.items():
            # The items' ids read first, then their layers a chunk at a time: a subquery
            # here (the selection's own subqueries inside) is planned per row on PostgreSQL.
            ids = self._target_ids(target)
            found: list[Label] = []
            for start in range(0, len(ids), CHUNK):
                found.extend(
                    Label.objects.filter(
                        name=name, **{f"{target}_id__in": ids[start : start + CHUNK]}
                    ).select_related("source")
                )
            found.sort(key=lambda label: (label.updated_at, label.pk))
            for label in found:
                item = label.schema_id or label.reason_id or label.comve_item_id
                assert item is not None
                self.layers.setdefault((target, item, name), []).append(
                    _Layer(source=label.source.name, kind=label.source.kind, value=label.value)
                )
                self.titles[label.source.name] = label.source.title

    def _target_ids(self, target: str) -> list[int]:
        """The ids of the rows (``target``: schema, reason, comve_item) of the selection."""
        values: Any
        if self.dataset == ReleaseDataset.WINOWHY:
            field = "schema_id" if target == "schema" else "id"
            values = reason_queryset(self.selection).values_list(field, flat=True)
        elif self.dataset == ReleaseDataset.WSC:
            values = schema_queryset(self.selection).values_list("id", flat=True)
        else:
            values = comve_queryset(self.dataset, self.selection).values_list("id", flat=True)
        return sorted({int(i) for i in values if i is not None})

    def apply(self, payload: dict[str, Any], ids: dict[str, int]) -> dict[str, str]:
        """Set the payload's labels from the chosen sources; {label: source name}.

        A label with a campaign chosen takes that campaign's layer where it has one.
        Otherwise the item keeps the label its fields hold (the imported one where an import
        gave it: ``datasets.labels``), and its source is the latest layer with that value:
        an import first, then the campaigns, newest first; "unrecorded" where none has it
        (set by hand in the admin)."""
        sources: dict[str, str] = {}
        for name, target in self.names.items():
            if target not in ids or (name == "needs_rewrite" and "needs_rewrite" not in payload):
                continue  # (the public ComVE items carry no rewrite flag)
            layers = self.layers.get((target, ids[target], name), [])
            chosen = self.choice.get(name, IMPORT_CHOICE)
            picked = next((layer for layer in reversed(layers) if layer.source == chosen), None)
            if picked is not None:
                payload.update(_payload_values(name, picked.value))
                sources[name] = picked.source
                continue
            current = {k: payload.get(k) for k in _payload_values(name, {})}
            ordered = [layer for layer in layers if layer.kind == LabelSourceKind.IMPORT][::-1]
            ordered += [layer for layer in layers if layer.kind != LabelSourceKind.IMPORT][::-1]
            same = next((layer for layer in ordered if _payload_values(name, layer.value) == current), None)
            if same is not None:
                sources[name] = same.source
            elif _has_value(name, payload):
                sources[name] = UNRECORDED
        return sources

    def options(self) -> dict[str, list[LabelSourceOption]]:
        """Per label, the sources that label items of the selection, with their counts."""
        out: dict[str, list[LabelSourceOption]] = {}
        for name, target in self.names.items():
            imported: set[int] = set()
            campaigns: dict[str, set[int]] = {}
            for (t, item, n), layers in self.layers.items():
                if t != target or n != name:
                    continue
                for layer in layers:
                    if layer.kind == LabelSourceKind.IMPORT:
                        imported.add(item)
                    else:
                        campaigns.setdefault(layer.source, set()).add(item)
            if not imported and not campaigns:
                continue
            options = [
                LabelSourceOption(IMPORT_CHOICE, "imported, where an import gave the label", len(imported))
            ]
            options += [
                LabelSourceOption(source, self.titles.get(source, source), len(items))
                for source, items in sorted(campaigns.items())
            ]
            out[name] = options
        return out

    def conflicts(self) -> dict[str, int]:
        """Per label without a choice: items where an import and a campaign disagree."""
        out: dict[str, int] = {}
        for (_target, _item, name), layers in self.layers.items():
            if name in self.choice:
                continue
            imported = [layer for layer in layers if layer.kind == LabelSourceKind.IMPORT]
            if not imported:
                continue
            latest = imported[-1].value
            if any(layer.kind != LabelSourceKind.IMPORT and layer.value != latest for layer in layers):
                out[name] = out.get(name, 0) + 1
        return dict(sorted(out.items()))

    def summary(self, sources: Iterator[dict[str, str]] | list[dict[str, str]]) -> dict[str, Any]:
        """What a release records of its label sources: the choice, per label the items per
        source, and the sources' titles."""
        counts: dict[str, dict[str, int]] = {}
        for per_item in sources:
            for name, source in per_item.items():
                counts.setdefault(name, {})
                counts[name][source] = counts[name].get(source, 0) + 1
        used = {s for per_label in counts.values() for s in per_label}
        titles = {s: self.titles.get(s, "no source recorded (set by hand)") for s in sorted(used)}
        return {"chosen": dict(sorted(self.choice.items())), "counts": counts, "titles": titles}


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
