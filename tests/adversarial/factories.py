"""A round of an adversarial pipeline built directly from its rows (the round-creation
service is the validation side's), a writer's slot, and a twin pair to write."""

from __future__ import annotations

from typing import Any

from annotation.models import (
    AdversarialRound,
    Pipeline,
    PipelineKind,
    PipelineStage,
    StageStatus,
    Task,
)
from annotation.services import assignment_next, campaign_create

WRITING: dict[str, str] = {
    PipelineKind.ADVERSARIAL_WINOGRAD: Task.ADVERSARIAL_WINOGRAD,
    PipelineKind.ADVERSARIAL_COMVE: Task.ADVERSARIAL_COMVE,
}

TWINS: dict[str, str] = {
    "sentence": "The trophy doesn't fit into the suitcase because [it] is too large.",
    "twin": "The trophy doesn't fit into the suitcase because [it] is too small.",
    "candidate_a": "the trophy",
    "candidate_b": "the suitcase",
    "answer": "A",
    "twin_answer": "B",
}
PAIR: dict[str, str] = {
    "statement_0": "He put a turkey into the fridge.",
    "statement_1": "He put an elephant into the fridge.",
    "false_index": "1",
}


def adversarial_round(
    *,
    kind: str = PipelineKind.ADVERSARIAL_WINOGRAD,
    collection: str = "adv",
    models: tuple[str, ...] = ("tiny-llama",),
    method: str = "partial",
    slots: int = 3,
    number: int = 1,
) -> AdversarialRound:
    """A round whose writing stage is open: pipeline, its write stage's campaign of slots, the round."""
    name = f"{collection}-{kind.replace('_', '-')}-r{number}"
    pipeline = Pipeline.objects.create(name=name, kind=kind, collection=collection, slots=slots)
    campaign = campaign_create(name=f"{name}-write", task=WRITING[kind], items="slots", slots=slots, k=1)
    campaign.selection = {**campaign.selection, "collection": collection, "pipeline": pipeline.name}
    campaign.save(update_fields=["selection"])
    PipelineStage.objects.create(
        pipeline=pipeline, position=0, key="write", campaign=campaign, status=StageStatus.ACTIVE
    )
    return AdversarialRound.objects.create(
        pipeline=pipeline,
        number=number,
        models_in_loop=[{"name": m, "sha256": ""} for m in models],
        method=method,
    )


def writing_campaign(found: AdversarialRound) -> Any:
    return found.pipeline.stages.get(key="write").campaign


def slot_for(found: AdversarialRound, writer: Any) -> Any:
    """The writer's next slot of the round (leased)."""
    return assignment_next(campaign=writing_campaign(found), annotator=writer)
