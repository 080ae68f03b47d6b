"""What every pipeline stage defines (see the package's docstring), the items a stage
takes, the pipeline as the stages read it, and a pipeline kind's definition."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from django.db import models

from annotation.models import CampaignItem, Pipeline, PipelineStage


@dataclass
class Selection:
    """The items a stage works on: their kind and ids (or empty writing slots), with
    counts per origin or outcome (pairs, in display order) and a few first rows."""

    items: str
    ids: list[int] = field(default_factory=list)
    slots: int = 0
    counts: list[tuple[str, int]] = field(default_factory=list)
    note: str = ""

    @property
    def size(self) -> int:
        return self.slots if self.items == "slots" else len(self.ids)


@dataclass
class Context:
    """A pipeline with its stages by key (their campaigns loaded)."""

    pipeline: Pipeline
    stages: dict[str, PipelineStage]

    @classmethod
    def of(cls, pipeline: Pipeline) -> Context:
        stages = PipelineStage.objects.filter(pipeline=pipeline).select_related("campaign")
        return cls(pipeline=pipeline, stages={s.key: s for s in stages})

    def outcome(self, key: str) -> dict[str, Any]:
        return self.stages[key].outcome or {}

    def items(self, key: str) -> models.QuerySet[CampaignItem]:
        """The (non-gold) items of stage ``key``'s campaign."""
        stage = self.stages[key]
        if stage.campaign_id is None:
            return CampaignItem.objects.none()
        return CampaignItem.objects.filter(campaign_id=stage.campaign_id, is_gold=False).order_by("pk")

    def k(self, stage: StageKind) -> int:
        return int(self.pipeline.k.get(stage.key, stage.default_k or 1))


def counts_in_order(counter: Counter[str], order: Iterable[str]) -> list[tuple[str, int]]:
    order = list(order)
    rest = sorted(k for k in counter if k not in order)
    return [(k, counter[k]) for k in [*order, *rest] if counter[k] or k in order]


class StageKind(ABC):
    """One stage of a pipeline kind. Subclasses set every class attribute and implement
    every abstract method."""

    key: ClassVar[str]
    title: ClassVar[str]
    #: The annotation task of the stage's campaign; None: the stage only computes.
    task: ClassVar[str | None]
    #: K of the stage's campaign (the paper's), the least K the paper allows; None without a campaign.
    default_k: ClassVar[int | None]
    min_k: ClassVar[int | None]
    #: The paper's rule in a line (the pipeline page shows it; docs/pipelines.md quotes it).
    rule: ClassVar[str]
    #: Without a campaign: True waits for the curator's confirmation, False finishes at once.
    waits: ClassVar[bool]

    @abstractmethod
    def select(self, ctx: Context) -> Selection:
        """The items the stage takes from the earlier stages' outcome (writes nothing)."""

    @abstractmethod
    def build(self, ctx: Context, selection: Selection) -> Selection:
        """Writes the stage makes when it starts; the items its campaign takes."""

    @abstractmethod
    def summarise(self, ctx: Context) -> dict[str, Any]:
        """The stage's outcome (after its campaign's aggregation): ``counts`` (pairs in
        display order), ``lines`` (sentences) and the ids the later stages read."""


class NoBuild:
    def build(self, ctx: Context, selection: Selection) -> Selection:
        return selection


def percent(value: Any) -> str:
    return "no answers" if value is None else f"{float(value):.1%}"


@dataclass(frozen=True)
class PipelineDefinition:
    kind: str
    title: str
    stages: tuple[StageKind, ...]
    #: The item kind a collection holds for this pipeline (a collection of schemas or of ComVE items).
    collection_items: str
    #: Whether the pipeline starts from empty writing slots (how many: the form asks).
    uses_slots: bool
    #: One pipeline is one round of adversarial writing: started with its models by
    #: ``annotation.adversarial.adversarial_round_create`` (the rounds page), not by the
    #: pipeline form.
    is_round: bool = False

    def stage(self, key: str) -> StageKind:
        for s in self.stages:
            if s.key == key:
                return s
        raise KeyError(key)
