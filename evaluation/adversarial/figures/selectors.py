"""Reads for the adversarial figures: the collections with rounds, and one collection's
items as the records ``frames`` computes from, with the study-link writers' pay from the
payment records (``annotation.crowd.selectors``)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pandas as pd
from django.db.models import Count, Max
from django.http import Http404

from annotation.crowd.selectors import participant_pay, validated_fooling_counts
from annotation.models import (
    AdversarialItem,
    AdversarialRound,
    AdversarialScore,
    AdversarialStatus,
    Participant,
    PaymentDecision,
)
from evaluation.adversarial.figures import frames


def adversarial_collections() -> list[dict[str, Any]]:
    """The collections that have adversarial rounds: name, rounds, items, latest round."""
    rows = (
        AdversarialRound.objects.values("pipeline__collection")
        .annotate(n_rounds=Count("id", distinct=True), n_items=Count("items"), latest=Max("number"))
        .order_by("pipeline__collection")
    )
    return [
        {
            "collection": r["pipeline__collection"],
            "rounds": r["n_rounds"],
            "items": r["n_items"],
            "latest": r["latest"],
        }
        for r in rows
    ]


def collection_rounds(*, collection: str) -> list[AdversarialRound]:
    """The collection's rounds by number (a 404 when it has none)."""
    rounds = list(
        AdversarialRound.objects.filter(pipeline__collection=collection)
        .select_related("pipeline")
        .order_by("number")
    )
    if not rounds:
        raise Http404("no adversarial rounds in this collection")
    return rounds


def figure_records(*, collection: str) -> list[dict[str, Any]]:
    """One record per adversarial item of the collection's rounds (``frames.RECORD_COLUMNS``)."""
    items = (
        AdversarialItem.objects.filter(round__pipeline__collection=collection)
        .select_related("round", "writer")
        .order_by("round__number", "id")
    )
    participants = set(
        Participant.objects.filter(user__in=items.values("writer_id")).values_list("user_id", flat=True)
    )
    return [
        {
            "item": item.pk,
            "round": item.round.number,
            "writer": item.writer.get_username(),
            "study_link": item.writer_id in participants,
            "status": item.status,
            "verdict": item.verdict,
            "fooled": list(item.fooled or []),
            "models": [str(m.get("name")) for m in item.round.models_in_loop or [] if isinstance(m, dict)],
            "tries": item.tries,
            "seconds": item.seconds,
            "validation": item.validation,
        }
        for item in items
    ]


def rescore_records(*, collection: str) -> list[dict[str, Any]]:
    """One record per re-score of a kept item of the collection by a (later) round's model."""
    scores = AdversarialScore.objects.filter(
        item__round__pipeline__collection=collection, item__status=AdversarialStatus.KEPT
    ).values_list("model", "item__round__number", "round__number", "verdict", "item__validation")
    return [
        {
            "model": model,
            "written_in": written,
            "rescored_in": rescored,
            "verdict": verdict,
            "validation": validation,
        }
        for model, written, rescored, verdict, validation in scores.order_by("model", "item_id")
    ]


def writer_pay(*, collection: str) -> dict[str, float]:
    """Per study-link writer of the collection (by account name): what the payment records
    give them: the link's reward when one is recorded and the participant is not rejected,
    plus the payment report's bonus (the curator's and the bonus per validated fooling item)."""
    writers = AdversarialItem.objects.filter(round__pipeline__collection=collection).values("writer_id")
    participants = list(Participant.objects.filter(user__in=writers).select_related("link", "user"))
    fooling = validated_fooling_counts(users={p.user_id for p in participants})
    out: dict[str, float] = {}
    for participant in participants:
        pay = participant_pay(participant, fooling=fooling[participant.user_id])
        total: Decimal = pay["bonus_total"]
        if pay["reward"] is not None and participant.decision != PaymentDecision.REJECT:
            total += pay["reward"]
        out[participant.user.get_username()] = float(total)
    return out


def collection_figures(*, collection: str) -> dict[str, pd.DataFrame]:
    """The collection's figures, one frame per table (``frames.TABLES``)."""
    return frames.all_figures(
        figure_records(collection=collection),
        pay=writer_pay(collection=collection),
        collection=collection,
        rescores=rescore_records(collection=collection),
    )
