"""Reads of the datasets app: item lists narrowed by what the user may see, and the summary."""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q, QuerySet

from core.roles import Actor
from datasets.models import Answer, ComVEItem, KnowledgeType, Reason, ReasonLabel, ReasonOrigin, Schema
from datasets.permissions import user_can_browse_items


def _check(user: Actor) -> None:
    if not user_can_browse_items(user=user):
        raise PermissionDenied("Only curators and admins may browse items in bulk.")


def schema_list(*, user: Actor, filters: dict[str, Any] | None = None) -> QuerySet[Schema]:
    """Schemas with their twin's external id. Filters: collection, switchable, associative,
    answer, knowledge_type."""
    _check(user)
    filters = filters or {}
    qs = Schema.objects.select_related("twin").order_by("collection", "id")
    for name in ("collection", "switchable", "associative", "answer"):
        if filters.get(name) is not None:
            qs = qs.filter(**{name: filters[name]})
    if filters.get("knowledge_type"):
        # JSON containment is not portable to SQLite: match the quoted name in the list.
        qs = qs.filter(knowledge_types__icontains=f'"{filters["knowledge_type"]}"')
    return qs


def reason_list(*, user: Actor, filters: dict[str, Any] | None = None) -> QuerySet[Reason]:
    """Reasons with their schema. Filters: collection, schema, origin, label."""
    _check(user)
    filters = filters or {}
    qs = Reason.objects.select_related("schema").order_by("schema_id", "position")
    if filters.get("collection") is not None:
        qs = qs.filter(schema__collection=filters["collection"])
    for name in ("schema", "origin", "label"):
        if filters.get(name) is not None:
            qs = qs.filter(**{name: filters[name]})
    return qs


def comve_item_list(*, user: Actor, filters: dict[str, Any] | None = None) -> QuerySet[ComVEItem]:
    """ComVE and Sen-Making items. Filters: dataset, split, subtask (a, b, c)."""
    _check(user)
    filters = filters or {}
    qs = ComVEItem.objects.order_by("dataset", "split", "id")
    for name in ("dataset", "split"):
        if filters.get(name) is not None:
            qs = qs.filter(**{name: filters[name]})
    if filters.get("subtask"):
        qs = qs.filter(**{f"has_{filters['subtask']}": True})
    return qs


def dataset_summary() -> dict[str, Any]:
    """The counts a curator wants at a glance (``manage.py dataset_summary``)."""
    schemas: dict[str, Any] = {}
    rows = (
        Schema.objects.values("collection")
        .annotate(
            n_total=Count("id"),
            n_answer_a=Count("id", filter=Q(answer=Answer.A)),
            n_answer_b=Count("id", filter=Q(answer=Answer.B)),
            n_with_twin=Count("id", filter=Q(twin__isnull=False)),
            n_switchable=Count("id", filter=Q(switchable=True)),
            n_not_switchable=Count("id", filter=Q(switchable=False)),
            n_associative=Count("id", filter=Q(associative=True)),
            n_not_associative=Count("id", filter=Q(associative=False)),
        )
        .order_by("collection")
    )
    for row in rows:
        collection = row.pop("collection")
        schemas[collection] = {
            "schemas": row["n_total"],
            "answers": {"A": row["n_answer_a"], "B": row["n_answer_b"]},
            "twins": {"schemas_with_twin": row["n_with_twin"], "pairs": row["n_with_twin"] // 2},
            "switchable": {"yes": row["n_switchable"], "no": row["n_not_switchable"]},
            "associative": {"yes": row["n_associative"], "no": row["n_not_associative"]},
            "knowledge_types": {k.value: 0 for k in KnowledgeType},
            "reasons": {"total": 0, "by_origin": {}, "by_label": {}},
        }
    kinds: Counter[tuple[str, str]] = Counter()
    for collection, types in Schema.objects.values_list("collection", "knowledge_types"):
        for kind in types or []:
            kinds[(collection, kind)] += 1
    for (collection, kind), n in kinds.items():
        schemas[collection]["knowledge_types"][kind] = n
    reason_rows = (
        Reason.objects.values("schema__collection", "origin", "label").annotate(n=Count("id")).order_by()
    )
    for row in reason_rows:
        entry = schemas[row["schema__collection"]]["reasons"]
        entry["total"] += row["n"]
        entry["by_origin"][row["origin"]] = entry["by_origin"].get(row["origin"], 0) + row["n"]
        label = row["label"] or "unlabelled"
        entry["by_label"][label] = entry["by_label"].get(label, 0) + row["n"]
    for entry in schemas.values():
        reasons = entry["reasons"]
        reasons["by_origin"] = {o.value: reasons["by_origin"].get(o.value, 0) for o in ReasonOrigin}
        reasons["by_label"] = {lab.value: reasons["by_label"].get(lab.value, 0) for lab in ReasonLabel} | {
            k: v for k, v in reasons["by_label"].items() if k not in ReasonLabel.values
        }
    comve: dict[str, dict[str, Any]] = {}
    for row in (
        ComVEItem.objects.values("dataset", "split")
        .annotate(
            items=Count("id"),
            a=Count("id", filter=Q(has_a=True)),
            b=Count("id", filter=Q(has_b=True)),
            c=Count("id", filter=Q(has_c=True)),
            needs_rewrite=Count("id", filter=Q(needs_rewrite=True)),
        )
        .order_by("dataset", "split")
    ):
        comve.setdefault(row["dataset"], {})[row["split"]] = {
            "items": row["items"],
            "subtask_a": row["a"],
            "subtask_b": row["b"],
            "subtask_c": row["c"],
            "needs_rewrite": row["needs_rewrite"],
        }
    return {"schemas": schemas, "comve": comve}
