"""Domain errors of the annotation app (no Django here: pure modules may raise them too).

Each carries the message the user reads and the HTTP status a view or API answers with
(``core.errors.WinnowError``): a refused hand-out or a lease that ran out clashes with the
campaign's state (409); everything else is a request to mend (400). A subclass keeps
its family's status.
"""

from __future__ import annotations

from core.errors import WinnowError


class AnnotationError(WinnowError):
    """Base class: an annotation operation that cannot be done (e.g. an unknown decision)."""

    status = 400


class CampaignError(AnnotationError):
    """A campaign cannot be created or changed as asked (bad name, filter, K, items...)."""


class AssignmentRefused(AnnotationError):
    """No item is handed out to this annotator now."""

    status = 409


class AnnotatorPaused(AssignmentRefused):
    """A curator paused the annotator in this campaign."""

    def __init__(
        self, message: str = "A curator has paused your work on this campaign; no items for now."
    ) -> None:
        super().__init__(message)


class CampaignNotActive(AssignmentRefused):
    """The campaign is a draft, paused or closed."""

    @classmethod
    def of(cls, *, name: str, status: str) -> CampaignNotActive:
        return cls(f"The campaign {name} is {status}; no items are handed out.")


class JudgmentRefused(AnnotationError):
    """An answer was not recorded (a bad answer, an item not given to the annotator...)."""


class LeaseExpired(JudgmentRefused):
    """The lease ran out and others completed the item meanwhile."""

    status = 409


class PipelineError(AnnotationError):
    """A pipeline cannot be created or advanced as asked (bad K, an incomplete stage...)."""


class JudgmentLocked(JudgmentRefused):
    """The answer can no longer be changed: its item has been aggregated."""

    status = 409


class SkipRefused(AnnotationError):
    """The item cannot be skipped (already answered, or not the annotator's)."""
