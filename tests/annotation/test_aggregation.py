"""campaign_aggregate writes the papers' labels onto the items, idempotently."""

import pytest

from annotation.models import Adjudication, CampaignItem
from annotation.services import (
    AnnotationError,
    adjudication_record,
    assignment_next,
    campaign_aggregate,
    campaign_create,
    judgment_submit,
)
from datasets.models import ComVEItem, Reason, Schema
from tests.annotation.answering import answer_all
from tests.datasets.factories import ComVEItemFactory, ReasonFactory, SchemaFactory

pytestmark = pytest.mark.django_db


def test_switchable_only_if_all_three_say_so_and_a_second_run_changes_nothing(make_annotators):
    yes, no = SchemaFactory.create(), SchemaFactory.create()
    campaign = campaign_create(name="sw", task="switchability", items="schemas")
    answer_all(
        campaign,
        make_annotators(3),
        lambda item, i: {"answer": "not_switchable" if item.schema_id == no.pk and i == 2 else "switchable"},
    )
    summary = campaign_aggregate(campaign=campaign)
    assert summary.aggregated == 2 and summary.changed == 2
    yes.refresh_from_db()
    no.refresh_from_db()
    assert yes.switchable is True and no.switchable is False
    assert yes.switched_text == "The suitcase doesn't fit into the trophy because [it] is too large."
    assert CampaignItem.objects.get(schema=no).needs_review
    assert not CampaignItem.objects.get(schema=yes).needs_review
    again = campaign_aggregate(campaign=campaign)
    assert again.changed == 0 and again.created == 0


def test_items_without_k_judgments_are_left_pending(make_annotators):
    schema = SchemaFactory.create()
    campaign = campaign_create(name="as", task="associativity", items="schemas")
    answer_all(campaign, make_annotators(2), lambda item, i: {"answer": "associative"})
    summary = campaign_aggregate(campaign=campaign)
    assert (summary.aggregated, summary.pending) == (0, 1)
    # a vote needs its K answers even when a campaign closes early (a forced pipeline stage)
    summary = campaign_aggregate(campaign=campaign, written_so_far=True)
    assert (summary.aggregated, summary.pending) == (0, 1)
    schema.refresh_from_db()
    assert schema.associative is None


def test_associative_only_if_unanimous(make_annotators):
    schema = SchemaFactory.create()
    campaign = campaign_create(name="as", task="associativity", items="schemas")
    answer_all(campaign, make_annotators(3), lambda item, i: {"answer": "associative"})
    campaign_aggregate(campaign=campaign)
    schema.refresh_from_db()
    assert schema.associative is True


def test_plausibility_score_and_label(make_annotators):
    reasons = ReasonFactory.create_batch(3)
    plausible_votes = {reasons[0].pk: 4, reasons[1].pk: 1, reasons[2].pk: 3}
    campaign = campaign_create(name="pl", task="reason_plausibility", items="reasons")
    answer_all(
        campaign,
        make_annotators(5),
        lambda item, i: {"answer": "plausible" if i < plausible_votes[item.reason_id] else "implausible"},
    )
    summary = campaign_aggregate(campaign=campaign)
    assert dict(summary.labels) == {"positive": 1, "negative": 1, "acceptable": 1}
    got = {r.pk: (r.plausibility, r.label) for r in Reason.objects.all()}
    assert got == {
        reasons[0].pk: (0.8, "positive"),
        reasons[1].pk: (0.2, "negative"),
        reasons[2].pk: (0.6, "acceptable"),
    }
    assert CampaignItem.objects.get(reason=reasons[2]).needs_review
    assert campaign_aggregate(campaign=campaign).changed == 0


def test_knowledge_types_of_reasons_and_major_types_of_the_question(make_annotators):
    schema = SchemaFactory.create()
    r1, r2, r3 = ReasonFactory.create_batch(3, schema=schema, label="positive")
    votes = {
        r1.pk: ["Object", "Object", "Object", "Spatial", "Property"],
        r2.pk: ["Spatial", "Spatial", "Spatial", "Object", "Others"],
        r3.pk: ["Property", "Property", "Quantity", "Quantity", "Others"],  # a tie
    }
    campaign = campaign_create(name="kt", task="knowledge_type", items="reasons")
    answer_all(campaign, make_annotators(5), lambda item, i: {"answer": votes[item.reason_id][i]})
    summary = campaign_aggregate(campaign=campaign)
    assert {r.pk: r.knowledge_type for r in Reason.objects.all()} == {
        r1.pk: "Object",
        r2.pk: "Spatial",
        r3.pk: "Property",
    }
    schema.refresh_from_db()
    assert schema.knowledge_types == ["Object", "Spatial"]  # 4 votes each
    assert CampaignItem.objects.get(reason=r3).needs_review
    assert summary.extra["questions"] == 1
    assert campaign_aggregate(campaign=campaign).changed == 0


