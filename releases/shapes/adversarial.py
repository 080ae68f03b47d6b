"""What a release of an adversarial collection adds (issue 27, docs/adversarial.md).

An item written with models in the loop (an ``AdversarialItem`` row: its twin pair of
schemas, or its ComVE item) carries in its payload its ``round``, the models it fooled
(``models_fooled``), its ``verdict``, the validation ``votes``, its ``tries`` and its
``validation``; items of the collection that are not such rows carry none of these (their
payloads are as before). The release's card states the protocol (``protocol``).

The adversarial option of a release (``selection["adversarial"] = {"seed", "dev",
"test"}``) builds the splits as ANLI did: dev and test only from validated fooling items
(``test`` and ``dev`` of them, drawn with the seed), train from every other validated item;
only validated items are in such a release (retracted items made no rows; unvalidated,
rejected or flagged ones are left out), each with its ``adversarial_split``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from django.db.models import QuerySet

from annotation.models import (
    AdversarialItem,
    AdversarialRound,
    AdversarialStatus,
    Judgment,
    PipelineKind,
    ValidationRule,
    ValidationStatus,
    Verdict,
)
from releases.errors import ReleaseValidationError

FOOLING = (Verdict.BOTH, Verdict.ONE)
VOTE_KEYS = ("correct", "incorrect", "flagged")
SPLITS = ("train", "dev", "test")


def _kind(comve: bool) -> str:
    return PipelineKind.ADVERSARIAL_COMVE if comve else PipelineKind.ADVERSARIAL_WINOGRAD


def kept_items(collection: str, *, comve: bool) -> QuerySet[AdversarialItem]:
    """The kept items of the collection's rounds of that kind, with the rows they made."""
    items = AdversarialItem.objects.filter(
        round__pipeline__collection=collection,
        round__pipeline__kind=_kind(comve),
        status=AdversarialStatus.KEPT,
    )
    return items.exclude(comve_item=None) if comve else items.exclude(schema=None)


def has_rounds(collection: str, *, comve: bool) -> bool:
    return (
        bool(collection)
        and AdversarialRound.objects.filter(
            pipeline__collection=collection, pipeline__kind=_kind(comve)
        ).exists()
    )


def anli_splits(items: Sequence[tuple[int, bool]], *, seed: int, dev: int, test: int) -> dict[int, str]:
    """(item id, fooling) of validated items -> split: ``test`` then ``dev`` items drawn
    with ``seed`` from the fooling ones (taken in id order, then shuffled), the rest train."""
    fooling = sorted(pk for pk, fools in items if fools)
    random.Random(seed).shuffle(fooling)
    out = dict.fromkeys((pk for pk, _ in items), "train")
    out.update(dict.fromkeys(fooling[:test], "test"))
    out.update(dict.fromkeys(fooling[test : test + dev], "dev"))
    return out


def option_check(*, collection: str, comve: bool, option: dict[str, Any]) -> dict[str, int]:
    """The adversarial option, checked: {seed, dev, test} (ReleaseValidationError naming
    the field otherwise)."""
    if not has_rounds(collection, comve=comve):
        raise ReleaseValidationError(
            f"the adversarial option needs a collection written in adversarial rounds "
            f"({'ComVE' if comve else 'Winograd'}); {collection or 'no collection'!r} has none",
            field="adversarial",
        )
    checked: dict[str, int] = {}
    for name in ("seed", "dev", "test"):
        value = option.get(name, 0)
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise ReleaseValidationError(
                f"{name}: {value!r} is not a whole number", field=f"adversarial_{name}"
            ) from None
        if number < 0 or number > 1_000_000:
            raise ReleaseValidationError(f"{name}: between 0 and 1000000", field=f"adversarial_{name}")
        checked[name] = number
    fooling = (
        kept_items(collection, comve=comve)
        .filter(validation=ValidationStatus.VALIDATED, verdict__in=FOOLING)
        .count()
    )
    if checked["dev"] + checked["test"] > fooling:
        raise ReleaseValidationError(
            f"dev {checked['dev']} + test {checked['test']} items asked, but the collection has "
            f"{fooling} validated fooling items (dev and test come only from them)",
            field="adversarial_test",
        )
    return checked


