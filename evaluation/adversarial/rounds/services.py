"""A round started with registry models: their names checked against the server's registry,
their kind against the method, their SHA-256 computed as ``manage.py evaluate`` records it;
then the annotation layer's service writes the round (and refuses its own bad input)."""

from __future__ import annotations

from collections.abc import Sequence

from annotation.errors import PipelineError
from annotation.models import AdversarialRound, PipelineKind, ValidationRule
from annotation.pipelines.rounds import adversarial_round_create
from core.roles import Actor
from evaluation import selectors
from evaluation.lm.methods import MODEL_METHODS, TEXT_METHODS, Method
from evaluation.lm.modeling import model_sha256

#: What each kind of round scores with: Winograd twins every model method (partial by
#: default); ComVE pairs the papers' perplexity rule (a whole-text method).
METHODS = {
    PipelineKind.ADVERSARIAL_WINOGRAD: MODEL_METHODS,
    PipelineKind.ADVERSARIAL_COMVE: TEXT_METHODS,
}
DEFAULT_METHOD = {
    PipelineKind.ADVERSARIAL_WINOGRAD: Method.PARTIAL,
    PipelineKind.ADVERSARIAL_COMVE: Method.FULL,
}


def round_start(
    *,
    curator: Actor,
    kind: str,
    collection: str,
    model_names: Sequence[str],
    method: str,
    slots: int,
    rule: str = ValidationRule.UNANIMOUS,
    share_unfooled: float = 0.0,
    k: int | None = None,
) -> AdversarialRound:
    """Start the next round of ``collection`` with the registry's models ``model_names``
    (PipelineError naming the field on bad input; nothing written)."""
    if kind not in METHODS:
        raise PipelineError(f"kind: {kind!r} is not one of {', '.join(METHODS)}")
    allowed = METHODS[PipelineKind(kind)]
    try:
        chosen = Method(method or DEFAULT_METHOD[PipelineKind(kind)])
    except ValueError:
        raise PipelineError(
            f"method: {method!r} is not one of {', '.join(m.value for m in allowed)}"
        ) from None
    if chosen not in allowed:
        raise PipelineError(
            f"method: {chosen.value} does not score this kind of item; one of {', '.join(allowed)}"
        )
    if not model_names:
        raise PipelineError("models: choose at least one model of the registry")
    registry = {m.name: m for m in selectors.model_list()}
    models = []
    for name in model_names:
        entry = registry.get(name)
        if entry is None:
            raise PipelineError(f"models: {name!r} is not a model of this server's registry")
        if entry.kind != chosen.model_kind:
            raise PipelineError(
                f"models: {name} is a {entry.kind_label}; the method {chosen.value} scores with a "
                f"{chosen.model_kind} LM"
            )
        models.append({"name": entry.name, "sha256": model_sha256(entry.path)})
    return adversarial_round_create(
        curator=curator,
        kind=kind,
        collection=collection,
        models_in_loop=models,
        method=chosen.value,
        slots=slots,
        rule=rule,
        share_unfooled=share_unfooled,
        k=k,
    )
