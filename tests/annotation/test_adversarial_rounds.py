"""Rounds of adversarial writing (issue 27): a round is a pipeline (write, validate, the
round's counts) numbered per collection; bad input is refused with the field named and
nothing written; validation takes the kept items that fooled a model and a seeded share of
the others, never a retracted one, never handed to its writer."""

from typing import Any

import pytest
from django.db.models import F
from django.urls import reverse

from annotation.errors import PipelineError
from annotation.models import (
    AdversarialItem,
    AdversarialRound,
    AdversarialStatus,
    Assignment,
    Campaign,
    CampaignItem,
    Pipeline,
    PipelineKind,
    PipelineStage,
    StageStatus,
    Task,
    ValidationRule,
    ValidationStatus,
)
from annotation.pipelines.rounds import adversarial_round_create, adversarial_rounds
from annotation.pipelines.services import pipeline_advance, pipeline_create
from annotation.services import assignment_next, judgment_submit
from tests.annotation.answering import annotators
from tests.annotation.factories import adversarial_item, adversarial_writing_tasks

pytestmark = pytest.mark.django_db

MODELS = [{"name": "SmolLM2-135M-Instruct.Q4_1", "sha256": "ab" * 32}]


@pytest.fixture(autouse=True)
def _writing_tasks(monkeypatch):
    adversarial_writing_tasks(monkeypatch)


def _round(curator, **overrides: Any) -> AdversarialRound:
    kwargs: dict[str, Any] = {
        "kind": PipelineKind.ADVERSARIAL_WINOGRAD,
        "collection": "fool-me",
        "models_in_loop": MODELS,
        "method": "partial",
        "slots": 5,
    }
    return adversarial_round_create(curator=curator, **{**kwargs, **overrides})


def test_rounds_are_numbered_per_collection_each_a_pipeline_with_its_writing_campaign_open(curator):
    first = _round(curator)
    second = _round(curator, models_in_loop=[*MODELS, {"name": "tiny", "sha256": "CD" * 32}])
    elsewhere = _round(curator, collection="other")
    assert [(r.pipeline.collection, r.number) for r in adversarial_rounds()] == [
        ("fool-me", 1),
        ("fool-me", 2),
        ("other", 1),
    ]
    assert [r.number for r in adversarial_rounds(collection="fool-me")] == [1, 2]
    assert (first.pipeline.name, second.pipeline.name, elsewhere.pipeline.name) == (
        "fool-me-round-1",
        "fool-me-round-2",
        "other-round-1",
    )
    assert second.models_in_loop[1] == {"name": "tiny", "sha256": "cd" * 32}
    assert (first.method, first.rule, first.share_unfooled) == ("partial", ValidationRule.UNANIMOUS, 0.0)
    assert first.pipeline.k == {"write": 1, "validate": 3}
    write = PipelineStage.objects.get(pipeline=first.pipeline, key="write")
    assert write.status == StageStatus.ACTIVE and write.campaign is not None
    assert (write.campaign.task, write.campaign.judgments_per_item) == (Task.ADVERSARIAL_WINOGRAD, 1)
    assert CampaignItem.objects.filter(campaign=write.campaign).count() == 5
    assert [s.key for s in PipelineStage.objects.filter(pipeline=first.pipeline)] == [
        "write",
        "validate",
        "summary",
    ]


def test_anli_rounds_take_two_answers(curator):
    made = _round(curator, rule=ValidationRule.ANLI, kind=PipelineKind.ADVERSARIAL_COMVE, method="full")
    assert (made.rule, made.pipeline.k["validate"]) == (ValidationRule.ANLI, 2)


