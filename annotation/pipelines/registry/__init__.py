"""The pipeline kinds (issue 13), each a list of stage definitions in one place.

A stage is one class with every hook (a test checks that each defines each one):

- ``task`` and ``default_k`` / ``min_k``: the campaign the stage runs (None: the stage only
  computes, over the earlier stages' outcome);
- ``select``: which items the stage takes from the earlier stages' outcome, with their
  counts per origin or outcome (read from ``CampaignItem.aggregate``, the campaigns' own
  records, never from the items' fields, which an imported label keeps);
- ``build``: what the stage writes when it starts (the candidate pool copies the twin
  question's valid reasons as reverse candidates); the ids its campaign takes;
- ``summarise``: the stage's outcome once its campaign is aggregated, kept on the stage;
- ``waits``: a stage without a campaign waits for the curator (the pool: generated
  candidates are made first) or is the last one and finishes at once.

The papers' rules are quoted in docs/pipelines.md.
"""

from __future__ import annotations

from annotation.models import PipelineKind
from annotation.pipelines.registry.adversarial import (
    AdversarialComVEWriteStage,
    AdversarialSummaryStage,
    AdversarialValidateStage,
    AdversarialWinogradWriteStage,
)
from annotation.pipelines.registry.base import (
    Context,
    PipelineDefinition,
    Selection,
    StageKind,
)
from annotation.pipelines.registry.comve import (
    ComVECheckStage,
    ComVERecheckStage,
    ComVERewriteStage,
    ComVEWritingStage,
    HumanAccuracyStage,
)
from annotation.pipelines.registry.winowhy import (
    CandidatePoolStage,
    KnowledgeTypeStage,
    MajorTypesStage,
    PlausibilityStage,
    ReasonWritingStage,
    ValidationStage,
)

__all__ = ["PIPELINES", "Context", "PipelineDefinition", "Selection", "StageKind"]

PIPELINES: dict[str, PipelineDefinition] = {
    PipelineKind.WINOWHY: PipelineDefinition(
        kind=PipelineKind.WINOWHY,
        title="WinoWhy",
        stages=(
            ReasonWritingStage(),
            ValidationStage(),
            CandidatePoolStage(),
            PlausibilityStage(),
            KnowledgeTypeStage(),
            MajorTypesStage(),
        ),
        collection_items="schemas",
        uses_slots=False,
    ),
    PipelineKind.COMVE: PipelineDefinition(
        kind=PipelineKind.COMVE,
        title="ComVE",
        stages=(
            ComVEWritingStage(),
            ComVECheckStage(),
            ComVERewriteStage(),
            ComVERecheckStage(),
            HumanAccuracyStage(),
        ),
        collection_items="comve",
        uses_slots=True,
    ),
    PipelineKind.ADVERSARIAL_WINOGRAD: PipelineDefinition(
        kind=PipelineKind.ADVERSARIAL_WINOGRAD,
        title="Adversarial Winograd twins (a round)",
        stages=(AdversarialWinogradWriteStage(), AdversarialValidateStage(), AdversarialSummaryStage()),
        collection_items="schemas",
        uses_slots=True,
        is_round=True,
    ),
    PipelineKind.ADVERSARIAL_COMVE: PipelineDefinition(
        kind=PipelineKind.ADVERSARIAL_COMVE,
        title="Adversarial ComVE pairs (a round)",
        stages=(AdversarialComVEWriteStage(), AdversarialValidateStage(), AdversarialSummaryStage()),
        collection_items="comve",
        uses_slots=True,
        is_round=True,
    ),
}
