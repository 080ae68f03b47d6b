"""Campaigns: create one over chosen items (filters, ids, gold items), set its status,
pause an annotator."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import User
from django.db import connection, models, transaction
from django.utils.text import slugify

from annotation.agreement.services import agreement_headline_compute
from annotation.answers import ITEM_KINDS
from annotation.errors import CampaignError
from annotation.models import AdversarialItem, Campaign, CampaignAnnotator, CampaignItem, CampaignStatus, Task
from annotation.task_types import DataItem, task_spec, task_type
from core.roles import Actor, signed_in
from datasets.models import ComVEItem, Explanation, Reason, Schema

ITEM_FILTERS: dict[str, dict[str, str]] = {
    # field name accepted in --filter -> kind of value
    "schemas": {
        "collection": "str",
        "source": "str",
        "answer": "str",
        "external_id": "str",
        "switchable": "bool",
        "associative": "bool",
        "import_batch": "int",
    },
    "reasons": {
        "origin": "str",
        "label": "str",
        "source_label": "str",
        "knowledge_type": "str",
        "schema__collection": "str",
        "schema": "int",
        "import_batch": "int",
    },
    "comve": {
        "dataset": "str",
        "split": "str",
        "collection": "str",
        "has_a": "bool",
        "has_b": "bool",
        "has_c": "bool",
        "needs_rewrite": "bool",
        "import_batch": "int",
    },
    "explanations": {
        "run_id": "int",
        "model_name": "str",
    },
    # items written in an adversarial round (validation)
    "adversarial": {
        "round": "int",
        "status": "str",
        "validation": "str",
    },
}

ITEM_MODELS: dict[
    str, type[Schema] | type[Reason] | type[ComVEItem] | type[Explanation] | type[AdversarialItem]
] = {
    "schemas": Schema,
    "reasons": Reason,
    "comve": ComVEItem,
    "explanations": Explanation,
    "adversarial": AdversarialItem,
}
ITEM_FIELD = {
    "schemas": "schema",
    "reasons": "reason",
    "comve": "comve_item",
    "explanations": "explanation",
    "adversarial": "adversarial",
}
#: Items someone wrote: the field naming who, copied to ``CampaignItem.author`` so that the
#: item is never handed to them (a writer never validates their own item).
ITEM_AUTHOR = {"adversarial": "writer_id"}


def _filter_value(kind: str, field_name: str, raw: Any) -> Any:
    allowed = ITEM_FILTERS[kind]
    if field_name not in allowed:
        raise CampaignError(
            f"filter {field_name!r}: not a filter for {kind}; use one of {', '.join(sorted(allowed))}"
        )
    text = str(raw).strip()
    if text.lower() in ("none", "null"):
        return None
    if allowed[field_name] == "bool":
        if text.lower() in ("1", "true", "yes"):
            return True
        if text.lower() in ("0", "false", "no"):
            return False
        raise CampaignError(f"filter {field_name!r}: {text!r} is not true/false/none")
    if allowed[field_name] == "int":
        try:
            return int(text)
        except ValueError:
            raise CampaignError(f"filter {field_name!r}: {text!r} is not a number") from None
    return text


def _selected(kind: str, filters: dict[str, Any], ids: Sequence[int] | None) -> models.QuerySet:
    qs: models.QuerySet[Any] = ITEM_MODELS[kind].objects.all()
    for name, raw in (filters or {}).items():
        value = _filter_value(kind, name, raw)
        qs = qs.filter(**({f"{name}__isnull": True} if value is None else {name: value}))
    if ids is not None:
        wanted = {int(i) for i in ids}
        found = set(qs.filter(pk__in=wanted).values_list("pk", flat=True))
        missing = sorted(wanted - found)
        if missing:
            raise CampaignError(f"ids: no {kind} with id {', '.join(map(str, missing[:10]))} (after filters)")
        qs = qs.filter(pk__in=wanted)
    return qs.order_by("pk")


def _gold_picked(task: str, qs: models.QuerySet, count: int) -> list[int]:
    """The ids of the first ``count`` items of ``qs`` with a known answer for ``task``."""
    if task_spec(task).writes_text or task_spec(task).writes_comve:
        raise CampaignError(f"gold items: {task_spec(task).title} has no right answer to check")
    kind = task_type(task)
    picked = [obj.pk for obj in qs.iterator(chunk_size=500) if kind.gold_answer(obj)][: count + 1]
    if len(picked) <= count:  # the rest of the items are the work: gold cannot be all of them
        raise CampaignError(
            f"gold items: {count} asked, but only {max(len(picked) - 1, 0)} of the chosen items "
            "have a known answer and leave work besides them"
        )
    return picked[:count]


def gold_answer_for(task: str, obj: DataItem) -> str:
    """The known answer of an item used as gold; CampaignError when it has none."""
    answer = task_type(task).gold_answer(obj)
    if not answer:
        raise CampaignError(f"gold id {obj.pk}: the item has no known answer for {task}")
    return answer


def campaign_create(
    *,
    name: str,
    task: str,
    items: str,
    filters: dict[str, Any] | None = None,
    ids: Sequence[int] | None = None,
    k: int | None = None,
    gold_ids: Sequence[int] | None = None,
    lease_seconds: int = 600,
    gold_rate: float = 0.0,
    gold_count: int = 0,
    instructions: str | None = None,
    slots: int = 0,
    created_by: Actor | None = None,
    imported: bool = False,
) -> Campaign:
    """Create a campaign over the chosen items (a data set, a filter, a list of ids).

    ``items`` is the kind: schemas, reasons, comve, or slots (empty writing slots for
    ComVE writing; ``slots`` says how many). Gold items: ``gold_ids``, or ``gold_count``
    of the chosen items that have a known answer (the first ones by id)."""
    created_by = signed_in(created_by) if created_by is not None else None
    if task not in Task.values:
        raise CampaignError(f"task: {task!r} is not one of {', '.join(Task.values)}")
    spec = task_spec(task)
    if items not in ITEM_KINDS:
        raise CampaignError(f"items: {items!r} is not one of {', '.join(ITEM_KINDS)}")
    if items not in spec.item_kinds:
        raise CampaignError(f"items: {spec.title} works on {' or '.join(spec.item_kinds)}, not {items}")
    if not name or slugify(name) != name:
        raise CampaignError(f"name: {name!r} must be a slug (letters, digits, - and _)")
    if Campaign.objects.filter(name=name).exists():
        raise CampaignError(f"name: a campaign called {name!r} exists already")
    k = spec.default_k if k is None else int(k)
    if not 1 <= k <= 100:
        raise CampaignError(f"k: {k} is not between 1 and 100")
    if not 30 <= int(lease_seconds) <= 7 * 86400:
        raise CampaignError(f"lease: {lease_seconds} seconds is not between 30 and 604800")
    if not 0.0 <= float(gold_rate) <= 1.0:
        raise CampaignError(f"gold_rate: {gold_rate} is not between 0 and 1")
    if gold_ids and (spec.writes_text or spec.writes_comve):
        raise CampaignError(f"gold ids: {spec.title} has no right answer to check")

    selection: dict[str, Any] = {"items": items, "filters": dict(filters or {})}
    if ids is not None:
        selection["ids"] = [int(i) for i in ids]
    with transaction.atomic():
        campaign = Campaign.objects.create(
            name=name,
            task=task,
            judgments_per_item=k,
            lease_seconds=int(lease_seconds),
            gold_rate=float(gold_rate),
            instructions=spec.instructions
            if instructions is None or not instructions.strip()
            else instructions,
            selection=selection,
            created_by=created_by,
            imported=imported,
        )
        rows: list[CampaignItem] = []
        if items == "slots":
            if filters or ids:
                raise CampaignError("slots: writing slots take no filter or ids")
            if not 1 <= int(slots) <= 10000:
                raise CampaignError(f"slots: {slots} is not between 1 and 10000")
            selection["slots"] = int(slots)
            rows = [CampaignItem(campaign=campaign) for _ in range(int(slots))]
        else:
            qs = _selected(items, filters or {}, ids)
            gold_set = {int(g) for g in gold_ids or ()}
            qs = task_type(task).selectable(qs)
            if gold_count and not gold_set:
                gold_set = set(_gold_picked(task, qs, int(gold_count)))
            main_ids = [pk for pk in qs.values_list("pk", flat=True) if pk not in gold_set]
            if not main_ids:
                raise CampaignError(f"items: the selection of {items} is empty")
            fk = ITEM_FIELD[items]
            authors: dict[int, int] = (
                dict(qs.filter(pk__in=main_ids).values_list("pk", ITEM_AUTHOR[items]))
                if items in ITEM_AUTHOR
                else {}
            )
            rows = [
                CampaignItem(campaign=campaign, author_id=authors.get(pk), **{f"{fk}_id": pk})
                for pk in main_ids
            ]
            if gold_set:
                golds = ITEM_MODELS[items].objects.filter(pk__in=gold_set)
                found = {g.pk: g for g in golds}
                missing = sorted(gold_set - set(found))
                if missing:
                    raise CampaignError(f"gold ids: no {items} with id {', '.join(map(str, missing[:10]))}")
                for pk in sorted(found):
                    rows.append(
                        CampaignItem(
                            campaign=campaign,
                            is_gold=True,
                            gold_answer=gold_answer_for(task, found[pk]),
                            **{f"{fk}_id": pk},
                        )
                    )
                selection["gold_ids"] = sorted(found)
        CampaignItem.objects.bulk_create(rows, batch_size=1000)
        campaign.selection = selection
        campaign.save(update_fields=["selection"])
        if connection.vendor == "postgresql" and len(rows) >= 200:
            transaction.on_commit(_analyze_campaign_items)
    return campaign


def _analyze_campaign_items() -> None:
    """Fresh planner statistics after a bulk insert. Until autovacuum's next ANALYZE the
    planner believes the new campaign has almost no items and sorts all of them on every
    assignment_next instead of walking the campaignitem_next index (100 ms instead of 1 ms
    at 4,000 items)."""
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {connection.ops.quote_name(CampaignItem._meta.db_table)}")


def campaign_status_set(*, campaign: Campaign, status: str) -> Campaign:
    """Open, pause or close a campaign. Closing it computes its agreement (the headline the
    dashboard and the pipeline page show), since its judgments no longer change."""
    if status not in CampaignStatus.values:
        raise CampaignError(f"status: {status!r} is not one of {', '.join(CampaignStatus.values)}")
    Campaign.objects.filter(pk=campaign.pk).update(status=status)
    campaign.status = status
    if status == CampaignStatus.CLOSED and not task_spec(campaign.task).free_text:
        agreement_headline_compute(campaign=campaign)
    return campaign


def campaign_annotator_pause(
    *, campaign: Campaign, annotator: User, paused: bool = True
) -> CampaignAnnotator:
    """A curator pauses (or lets go on) an annotator: a paused annotator gets no items."""
    with transaction.atomic():
        member, _ = CampaignAnnotator.objects.get_or_create(campaign=campaign, annotator=annotator)
        if member.paused != paused:
            member.paused = paused
            member.save(update_fields=["paused"])
    return member