@pytest.mark.parametrize(
    ("overrides", "refusal"),
    [
        ({"kind": PipelineKind.WINOWHY}, "kind: 'winowhy' is not one of"),
        ({"collection": " "}, "collection: required"),
        ({"collection": "x" * 51}, "collection: at most 50 characters"),
        ({"models_in_loop": []}, "models: choose at least one model"),
        ({"models_in_loop": [{"name": "tiny", "sha256": "abc"}]}, "models: tiny has no SHA-256"),
        ({"models_in_loop": [{"sha256": "ab" * 32}]}, "models: entry 1 has no name"),
        ({"models_in_loop": [MODELS[0], MODELS[0]]}, "models: SmolLM2-135M-Instruct.Q4_1 is named twice"),
        ({"method": ""}, "method: required"),
        ({"rule": "majority"}, "rule: 'majority' is not one of unanimous, anli"),
        ({"share_unfooled": 1.5}, "share_unfooled: 1.5 is not between 0 and 1"),
        ({"share_unfooled": "some"}, "share_unfooled: 'some' is not a number"),
        ({"k": 0}, "k: 0 is not between 1 and 100"),
        ({"rule": ValidationRule.ANLI, "k": 3}, "k: ANLI's rule takes 2 answers"),
        ({"slots": 0}, "slots: 0 is not between 1 and 1000"),
    ],
)
def test_bad_input_is_refused_with_the_field_named_and_nothing_written(curator, overrides, refusal):
    _round(curator)
    before = (Pipeline.objects.count(), AdversarialRound.objects.count(), Campaign.objects.count())
    with pytest.raises(PipelineError, match=refusal):
        _round(curator, **overrides)
    assert (Pipeline.objects.count(), AdversarialRound.objects.count(), Campaign.objects.count()) == before


def test_a_collection_keeps_one_kind_of_round(curator):
    _round(curator)
    with pytest.raises(PipelineError, match="collection: fool-me holds rounds of Adversarial Winograd"):
        _round(curator, kind=PipelineKind.ADVERSARIAL_COMVE, method="full")
    assert AdversarialRound.objects.count() == 1


def test_the_pipeline_form_does_not_start_a_round(curator):
    with pytest.raises(
        PipelineError, match="kind: a Adversarial Winograd twins \\(a round\\) pipeline is started as a round"
    ):
        pipeline_create(curator=curator, kind=PipelineKind.ADVERSARIAL_WINOGRAD, collection="c", slots=3)
    assert Pipeline.objects.count() == 0


def _validate_stage(round: AdversarialRound) -> PipelineStage:
    return PipelineStage.objects.select_related("campaign").get(pipeline=round.pipeline, key="validate")


def test_validation_takes_the_fooling_items_and_a_seeded_share_of_the_others_never_retracted_ones(curator):
    made = _round(curator, share_unfooled=0.5)
    writers = annotators(3, "w")
    fooling = [adversarial_item(round=made, writer=writers[n % 3]) for n in range(3)]
    unfooled = [adversarial_item(round=made, writer=writers[n % 3], fooled=False) for n in range(4)]
    retracted = adversarial_item(round=made, writer=writers[0], status=AdversarialStatus.RETRACTED)
    unfinished = adversarial_item(round=made, writer=writers[1], status=AdversarialStatus.WRITING)
    result = pipeline_advance(pipeline=made.pipeline, position=0, curator=curator, force=True)
    assert result.started == ["validate"]
    write = PipelineStage.objects.get(pipeline=made.pipeline, key="write")
    assert dict(write.outcome["counts"]) == {
        "written": 9,
        "kept": 7,
        "retracted": 1,
        "fooling (kept, fooled a model)": 3,
        "left unfinished": 1,
    }
    stage = _validate_stage(made)
    assert stage.campaign is not None
    assert (stage.campaign.task, stage.campaign.judgments_per_item) == (Task.ADVERSARIAL_VALIDATION, 3)
    rows = list(
        CampaignItem.objects.filter(campaign=stage.campaign).values_list("adversarial_id", "author_id")
    )
    sent = {adversarial for adversarial, _ in rows}
    sampled = sent - {i.pk for i in fooling}
    assert {i.pk for i in fooling} <= sent and len(sampled) == 2 and sampled <= {i.pk for i in unfooled}
    assert retracted.pk not in sent and unfinished.pk not in sent
    writer_of = dict(AdversarialItem.objects.values_list("pk", "writer_id"))
    assert all(author == writer_of[adversarial] for adversarial, author in rows)
    validation = dict(AdversarialItem.objects.values_list("pk", "validation"))
    assert {pk for pk, v in validation.items() if v == ValidationStatus.PENDING} == sent
    # the draw is seeded by the round: the preview and the advance chose the same items
    assert stage.campaign.selection["ids"] == sorted(sent)
    # the writers validate each other's items, never their own
    for writer in writers:
        while (lease := assignment_next(campaign=stage.campaign, annotator=writer)) is not None:
            assert writer_of.get(lease.campaign_item.adversarial_id or 0) != writer.pk
            judgment_submit(annotator=writer, assignment=lease, answer="correct")
    # each item answered by the two writers who did not write it
    assert Assignment.objects.filter(campaign_item__campaign=stage.campaign).count() == len(sent) * 2
    assert not Assignment.objects.filter(
        campaign_item__campaign=stage.campaign, annotator=F("campaign_item__author")
    ).exists()
    # three writers, each item needs 3 answers but has only 2 possible validators: advance anyway
    pipeline_advance(pipeline=made.pipeline, position=1, curator=curator, force=True)
    summary = PipelineStage.objects.get(pipeline=made.pipeline, key="summary")
    assert summary.status == StageStatus.DONE
    assert summary.outcome["round"] == {
        "written": 9,
        "kept": 7,
        "retracted": 1,
        "fooling": 3,
        "validated": 0,
        "rejected": 0,
        "flagged": 0,
    }


