"""Skips that cannot strand a stage: a skipped item is reopened by its skipper, the pages
say when items can no longer reach K with the annotators left, and identical written
reasons go to validation once."""

import pytest
from django.test import Client
from django.urls import reverse

from annotation.errors import SkipRefused
from annotation.models import Assignment, AssignmentStatus, CampaignItem, PipelineStage, StageStatus
from annotation.pipelines.services import pipeline_advance, pipeline_create
from annotation.selectors import items_out_of_reach
from annotation.services import (
    assignment_next,
    assignment_reopen,
    assignment_skip,
    campaign_create,
    judgment_submit,
)
from tests.annotation.answering import answer_all
from tests.datasets.factories import SchemaFactory

pytestmark = pytest.mark.django_db


def _campaign(n=2, k=2):
    SchemaFactory.create_batch(n)
    return campaign_create(name="sw", task="switchability", items="schemas", k=k)


def test_a_skipped_item_is_reopened_as_the_item_in_hand(annotator):
    campaign = _campaign(n=2, k=1)
    first = assignment_next(campaign=campaign, annotator=annotator)
    assert first is not None
    assignment_skip(annotator=annotator, assignment=first)
    second = assignment_next(campaign=campaign, annotator=annotator)
    assert second is not None and second.campaign_item_id != first.campaign_item_id
    reopened = assignment_reopen(annotator=annotator, assignment=first)
    assert reopened.status == AssignmentStatus.LEASED and reopened.skipped_at is None
    # the item held meanwhile went back to the pool; the reopened one is in hand
    assert not Assignment.objects.filter(pk=second.pk).exists()
    again = assignment_next(campaign=campaign, annotator=annotator)
    assert again is not None and again.pk == first.pk
    judgment_submit(annotator=annotator, assignment=again, answer="switchable")
    # the other item comes next, to the same annotator too
    last = assignment_next(campaign=campaign, annotator=annotator)
    assert last is not None and last.campaign_item_id == second.campaign_item_id
    # a second click on Reopen for an item answered since is refused with a reason
    with pytest.raises(SkipRefused, match="not one you skipped"):
        assignment_reopen(annotator=annotator, assignment=again)


def test_a_reopen_is_refused_once_the_item_has_its_k_answers_and_for_another_annotator(annotator, annotator2):
    campaign = _campaign(n=1, k=1)
    lease = assignment_next(campaign=campaign, annotator=annotator)
    assert lease is not None
    assignment_skip(annotator=annotator, assignment=lease)
    with pytest.raises(SkipRefused, match="someone else"):
        assignment_reopen(annotator=annotator2, assignment=lease)
    other = assignment_next(campaign=campaign, annotator=annotator2)
    assert other is not None
    judgment_submit(annotator=annotator2, assignment=other, answer="switchable")
    with pytest.raises(SkipRefused, match="no longer needs yours"):
        assignment_reopen(annotator=annotator, assignment=lease)


def test_an_item_skipped_by_one_of_k_annotators_is_out_of_reach_until_reopened(annotator, annotator2):
    campaign = _campaign(n=1, k=2)
    assert not items_out_of_reach(campaign=campaign)  # two annotators, K = 2: reachable
    lease = assignment_next(campaign=campaign, annotator=annotator)
    assert lease is not None
    assignment_skip(annotator=annotator, assignment=lease)
    reach = items_out_of_reach(campaign=campaign)
    assert reach.item_ids == [lease.campaign_item_id] and reach.skipped == 1
    reopened = assignment_reopen(annotator=annotator, assignment=lease)
    assert not items_out_of_reach(campaign=campaign)
    judgment_submit(annotator=annotator, assignment=reopened, answer="switchable")
    other = assignment_next(campaign=campaign, annotator=annotator2)
    assert other is not None
    judgment_submit(annotator=annotator2, assignment=other, answer="switchable")
    assert not items_out_of_reach(campaign=campaign)  # complete: nothing is out of reach


