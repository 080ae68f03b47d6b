"""campaign_create and the manage.py command."""

import re

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Campaign, CampaignItem, StudyLink, Task
from annotation.services import CampaignError, campaign_annotator_pause, campaign_create
from annotation.task_types import TASKS
from tests.datasets.factories import ComVEItemFactory, ReasonFactory, SchemaFactory

pytestmark = pytest.mark.django_db


def test_campaign_over_a_filter_takes_the_papers_default_k_and_instructions(curator):
    schema = SchemaFactory.create()
    ReasonFactory.create_batch(3, schema=schema, origin="human")
    ReasonFactory.create_batch(2, schema=schema, origin="generated")
    campaign = campaign_create(
        name="plaus-human",
        task="reason_plausibility",
        items="reasons",
        filters={"origin": "human"},
        created_by=curator,
    )
    assert campaign.judgments_per_item == 5
    assert campaign.instructions == TASKS["reason_plausibility"].instructions
    assert campaign.items.count() == 3
    assert set(campaign.items.values_list("reason__origin", flat=True)) == {"human"}
    assert campaign.selection == {"items": "reasons", "filters": {"origin": "human"}}


def test_campaign_over_ids_with_gold_items_and_own_instructions():
    schemas = SchemaFactory.create_batch(4, switchable=True)
    campaign = campaign_create(
        name="sw",
        task="switchability",
        items="schemas",
        ids=[s.pk for s in schemas[:3]],
        gold_ids=[schemas[3].pk],
        k=2,
        gold_rate=0.2,
        lease_seconds=120,
        instructions="Read carefully.",
    )
    assert campaign.judgments_per_item == 2 and campaign.lease_seconds == 120
    assert campaign.instructions == "Read carefully."
    gold = campaign.items.get(is_gold=True)
    assert gold.schema_id == schemas[3].pk and gold.gold_answer == "switchable"
    assert campaign.items.filter(is_gold=False).count() == 3


def test_gold_ids_are_never_also_regular_items():
    schemas = SchemaFactory.create_batch(3, associative=False)
    campaign = campaign_create(name="as", task="associativity", items="schemas", gold_ids=[schemas[0].pk])
    assert campaign.items.filter(schema=schemas[0]).count() == 1
    assert campaign.items.get(schema=schemas[0]).gold_answer == "not_associative"


def test_comve_writing_slots_and_comve_check_items():
    ComVEItemFactory.create_batch(2)
    slots = campaign_create(name="write", task="comve_writing", items="slots", slots=4)
    assert slots.items.count() == 4 and slots.judgments_per_item == 1
    check = campaign_create(name="check", task="comve_check", items="comve", filters={"split": "test"})
    assert check.items.count() == 2 and check.judgments_per_item == 3


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"task": "nonsense", "items": "schemas"}, "task: 'nonsense'"),
        ({"task": "switchability", "items": "reasons"}, "works on schemas"),
        ({"task": "switchability", "items": "schemas", "filters": {"colour": "red"}}, "filter 'colour'"),
        ({"task": "switchability", "items": "schemas", "filters": {"switchable": "perhaps"}}, "true/false"),
        ({"task": "switchability", "items": "schemas", "ids": [999999]}, "no schemas with id 999999"),
        ({"task": "switchability", "items": "schemas", "k": 0}, "k: 0"),
        ({"task": "switchability", "items": "schemas", "lease_seconds": 5}, "lease"),
        ({"task": "switchability", "items": "schemas", "gold_rate": 1.5}, "gold_rate"),
        ({"task": "switchability", "items": "schemas", "filters": {"collection": "none-such"}}, "is empty"),
        ({"task": "reason_writing", "items": "schemas", "gold_ids": [1]}, "no right answer"),
    ],
)
def test_bad_campaigns_are_refused_with_a_clear_message_and_write_nothing(kwargs, message):
    SchemaFactory.create()
    with pytest.raises(CampaignError, match=message):
        campaign_create(name="bad", **kwargs)
    assert not Campaign.objects.exists()
    assert not CampaignItem.objects.exists()