def test_a_validated_round_counts_its_items_and_the_pipeline_page_shows_the_round(curator, client):
    made = _round(curator, k=2, share_unfooled=0.0)
    writer = annotators(1, "writer")[0]
    fooling = adversarial_item(round=made, writer=writer)
    adversarial_item(round=made, writer=writer, fooled=False)  # not sent: the share is 0
    pipeline_advance(pipeline=made.pipeline, position=0, curator=curator, force=True)
    stage = _validate_stage(made)
    assert stage.campaign is not None
    assert list(
        CampaignItem.objects.filter(campaign=stage.campaign).values_list("adversarial_id", flat=True)
    ) == [fooling.pk]
    assert assignment_next(campaign=stage.campaign, annotator=writer) is None
    for validator in annotators(2, "val"):
        lease = assignment_next(campaign=stage.campaign, annotator=validator)
        assert lease is not None
        judgment_submit(annotator=validator, assignment=lease, answer="correct")
    pipeline_advance(pipeline=made.pipeline, position=1, curator=curator)
    fooling.refresh_from_db()
    assert fooling.validation == ValidationStatus.VALIDATED and fooling.votes["correct"] == 2
    stage.refresh_from_db()
    assert dict(stage.outcome["counts"]) == {"validated": 1, "rejected": 0, "flagged": 0}
    summary = PipelineStage.objects.get(pipeline=made.pipeline, key="summary")
    assert summary.outcome["round"]["validated"] == 1 and summary.outcome["round"]["fooling"] == 1
    made.pipeline.refresh_from_db()
    assert made.pipeline.status == "done"
    client.force_login(curator)
    page = client.get(reverse("annotation:pipeline-detail", args=[made.pipeline.name])).content.decode()
    assert "Round 1 of fool-me" in page and "SmolLM2-135M-Instruct.Q4_1" in page and "abababababab" in page
    assert "validated: <strong>1</strong>" in page


def test_the_preview_of_the_writing_stage_shows_what_validation_will_take(curator, client):
    made = _round(curator, share_unfooled=1.0)
    fooling = adversarial_item(round=made)
    adversarial_item(round=made, fooled=False)
    adversarial_item(round=made, status=AdversarialStatus.RETRACTED)
    client.force_login(curator)
    page = client.get(reverse("annotation:pipeline-detail", args=[made.pipeline.name]) + "?preview=1")
    html = page.content.decode()
    assert page.status_code == 200 and 'data-stage="validate"' in html
    assert "fooling items: <strong>1</strong>" in html
    assert "items that fooled no model (100% of 1): <strong>1</strong>" in html
    assert f"written item #{fooling.pk} (fooled SmolLM2-135M-Instruct.Q4_1)" in html
    # a preview writes nothing: the items still wait, no validation campaign exists
    assert not AdversarialItem.objects.filter(validation=ValidationStatus.PENDING).exists()
    assert _validate_stage(made).campaign is None
