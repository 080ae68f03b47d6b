"""Rounds of adversarial writing (issue 27, docs/adversarial.md): a round is one pipeline of
an adversarial kind on a collection, with the models in the loop, numbered per collection.

The models come from the server's registry (``evaluation.lm.registry``), which this layer
may not read: the page that starts a round (``evaluation.adversarial.rounds``) passes them
as ``[{name, sha256}]``, and this service checks their shape, the rule, the share, K and
the slots, refusing bad input with the field named before anything is written."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max, QuerySet
from django.utils.text import slugify

from annotation.errors import PipelineError
from annotation.models import AdversarialRound, Pipeline, ValidationRule
from annotation.pipelines.registry import PIPELINES
from annotation.pipelines.services import MAX_SLOTS, pipeline_start
from core.roles import Actor, signed_in

SHA256 = re.compile(r"^[0-9a-f]{64}$")
#: K of ANLI's rule: two answers (a third on disagreement, set per item).
ANLI_K = 2
DEFAULT_K = 3
MAX_MODELS = 10


def round_kinds() -> list[str]:
    """The pipeline kinds that are rounds of adversarial writing."""
    return [kind for kind, defn in PIPELINES.items() if defn.is_round]


def _clean_models(models_in_loop: Sequence[Mapping[str, Any]] | Any) -> list[dict[str, str]]:
    if not isinstance(models_in_loop, list | tuple) or not models_in_loop:
        raise PipelineError("models: choose at least one model of the registry")
    if len(models_in_loop) > MAX_MODELS:
        raise PipelineError(f"models: at most {MAX_MODELS} models in one round")
    clean: list[dict[str, str]] = []
    for n, entry in enumerate(models_in_loop, start=1):
        if not isinstance(entry, Mapping):
            raise PipelineError(f"models: entry {n} is not a model with a name and a SHA-256")
        name = str(entry.get("name", "") or "").strip()
        sha = str(entry.get("sha256", "") or "").strip().lower()
        if not name or len(name) > 100:
            raise PipelineError(f"models: entry {n} has no name (or one over 100 characters)")
        if not SHA256.match(sha):
            raise PipelineError(f"models: {name} has no SHA-256 (64 hexadecimal digits)")
        if any(m["name"] == name for m in clean):
            raise PipelineError(f"models: {name} is named twice")
        clean.append({"name": name, "sha256": sha})
    return clean


def _clean_k(rule: str, k: Any) -> int:
    if rule == ValidationRule.ANLI:
        if k not in (None, "", ANLI_K, str(ANLI_K)):
            raise PipelineError(
                f"k: ANLI's rule takes {ANLI_K} answers (a third on disagreement); leave K empty"
            )
        return ANLI_K
    if k in (None, ""):
        return DEFAULT_K
    try:
        value = int(k)
    except (TypeError, ValueError):
        raise PipelineError(f"k: {k!r} is not a number") from None
    if not 1 <= value <= 100:
        raise PipelineError(f"k: {value} is not between 1 and 100")
    return value


def adversarial_round_create(
    *,
    curator: Actor,
    kind: str,
    collection: str,
    models_in_loop: Sequence[Mapping[str, Any]],
    method: str,
    slots: int,
    rule: str = ValidationRule.UNANIMOUS,
    share_unfooled: float = 0.0,
    k: int | None = None,
) -> AdversarialRound:
    """Start round N + 1 of ``collection`` (N: its last round, 0 when none): a pipeline of
    ``kind`` whose first stage, writing with ``models_in_loop`` in the loop, opens at once
    with ``slots`` writing slots; its validation takes K answers (``rule`` unanimous,
    default 3) or ANLI's two and a third on disagreement. Refused with the field named,
    nothing written, on bad input."""
    curator = signed_in(curator)
    if kind not in round_kinds():
        raise PipelineError(f"kind: {str(kind)!r} is not one of {', '.join(round_kinds())}")
    collection = (collection or "").strip()
    if not collection:
        raise PipelineError("collection: required")
    if len(collection) > 50:
        raise PipelineError("collection: at most 50 characters")
    if not slugify(collection):
        raise PipelineError(f"collection: {collection!r} needs letters or digits")
    models = _clean_models(models_in_loop)
    method = (method or "").strip()
    if not method or len(method) > 20:
        raise PipelineError("method: required (a scoring method of manage.py evaluate)")
    if rule not in ValidationRule.values:
        raise PipelineError(f"rule: {rule!r} is not one of {', '.join(ValidationRule.values)}")
    try:
        share = float(share_unfooled)
    except (TypeError, ValueError):
        raise PipelineError(f"share_unfooled: {share_unfooled!r} is not a number") from None
    if not 0.0 <= share <= 1.0:
        raise PipelineError(f"share_unfooled: {share} is not between 0 and 1")
    validate_k = _clean_k(rule, k)
    try:
        slots = int(slots)
    except (TypeError, ValueError):
        raise PipelineError(f"slots: {slots!r} is not a number") from None
    if not 1 <= slots <= MAX_SLOTS:
        raise PipelineError(f"slots: {slots} is not between 1 and {MAX_SLOTS}")
    other = Pipeline.objects.filter(collection=collection, kind__in=round_kinds()).exclude(kind=kind).first()
    if other is not None:
        raise PipelineError(
            f"collection: {collection} holds rounds of {PIPELINES[other.kind].title}; "
            "a round of another kind needs another collection"
        )
    try:
        with transaction.atomic():
            last = AdversarialRound.objects.filter(pipeline__collection=collection).aggregate(
                n=Max("number")
            )["n"]
            number = int(last or 0) + 1
            made: list[AdversarialRound] = []

            def with_round(pipeline: Pipeline) -> None:
                made.append(
                    AdversarialRound.objects.create(
                        pipeline=pipeline,
                        number=number,
                        models_in_loop=models,
                        method=method,
                        rule=rule,
                        share_unfooled=share,
                    )
                )

            pipeline_start(
                curator=curator,
                kind=kind,
                collection=collection,
                # unique: two rounds numbered alike at once cannot both be written
                name=slugify(f"{collection}-round-{number}")[:60],
                k={"write": 1, "validate": validate_k},
                slots=slots,
                before_start=with_round,
            )
    except IntegrityError:
        raise PipelineError(
            f"collection: another round of {collection} was started at the same time; start this one again"
        ) from None
    return made[0]


def adversarial_rounds(*, collection: str = "") -> QuerySet[AdversarialRound]:
    """The rounds, by collection and number (of one collection when given)."""
    rounds = AdversarialRound.objects.select_related("pipeline").order_by("pipeline__collection", "number")
    return rounds.filter(pipeline__collection=collection) if collection else rounds