def test_every_written_reason_becomes_a_human_reason_once(make_annotators):
    schema = SchemaFactory.create()
    ReasonFactory.create(schema=schema, position=14)
    campaign = campaign_create(name="rw", task="reason_writing", items="schemas", k=2)
    answer_all(campaign, make_annotators(2), lambda item, i: {"text": f"reason number {i}"})
    summary = campaign_aggregate(campaign=campaign)
    assert summary.created == 2
    new = Reason.objects.filter(source_file="campaign:rw").order_by("position")
    assert [(r.text, r.origin, r.plausibility, r.position) for r in new] == [
        ("reason number 0", "human", None, 15),
        ("reason number 1", "human", None, 16),
    ]
    again = campaign_aggregate(campaign=campaign)
    assert again.created == 0 and again.changed == 0
    assert Reason.objects.filter(source_file="campaign:rw").count() == 2


def test_comve_writing_creates_an_item_for_curator_review(annotator):
    campaign = campaign_create(name="cw", task="comve_writing", items="slots", slots=1)
    lease = assignment_next(campaign=campaign, annotator=annotator)
    judgment_submit(
        annotator=annotator,
        assignment=lease,
        payload={
            "statement_0": "He drinks milk.",
            "statement_1": "He drinks a chair.",
            "false_index": "1",
            "option_a": "A chair is not a liquid.",
            "option_b": "Milk is white.",
            "option_c": "Chairs are brown.",
            "correct_option": "A",
            "reference_1": "r1",
            "reference_2": "r2",
            "reference_3": "r3",
        },
    )
    summary = campaign_aggregate(campaign=campaign)
    assert summary.created == 1
    item = ComVEItem.objects.get(external_id__startswith="cw-")
    assert (item.false_index, item.false_statement, item.correct_option) == (1, "He drinks a chair.", "A")
    assert item.references == ["r1", "r2", "r3"]
    assert CampaignItem.objects.get(campaign=campaign).needs_review
    assert campaign_aggregate(campaign=campaign).created == 0


def test_comve_check_flags_rewrite_when_more_than_half_are_wrong_and_reports_accuracy(make_annotators):
    hard, easy = ComVEItemFactory.create(), ComVEItemFactory.create()
    campaign = campaign_create(name="cc", task="comve_check", items="comve")

    # key: statement 1 (index 1), option A
    def answers(item, i):
        if item.comve_item_id == hard.pk and i > 0:
            return {"answer": "0", "payload": {"option": "A"}}
        return {"answer": "1", "payload": {"option": "A"}}

    answer_all(campaign, make_annotators(3), answers)
    summary = campaign_aggregate(campaign=campaign)
    hard.refresh_from_db()
    easy.refresh_from_db()
    assert hard.needs_rewrite and not easy.needs_rewrite
    assert summary.extra["human_accuracy"] == pytest.approx(4 / 6)


def test_adjudication_is_recorded_beside_the_votes_and_decides_the_label(make_annotators, curator):
    schema = SchemaFactory.create()
    campaign = campaign_create(name="sw", task="switchability", items="schemas")
    answer_all(
        campaign, make_annotators(3), lambda item, i: {"answer": "not_switchable" if i == 0 else "switchable"}
    )
    campaign_aggregate(campaign=campaign)
    schema.refresh_from_db()
    assert schema.switchable is False
    item = CampaignItem.objects.get()
    adjudication_record(item=item, curator=curator, decision="switchable", note="annotator 0 misread")
    campaign_aggregate(campaign=campaign)
    schema.refresh_from_db()
    item.refresh_from_db()
    assert schema.switchable is True
    assert item.aggregate["votes"] == {"not_switchable": 1, "switchable": 2}  # votes untouched
    assert item.aggregate["adjudication"] == "switchable"
    assert item.judgments.count() == 3


def test_adjudication_with_an_unknown_decision_is_refused(curator):
    SchemaFactory.create()
    campaign = campaign_create(name="sw", task="switchability", items="schemas")
    with pytest.raises(AnnotationError, match="decision: 'perhaps'"):
        adjudication_record(item=campaign.items.get(), curator=curator, decision="perhaps")
    assert not Adjudication.objects.exists()


def test_schema_labels_are_not_touched_by_an_empty_campaign():
    schema = SchemaFactory.create(switchable=True)
    campaign = campaign_create(name="sw", task="switchability", items="schemas")
    assert campaign_aggregate(campaign=campaign).changed == 0
    assert Schema.objects.get(pk=schema.pk).switchable is True
