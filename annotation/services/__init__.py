"""Writes of the annotation app, one module per sub-domain.

Callers import from here (``from annotation.services import campaign_create``,
``from annotation import services``); the modules behind are an arrangement of this
package, not an interface.
"""

from annotation.errors import (
    AnnotationError,
    AnnotatorPaused,
    AssignmentRefused,
    CampaignError,
    CampaignNotActive,
    JudgmentLocked,
    JudgmentRefused,
    LeaseExpired,
    SkipRefused,
)
from annotation.services.aggregation import (
    AggregateSummary,
    adjudication_decisions,
    adjudication_record,
    campaign_aggregate,
)
from annotation.services.assignment import (
    assignment_gold_next,
    assignment_next,
    assignment_reopen,
    assignment_skip,
    assignments_expire,
)
from annotation.services.campaigns import (
    ITEM_FIELD,
    ITEM_FILTERS,
    ITEM_MODELS,
    campaign_annotator_pause,
    campaign_create,
    campaign_status_set,
    gold_answer_for,
)
from annotation.services.judgments import (
    ChangeResult,
    ImportedVote,
    SubmitResult,
    item_aggregated,
    judgment_change,
    judgment_import,
    judgment_submit,
)
from annotation.services.reach import items_k_lower

__all__ = [
    "ITEM_FIELD",
    "ITEM_FILTERS",
    "ITEM_MODELS",
    "AggregateSummary",
    "AnnotationError",
    "AnnotatorPaused",
    "AssignmentRefused",
    "CampaignError",
    "CampaignNotActive",
    "ChangeResult",
    "ImportedVote",
    "JudgmentLocked",
    "JudgmentRefused",
    "LeaseExpired",
    "SkipRefused",
    "SubmitResult",
    "adjudication_decisions",
    "adjudication_record",
    "assignment_gold_next",
    "assignment_next",
    "assignment_reopen",
    "assignment_skip",
    "assignments_expire",
    "campaign_aggregate",
    "campaign_annotator_pause",
    "campaign_create",
    "campaign_status_set",
    "gold_answer_for",
    "item_aggregated",
    "items_k_lower",
    "judgment_change",
    "judgment_import",
    "judgment_submit",
]