def row_fields(collection: str, selection: dict[str, Any], *, comve: bool) -> dict[int, dict[str, Any]]:
    """Per row id (schema or ComVE item) of an adversarial item of the collection: the
    fields its payload adds. With the adversarial option only validated items, each with
    its split."""
    if not collection:
        return {}
    option = selection.get("adversarial") or None
    items = kept_items(collection, comve=comve).select_related("round").order_by("id")
    if option:
        items = items.filter(validation=ValidationStatus.VALIDATED)
    rows = list(items)
    splits: dict[int, str] = {}
    if option:
        splits = anli_splits(
            [(item.pk, item.verdict in FOOLING) for item in rows],
            seed=int(option.get("seed", 0)),
            dev=int(option.get("dev", 0)),
            test=int(option.get("test", 0)),
        )
    out: dict[int, dict[str, Any]] = {}
    for item in rows:
        votes = item.votes or {}
        fields: dict[str, Any] = {
            "round": item.round.number,
            "models_fooled": sorted(str(m) for m in item.fooled or []),
            "verdict": item.verdict,
            "votes": {key: int(votes.get(key) or 0) for key in VOTE_KEYS},
            "tries": item.tries,
            "validation": item.validation,
        }
        if option:
            fields["adversarial_split"] = splits[item.pk]
        targets = (item.comve_item_id,) if comve else (item.schema_id, item.twin_id)
        for target in targets:
            if target is not None:
                out[target] = fields
    return out


def copied(fields: dict[str, Any] | None) -> dict[str, Any]:
    """A payload's own copy of an item's fields (the two twins do not share lists)."""
    if not fields:
        return {}
    return {
        k: (dict(v) if isinstance(v, dict) else list(v) if isinstance(v, list) else v)
        for k, v in fields.items()
    }


def protocol(collection: str, *, comve: bool) -> dict[str, Any] | None:
    """What the card states of the collection's rounds (None without rounds): per round its
    models by name and SHA-256, the scoring method, the validation rule in words, the share
    of non-fooling items sent to validation, the validators and the items kept and validated."""
    if not has_rounds(collection, comve=comve):
        return None
    rounds = AdversarialRound.objects.filter(
        pipeline__collection=collection, pipeline__kind=_kind(comve)
    ).order_by("number")
    out = []
    for round_ in rounds:
        kept = kept_items(collection, comve=comve).filter(round=round_)
        validators = (
            Judgment.objects.filter(campaign_item__adversarial__round=round_)
            .values("annotator_id")
            .distinct()
            .count()
        )
        out.append(
            {
                "number": round_.number,
                "models": [
                    {"name": str(m.get("name", "")), "sha256": str(m.get("sha256", ""))}
                    for m in round_.models_in_loop or []
                    if isinstance(m, dict)
                ],
                "method": round_.method,
                "rule": round_.rule,
                "rule_text": str(ValidationRule(round_.rule).label)
                if round_.rule in ValidationRule.values
                else round_.rule,
                "share_unfooled": round_.share_unfooled,
                "validators": validators,
                "kept": kept.count(),
                "fooling": kept.filter(verdict__in=FOOLING).count(),
                "validated": kept.filter(validation=ValidationStatus.VALIDATED).count(),
            }
        )
    return {"kind": "comve" if comve else "winograd", "rounds": out}


def frozen_facts(selection: dict[str, Any], *, comve: bool, sizes: dict[str, int]) -> dict[str, Any]:
    """A new release's selection with what its card states of an adversarial collection,
    frozen: the rounds' protocol and, with the adversarial option, the rows per split."""
    stated = protocol(str(selection.get("collection") or ""), comve=comve)
    if stated is None:
        return selection
    out = {**selection, "adversarial_protocol": stated}
    if selection.get("adversarial"):
        out["adversarial"] = {
            **selection["adversarial"],
            "sizes": {split: sizes.get(split, 0) for split in SPLITS},
        }
    return out
