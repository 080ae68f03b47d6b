"""The annotation app's errors share the one root of domain errors and keep the statuses
the views and the API answer with."""

import pytest

from annotation import errors, services
from annotation.tasks_registry import AnswerError
from annotation.votes_import import VotesImportError
from core.errors import WinnowError


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (errors.AnnotationError, 400),
        (errors.CampaignError, 400),
        (errors.AssignmentRefused, 409),
        (errors.AnnotatorPaused, 409),
        (errors.CampaignNotActive, 409),
        (errors.JudgmentRefused, 400),
        (errors.LeaseExpired, 409),
        (AnswerError, 400),
        (VotesImportError, 400),
    ],
)
def test_every_annotation_error_is_a_winnow_error_with_its_status(error, status):
    assert issubclass(error, WinnowError)
    raised = error("what went wrong")
    assert raised.status == status
    assert raised.message == "what went wrong"


def test_the_old_names_and_families_still_hold():
    assert services.LeaseExpired is errors.LeaseExpired
    assert issubclass(errors.LeaseExpired, errors.JudgmentRefused)
    assert issubclass(errors.AnnotatorPaused, errors.AssignmentRefused)
    assert issubclass(errors.CampaignNotActive, errors.AssignmentRefused)
    assert issubclass(errors.CampaignError, errors.AnnotationError)
    assert issubclass(AnswerError, ValueError)
