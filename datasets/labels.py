"""Labels kept per source (issue 13): every label of an item, as each source gave it.

A *label* is a named group of an item's fields (``LABEL_FIELDS``): a schema's
``switchable``, ``associative`` and ``knowledge_types`` (its question's major types), a
reason's ``plausibility`` (score and label together) and ``knowledge_type``, a ComVE item's
``needs_rewrite``. A *source* is an import batch or a campaign; each keeps its own *layer*
(a :class:`~datasets.models.Label` row per item and label), and no source ever writes over
another's layer.

The item's fields are the *current view*: the imported label where an import gave one,
else the label of the campaign that changed it last. So a campaign over imported items adds
its layer beside the import's and leaves what the import said in place; a release chooses
per label which source it takes (``releases.snapshot``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Model
from django.utils import timezone

from datasets.models import ComVEItem, ImportBatch, Label, LabelSource, LabelSourceKind, Reason, Schema

#: Each model's labels and the fields each label groups.
LABEL_FIELDS: dict[type[Model], dict[str, tuple[str, ...]]] = {
    Schema: {
        "switchable": ("switchable",),
        "associative": ("associative",),
        "knowledge_types": ("knowledge_types",),
    },
    Reason: {"plausibility": ("plausibility", "label"), "knowledge_type": ("knowledge_type",)},
    ComVEItem: {"needs_rewrite": ("needs_rewrite",)},
}
#: The Label field that points at an item of each model.
TARGET: dict[type[Model], str] = {Schema: "schema", Reason: "reason", ComVEItem: "comve_item"}
#: Every label name, in the order pages list them.
LABEL_NAMES: tuple[str, ...] = tuple(name for labels in LABEL_FIELDS.values() for name in labels)
#: The field of a label name -> the label name, per model.
_FIELD_LABEL: dict[type[Model], dict[str, str]] = {
    model: {f: name for name, fields in labels.items() for f in fields}
    for model, labels in LABEL_FIELDS.items()
}
CHUNK = 900


def model_of_label(name: str) -> type[Model]:
    """The model whose items carry label ``name``."""
    for model, labels in LABEL_FIELDS.items():
        if name in labels:
            return model
    raise KeyError(name)


def label_value(obj: Model, name: str) -> dict[str, Any]:
    """The fields of label ``name`` on ``obj`` as a layer stores them."""
    return {f: getattr(obj, f) for f in LABEL_FIELDS[type(obj)][name]}


def is_empty(value: dict[str, Any]) -> bool:
    """No field of the label has a value (an item an import gave no such label)."""
    return all(v is None or v == "" or v == [] for v in value.values())


def import_source(batch: ImportBatch) -> LabelSource:
    source, _ = LabelSource.objects.get_or_create(
        import_batch=batch,
        defaults={
            "kind": LabelSourceKind.IMPORT,
            "name": f"import:{batch.pk}",
            "title": f"{batch.get_format_display()}, import #{batch.pk}",
        },
    )
    return source


def campaign_source(*, campaign_id: int, campaign_name: str) -> LabelSource:
    source, _ = LabelSource.objects.get_or_create(
        campaign_id=campaign_id,
        defaults={
            "kind": LabelSourceKind.CAMPAIGN,
            "name": f"campaign:{campaign_name}",
            "title": f"campaign {campaign_name}",
        },
    )
    return source


def _chunks(ids: Sequence[int]) -> Iterable[Sequence[int]]:
    for start in range(0, len(ids), CHUNK):
        yield ids[start : start + CHUNK]


def layers_of(
    model: type[Model], ids: Iterable[int], names: Iterable[str], *, kind: str | None = None
) -> list[Label]:
    """Every layer of the labels ``names`` of the items ``ids``, oldest change first."""
    target = TARGET[model]
    ids = sorted(set(ids))
    found: list[Label] = []
    for part in _chunks(ids):
        qs = Label.objects.filter(**{f"{target}_id__in": part}, name__in=list(names)).select_related("source")
        if kind is not None:
            qs = qs.filter(source__kind=kind)
        found.extend(qs)
    found.sort(key=lambda label: (label.updated_at, label.pk))
    return found


def item_id(label: Label) -> int:
    return int(label.schema_id or label.reason_id or label.comve_item_id or 0)


def latest_layers(
    model: type[Model], ids: Iterable[int], names: Iterable[str], *, kind: str | None = None
) -> dict[tuple[int, str], Label]:
    """The latest layer per (item, label) (of sources of ``kind`` if given)."""
    return {(item_id(label), label.name): label for label in layers_of(model, ids, names, kind=kind)}


def import_labels_record(batch: ImportBatch, objs: Sequence[Model], names: Sequence[str]) -> int:
    """The labels ``names`` an import wrote on ``objs``, as the batch's layer: recorded
    where they differ from the item's latest imported layer (so importing the same file
    again adds nothing). Returns the number of layers written."""
    if not objs or not names:
        return 0
    model = type(objs[0])
    target = TARGET[model]
    latest = latest_layers(model, [o.pk for o in objs], names, kind=LabelSourceKind.IMPORT)
    source: LabelSource | None = None
    new: list[Label] = []
    seen: set[tuple[int, str]] = set()
    for obj in objs:
        for name in names:
            if (obj.pk, name) in seen:  # the same item twice in one file: its last row counts
                continue
            seen.add((obj.pk, name))
            value = label_value(obj, name)
            before = latest.get((obj.pk, name))
            if before is None and is_empty(value):
                continue
            if before is not None and before.value == value:
                continue
            source = source or import_source(batch)
            new.append(Label(source=source, name=name, value=value, **{target: obj}))
    Label.objects.bulk_create(new, batch_size=1000)
    return len(new)


@dataclass
class LayerCounts:
    """What a campaign's aggregation did to labels: layers written (new, or a new value),
    and of those, how many items have an imported label there, which stays in place."""

    changed: int = 0
    over_import: int = 0
    per_label: dict[str, int] = field(default_factory=dict)


class CampaignLayers:
    """A campaign's layer, written by its aggregation: :meth:`put` says whether a label
    changes (new, or another value); :meth:`write` stores the layers and returns the
    field values the items take (only where no import gave the label)."""

    def __init__(self, *, campaign_id: int, campaign_name: str) -> None:
        self.campaign_id = campaign_id
        self.campaign_name = campaign_name
        self._source: LabelSource | None = None
        self._existing: dict[type[Model], dict[tuple[int, str], Label]] = {}
        self._pending: dict[tuple[type[Model], int, str], tuple[Model, dict[str, Any]]] = {}
        self.counts = LayerCounts()

    @property
    def source(self) -> LabelSource:
        if self._source is None:
            self._source = campaign_source(campaign_id=self.campaign_id, campaign_name=self.campaign_name)
        return self._source

    def _layers(self, model: type[Model]) -> dict[tuple[int, str], Label]:
        if model not in self._existing:
            target = TARGET[model]
            rows = Label.objects.filter(source=self.source, **{f"{target}__isnull": False})
            self._existing[model] = {(item_id(label), label.name): label for label in rows}
        return self._existing[model]

    def split(self, obj: Model, values: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
        """``values`` for ``obj`` as (labels {name: {field: value}}, other fields)."""
        of_field = _FIELD_LABEL.get(type(obj), {})
        labels: dict[str, dict[str, Any]] = {}
        plain: dict[str, Any] = {}
        for name, value in values.items():
            if name in of_field:
                labels.setdefault(of_field[name], {})[name] = value
            else:
                plain[name] = value
        for label, part in labels.items():  # a label is written whole
            for f in LABEL_FIELDS[type(obj)][label]:
                part.setdefault(f, getattr(obj, f))
        return labels, plain

    def put(self, obj: Model, name: str, value: dict[str, Any]) -> bool:
        """The campaign's label ``name`` of ``obj`` is ``value``; True when that changes its layer."""
        model = type(obj)
        before = self._layers(model).get((obj.pk, name))
        changed = before is None or before.value != _json(value)
        key = (model, obj.pk, name)
        if changed:
            self._pending[key] = (obj, value)
        else:
            self._pending.pop(key, None)
        return changed

    def write(self) -> list[tuple[Model, dict[str, Any]]]:
        """Store the changed layers; the field values to write on items no import labelled."""
        if not self._pending:
            return []
        by_model: dict[type[Model], list[tuple[Model, str, dict[str, Any]]]] = {}
        for (model, _pk, name), (obj, value) in self._pending.items():
            by_model.setdefault(model, []).append((obj, name, value))
        fields: list[tuple[Model, dict[str, Any]]] = []
        for model, entries in by_model.items():
            target = TARGET[model]
            imported = set(
                latest_layers(
                    model,
                    [o.pk for o, _, _ in entries],
                    {n for _, n, _ in entries},
                    kind=LabelSourceKind.IMPORT,
                )
            )
            existing = self._layers(model)
            new: list[Label] = []
            changed: list[Label] = []
            for obj, name, value in entries:
                self.counts.changed += 1
                self.counts.per_label[name] = self.counts.per_label.get(name, 0) + 1
                layer = existing.get((obj.pk, name))
                if layer is None:
                    layer = Label(source=self.source, name=name, value=_json(value), **{target: obj})
                    new.append(layer)
                    existing[(obj.pk, name)] = layer
                else:
                    layer.value = _json(value)
                    changed.append(layer)
                if (obj.pk, name) in imported:
                    self.counts.over_import += 1
                else:
                    fields.append((obj, value))
            Label.objects.bulk_create(new, batch_size=1000)
            now = timezone.now()
            for layer in changed:  # updated_at by hand: bulk_update skips auto_now
                layer.updated_at = now
            Label.objects.bulk_update(changed, ["value", "updated_at"], batch_size=1000)
        self._pending.clear()
        return fields


def _json(value: dict[str, Any]) -> dict[str, Any]:
    """A value as JSON gives it back (lists stay lists, sorted keys do not matter)."""
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in value.items()}


def label_layers_describe(model: type[Model], obj_id: int) -> list[dict[str, Any]]:
    """Every layer of one item, for the admin and the API: label, source, value, time."""
    target = TARGET[model]
    return [
        {
            "label": label.name,
            "source": label.source.name,
            "source_title": label.source.title,
            "value": label.value,
            "at": label.updated_at.isoformat(),
        }
        for label in Label.objects.filter(**{f"{target}_id": obj_id})
        .select_related("source")
        .order_by("name", "updated_at", "id")
    ]
