"""Canonical payloads of the current items, read in a fixed order with bounded memory.

A payload is what a ReleaseItem freezes and what the files are built from; its fields
are the JSONL fields documented in docs/formats.md. What differs per data set (its items,
payloads, labels, files) is its release shape (releases.shapes).
"""

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet

from datasets.models import ImportBatch, Label, LabelSourceKind
from releases.dataset import Dataset
from releases.shapes import SHAPES, Row, shape_for
from releases.shapes.base import CHUNK, bool_or_none, own_collections, switched_parts

__all__ = ["CHUNK", "Row", "switched_parts"]


def own_collection(dataset: str, selection: dict[str, Any]) -> str:
    """The selection's collection when it holds a curator's own items ("" for the public
    sets): a ComVE collection always does; a schema collection when its schemas came from
    an own file."""
    collection = str(selection.get("collection") or "")
    if not collection or Dataset(dataset).reads_as == Dataset.COMVE:
        return collection
    return collection if own_collections().filter(collection=collection).exists() else ""


def item_queryset(dataset: str, selection: dict[str, Any]) -> QuerySet:
    return shape_for(dataset).queryset(dataset, selection)


def _rows(dataset: str, selection: dict[str, Any]) -> Iterator[Row]:
    return shape_for(dataset).rows(dataset, selection)


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
DATASET_LABELS: dict[str, dict[str, str]] = {dataset: shape.labels for dataset, shape in SHAPES.items()}
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
        return {name: bool_or_none(value.get(name))}
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
        values = shape_for(self.dataset).label_rows(self.dataset, self.selection, target)
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
    pairs: set[tuple[str, str]] = set()
    for file_field, checksum_field in shape_for(dataset).source_fields:
        pairs |= set(qs.values_list(file_field, checksum_field).distinct())
    # Every file of the import batches involved (e.g. the Trichelair label files, whose rows
    # update schemas whose provenance names winowhy.json).
    batch_ids = set(qs.exclude(import_batch=None).values_list("import_batch_id", flat=True).distinct())
    for files in ImportBatch.objects.filter(pk__in=batch_ids).values_list("files", flat=True):
        for entry in files or []:
            if isinstance(entry, dict) and entry.get("sha256"):
                pairs.add((str(entry.get("name") or entry.get("path") or ""), str(entry["sha256"])))
    return [{"file": f, "sha256": c} for f, c in sorted(pairs)]
