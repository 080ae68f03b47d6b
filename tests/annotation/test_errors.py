"""The annotation app's errors share the one root of domain errors and keep the statuses
the views and the API answer with."""

import pytest
from django.contrib.auth.models import AnonymousUser

from annotation import errors, services
from annotation.answers import AnswerError
from annotation.models import Campaign, CampaignItem
from annotation.votes_import import VotesImportError
from core.errors import Forbidden, WinnowError
from tests.datasets.factories import SchemaFactory


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


@pytest.mark.django_db
def test_an_anonymous_visitor_acts_on_nothing():
    SchemaFactory.create()
    campaign = services.campaign_create(name="sw", task="switchability", items="schemas")
    item = CampaignItem.objects.get(campaign=campaign)
    nobody = AnonymousUser()
    with pytest.raises(Forbidden, match="Sign in first") as refused:
        services.assignment_next(campaign=campaign, annotator=nobody)
    assert refused.value.status == 403
    with pytest.raises(Forbidden):
        services.judgment_submit(annotator=nobody, item=item, answer="switchable")
    with pytest.raises(Forbidden):
        services.adjudication_record(item=item, curator=nobody, decision="switchable")
    with pytest.raises(Forbidden):
        services.campaign_create(name="sw2", task="switchability", items="schemas", created_by=nobody)
    assert not item.judgments.exists() and not item.adjudications.exists()
    assert not Campaign.objects.filter(name="sw2").exists()
