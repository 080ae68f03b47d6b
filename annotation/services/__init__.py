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
    JudgmentRefused,
    LeaseExpired,
)
from annotation.services.aggregation import (
    AggregateSummary,
    adjudication_decisions,
    adjudication_record,
    campaign_aggregate,
)
from annotation.services.assignment import assignment_next, assignments_expire
from annotation.services.campaigns import (
    ITEM_FIELD,
    ITEM_FILTERS,
    ITEM_MODELS,
    campaign_annotator_pause,
    campaign_create,
    campaign_status_set,
    gold_answer_for,
)
from annotation.services.judgments import ImportedVote, SubmitResult, judgment_import, judgment_submit

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
    "ImportedVote",
    "JudgmentRefused",
    "LeaseExpired",
    "SubmitResult",
    "adjudication_decisions",
    "adjudication_record",
    "assignment_next",
    "assignments_expire",
    "campaign_aggregate",
    "campaign_annotator_pause",
    "campaign_create",
    "campaign_status_set",
    "gold_answer_for",
    "judgment_import",
    "judgment_submit",
]