def test_gold_item_without_a_known_answer_is_refused():
    schema = SchemaFactory.create(switchable=None)
    SchemaFactory.create()
    with pytest.raises(CampaignError, match=f"gold id {schema.pk}"):
        campaign_create(name="sw", task="switchability", items="schemas", gold_ids=[schema.pk])
    assert not Campaign.objects.exists()


def test_names_are_unique_slugs():
    SchemaFactory.create()
    campaign_create(name="one", task="associativity", items="schemas")
    with pytest.raises(CampaignError, match="exists already"):
        campaign_create(name="one", task="associativity", items="schemas")
    with pytest.raises(CampaignError, match="slug"):
        campaign_create(name="has space", task="associativity", items="schemas")


def test_pause_and_unpause(annotator):
    SchemaFactory.create()
    campaign = campaign_create(name="p", task="associativity", items="schemas")
    assert campaign_annotator_pause(campaign=campaign, annotator=annotator).paused
    assert not campaign_annotator_pause(campaign=campaign, annotator=annotator, paused=False).paused


def test_manage_py_campaign_create(capsys):
    schema = SchemaFactory.create()
    ReasonFactory.create_batch(2, schema=schema, origin="human", label="positive")
    ReasonFactory.create(schema=schema, origin="reverse")
    gold = ReasonFactory.create(schema=schema, origin="generated", label="negative")
    call_command(
        "campaign_create",
        "plaus",
        "--task",
        "reason_plausibility",
        "--items",
        "reasons",
        "--filter",
        "origin=human",
        "-k",
        "4",
        "--gold-ids",
        str(gold.pk),
        "--lease",
        "300",
        "--gold-rate",
        "0.25",
    )
    out = capsys.readouterr().out
    assert "2 items, 1 gold, K=4, lease 300s" in out
    campaign = Campaign.objects.get(name="plaus")
    assert campaign.gold_rate == 0.25
    with pytest.raises(CommandError, match="filter 'colour'"):
        call_command(
            "campaign_create", "x", "--task", "knowledge_type", "--items", "reasons", "--filter", "colour=1"
        )


def test_annotation_demo_creates_one_campaign_per_task_once(capsys):
    schema = SchemaFactory.create(collection="demo")
    ReasonFactory.create(schema=schema, label="positive")
    ComVEItemFactory.create(dataset="demo")
    call_command("annotation_demo")
    assert Campaign.objects.count() == 8
    # the tasks of DESIGN section 5 and the rewrite; a plausibility campaign of a model's
    # explanations is made from an evaluation run (a generation job), not by the demo, and
    # adversarial writing and validation campaigns are a round's stages (an adversarial pipeline)
    adversarial = {Task.ADVERSARIAL_WINOGRAD, Task.ADVERSARIAL_COMVE, Task.ADVERSARIAL_VALIDATION}
    assert set(Campaign.objects.values_list("task", flat=True)) == set(TASKS) - {
        "explanation_plausibility",
        *adversarial,
    }
    call_command("annotation_demo")
    assert Campaign.objects.count() == 8
    assert "demo-plausibility: exists" in capsys.readouterr().out


def test_annotation_demo_opens_a_study_link_once_that_a_participant_can_follow(client, curator, capsys):
    SchemaFactory.create_batch(6, collection="demo")
    call_command("annotation_demo", "--curator", curator.username)
    call_command("annotation_demo", "--curator", curator.username)
    link = StudyLink.objects.get()  # once, though run twice
    assert (link.campaign.name, link.platform, link.batch_size) == ("demo-switchability", "prolific", 5)
    out = capsys.readouterr().out
    assert out.count("study link: created") == 1 and "{{%PROLIFIC_PID%}}" in out
    trial = re.search(r"enter as a participant: (\S+)", out)
    assert trial is not None
    assert client.get(trial.group(1)).status_code == 200  # the landing page; entering is its POST
    entry = client.post(trial.group(1))
    assert entry.status_code == 302 and "consent" in entry["Location"]
    assert "You will judge 5 sentence pairs" in client.get(entry["Location"]).content.decode()


def test_annotation_demo_skips_tasks_without_items(capsys):
    call_command("annotation_demo")
    out = capsys.readouterr().out
    assert "demo-switchability: skipped (items: the selection of schemas is empty)" in out
    assert Campaign.objects.filter(name="demo-comve-writing").exists()  # slots need no items
