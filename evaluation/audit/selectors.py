"""Reads of audits, narrowed to what the user may see (an audit out of reach is a 404)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import Http404

from core.roles import Actor, user_is_curator, user_is_researcher
from datasets.models import ComVEItem, Schema
from evaluation.audit.tables import (
    aflite_frame,
    associativity_frame,
    baselines_frame,
    items_frame,
    regions_frame,
    subsets_frame,
)
from evaluation.models import Audit
from releases.models import Release, ReleaseStatus

#: The tables an audit page shows and downloads: name -> (title, frame of the audit)
AUDIT_TABLES: dict[str, Any] = {
    "baselines": ("Partial-input baselines", lambda a: baselines_frame(a.results)),
    "aflite": ("AfLite per iteration", lambda a: aflite_frame(a.results)),
    "regions": ("Cartography regions", lambda a: regions_frame(a.results)),
    "associativity": (
        "Automatic scores against Trichelair's associative schemas",
        lambda a: associativity_frame(a.results),
    ),
    "subsets": (
        "Accuracy on Trichelair's associative and non-associative schemas",
        lambda a: subsets_frame(a.results),
    ),
    "items": ("Per item", lambda a: items_frame(a.per_item)),
}


def audit_list(*, user: Actor) -> QuerySet[Audit]:
    audits = Audit.objects.select_related("release", "filtered_release", "created_by")
    if user_is_curator(user):
        return audits
    if user_is_researcher(user):
        return audits.filter(release__status=ReleaseStatus.PUBLISHED)
    return audits.none()


def audit_get(*, user: Actor, audit_id: int) -> Audit:
    audit = audit_list(user=user).filter(pk=audit_id).first()
    if audit is None:
        raise Http404("no such audit")
    return audit


def audit_sources() -> list[tuple[str, str]]:
    """What a curator can audit: (value, label) of every release and every collection."""
    out: list[tuple[str, str]] = []
    for name, version, dataset in Release.objects.order_by(
        "name", "-version_major", "-version_minor", "-version_patch"
    ).values_list("name", "version", "dataset"):
        out.append((f"release:{name}@{version}", f"release {name}@{version} ({dataset})"))
    for collection in sorted(set(Schema.objects.values_list("collection", flat=True))):
        for dataset in ("wsc", "winowhy"):
            out.append((f"collection:{dataset}/{collection}", f"collection {collection} ({dataset})"))
    comve = ComVEItem.objects.values_list("dataset", "collection", "split").distinct()
    for dataset, collection, split in sorted(set(comve)):
        if collection:
            out.append(
                (
                    f"collection:{dataset}/{collection}/{split}",
                    f"collection {collection} ({dataset}, {split})",
                )
            )
    return out