def test_the_item_page_lists_the_skipped_items_and_reopens_one(client, annotator):
    campaign = _campaign(n=3, k=1)
    client.force_login(annotator)
    page = reverse("annotation:campaign-annotate", args=[campaign.name])
    client.post(page, {"start": "1"})
    lease = Assignment.objects.get()
    html = client.get(page).content.decode()
    assert "you can reopen it from Skipped below" in html and 'id="skipped"' not in html
    client.post(reverse("annotation:campaign-skip", args=[campaign.name]), {"skip": lease.pk})
    html = client.get(page).content.decode()
    assert "Skipped by you (1)" in html and f"Reopen item {lease.campaign_item_id}" in html
    response = client.post(
        reverse("annotation:campaign-reopen", args=[campaign.name]),
        {"reopen": lease.pk},
        headers={"HX-Request": "true"},
    )
    assert response["HX-Push-Url"] == f"{page}?item={lease.campaign_item_id}"
    html = response.content.decode()
    assert f'name="assignment" value="{lease.pk}"' in html and "reopened" in html
    assert 'id="skipped"' not in html
    # another annotator's assignment is out of reach
    other = Client()
    other.force_login(annotator.__class__.objects.create_user("olga"))
    assert other.post(
        reverse("annotation:campaign-reopen", args=[campaign.name]), {"reopen": lease.pk}
    ).status_code in (
        403,
        404,
    )


def test_writing_tasks_say_how_to_skip_from_the_text_field(client, annotator):
    SchemaFactory.create()
    campaign = campaign_create(name="w", task="reason_writing", items="schemas", k=1)
    client.force_login(annotator)
    page = reverse("annotation:campaign-annotate", args=[campaign.name])
    html = client.post(page, {"start": "1"}, follow=True).content.decode()
    assert "<kbd>Alt</kbd>+<kbd>s</kbd> skips" in html and "<kbd>Alt</kbd>+<kbd>p</kbd>" in html


def _stage(pipeline, key):
    return PipelineStage.objects.select_related("campaign").get(pipeline=pipeline, key=key)


def test_the_pipeline_and_dashboard_pages_name_the_items_out_of_reach(client, curator, make_annotators):
    SchemaFactory.create(collection="mine", external_id="q-1")
    people = make_annotators(2)
    pipeline = pipeline_create(curator=curator, kind="winowhy", collection="mine", name="p", k={"writing": 2})
    writing = _stage(pipeline, "writing").campaign
    lease = assignment_next(campaign=writing, annotator=people[0])
    assert lease is not None
    client.force_login(curator)
    html = client.get(reverse("annotation:pipeline-detail", args=["p"])).content.decode()
    assert 'id="out-of-reach"' not in html
    assignment_skip(annotator=people[0], assignment=lease)
    html = client.get(reverse("annotation:pipeline-detail", args=["p"])).content.decode()
    assert "No eligible annotator left" in html and "who can reopen it" in html
    assert 'id="add-annotators"' in html and 'id="force-link"' in html
    assert "still need judgments" in html  # the waiting line stays
    html = client.get(reverse("annotation:dashboard")).content.decode()
    assert 'id="out-of-reach"' in html and "p-writing" in html


def test_identical_written_reasons_go_to_validation_once(curator, make_annotators):
    SchemaFactory.create(collection="mine", external_id="q-1")
    SchemaFactory.create(collection="mine", external_id="q-2")
    people = make_annotators(3)
    pipeline = pipeline_create(curator=curator, kind="winowhy", collection="mine", name="d", k={"writing": 3})
    writing = _stage(pipeline, "writing").campaign
    # q-1: three times the same reason (case, spacing and end punctuation aside); q-2: distinct
    answer_all(
        writing,
        people,
        lambda item, i: {
            "text": ["Kettles are tall.", "kettles  are TALL", "kettles are tall!"][i]
            if item.schema.external_id == "q-1"
            else f"reason {i}"
        },
    )
    stage = _stage(pipeline, "writing")
    pipeline_advance(pipeline=pipeline, position=stage.position, curator=curator)
    stage.refresh_from_db()
    counts = dict(stage.outcome["counts"])
    assert counts["reasons written"] == 6 and counts["identical reasons merged"] == 2
    assert len(stage.outcome["reason_ids"]) == 4
    ((kept, merged),) = stage.outcome["merged"].items()
    assert len(merged) == 2 and int(kept) in stage.outcome["reason_ids"]
    validation = _stage(pipeline, "validation")
    assert validation.status == StageStatus.ACTIVE
    items = CampaignItem.objects.filter(campaign=validation.campaign)
    assert items.count() == 4
    assert items.filter(reason__schema__external_id="q-1").count() == 1
