"""import_votes: WinoWhy scores and JSONL votes become the judgments of an imported campaign."""

import json
from collections import Counter

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Campaign, CampaignItem, CampaignStatus, Judgment, Task
from annotation.votes_import import VotesImportError, votes_import
from datasets.models import Reason, Schema

from .agreement_data import winowhy_reasons

pytestmark = pytest.mark.django_db


def _nothing_written() -> None:
    assert Campaign.objects.count() == 0
    assert CampaignItem.objects.count() == 0
    assert Judgment.objects.count() == 0
    assert not get_user_model().objects.filter(username__startswith="import-").exists()


def _small_winowhy(tmp_path, data_dir, questions=3):
    data = json.loads((data_dir / "winowhy" / "winowhy.json").read_text(encoding="utf-8"))[:questions]
    path = tmp_path / "winowhy.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path, data


# --------------------------------------------------------------------------- winowhy


@pytest.mark.realdata
def test_each_winowhy_score_becomes_five_anonymous_votes(tmp_path, data_dir):
    winowhy_reasons(data_dir, questions=3)
    path, data = _small_winowhy(tmp_path, data_dir)
    result = votes_import(format="winowhy", path=path, campaign_name="ww-audit")
    assert (result.items, result.judgments, result.annotators) == (45, 225, 5)
    campaign = Campaign.objects.get(name="ww-audit")
    assert campaign.imported and campaign.task == Task.REASON_PLAUSIBILITY
    assert campaign.status == CampaignStatus.CLOSED and campaign.judgments_per_item == 5
    assert campaign.selection["votes_format"] == "winowhy"
    raters = get_user_model().objects.filter(username__startswith="import-ww-audit-rater-")
    assert sorted(raters.values_list("username", flat=True)) == [
        f"import-ww-audit-rater-{i}" for i in range(1, 6)
    ]
    assert not any(u.has_usable_password() for u in raters)
    for q, question in enumerate(data):
        for p, reason in enumerate(question["reasons"]):
            item = CampaignItem.objects.get(
                campaign=campaign, reason__schema__external_id=str(q), reason__position=p
            )
            answers = Counter(Judgment.objects.filter(campaign_item=item).values_list("answer", flat=True))
            assert item.judgment_count == 5 == sum(answers.values())
            assert answers["plausible"] == round(reason[2] * 5)
            assert answers["plausible"] + answers["implausible"] == 5


@pytest.mark.realdata
def test_winowhy_import_without_the_reasons_names_the_row_and_writes_nothing(tmp_path, data_dir):
    path, _ = _small_winowhy(tmp_path, data_dir)
    with pytest.raises(VotesImportError, match=r"winowhy.json, row 1, field 'reasons\[0\]': no Reason row"):
        votes_import(format="winowhy", path=path, campaign_name="ww")
    _nothing_written()


@pytest.mark.realdata
def test_winowhy_score_that_is_not_a_fifth_is_refused(tmp_path, data_dir):
    winowhy_reasons(data_dir, questions=3)
    path, data = _small_winowhy(tmp_path, data_dir)
    data[2]["reasons"][4][2] = 0.55
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(
        VotesImportError, match=r"row 3, field 'reasons\[4\]\[2\]': score 0.55 is not a share of 5"
    ):
        votes_import(format="winowhy", path=path, campaign_name="ww")
    _nothing_written()


@pytest.mark.realdata
def test_winowhy_score_disagreeing_with_the_stored_reason_is_refused(tmp_path, data_dir):
    winowhy_reasons(data_dir, questions=3)
    path, data = _small_winowhy(tmp_path, data_dir)
    data[1]["reasons"][0][2] = 0.0 if data[1]["reasons"][0][2] else 1.0
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(
        VotesImportError, match=r"row 2, field 'reasons\[0\]\[2\]': the stored reason has plausibility"
    ):
        votes_import(format="winowhy", path=path, campaign_name="ww")
    _nothing_written()


def test_winowhy_file_that_is_not_json_is_refused(tmp_path):
    path = tmp_path / "winowhy.json"
    path.write_text("not json", encoding="utf-8")
    with pytest.raises(VotesImportError, match="winowhy.json: not a WinoWhy JSON file"):
        votes_import(format="winowhy", path=path, campaign_name="ww")
    _nothing_written()


# --------------------------------------------------------------------------- jsonl


@pytest.fixture
def two_schemas(db):
    common = {
        "source_file": "t",
        "source_row": 1,
        "file_checksum": "0" * 64,
        "candidate_a": "a",
        "candidate_b": "b",
    }
    s0 = Schema.objects.create(
        external_id="0", text_before="x", pronoun="it", text_after="y", answer="A", **common
    )
    s1 = Schema.objects.create(
        external_id="1", text_before="x", pronoun="it", text_after="z", answer="B", **common
    )
    Reason.objects.create(
        schema=s0, position=0, text="r", origin="human", source_file="t", source_row=1, file_checksum="0"
    )
    return s0, s1


def _jsonl(tmp_path, rows):
    path = tmp_path / "votes.jsonl"
    path.write_text(
        "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8"
    )
    return path


def test_jsonl_votes_become_judgments_with_counts_kept_right(tmp_path, two_schemas):
    rows = [
        {"item": "schema:wsc273/0", "annotator": "ann", "answer": "switchable"},
        {"item": "schema:wsc273/0", "annotator": "bob", "answer": "switchable"},
        {"item": "schema:wsc273/0", "annotator": "cat", "answer": "not_switchable"},
        {"item": "schema:wsc273/1", "annotator": "ann", "answer": "not_switchable"},
    ]
    path = _jsonl(tmp_path, rows)
    call_command("import_votes", "jsonl", str(path), "--campaign", "sw-audit", "--task", "switchability")
    campaign = Campaign.objects.get(name="sw-audit")
    assert campaign.imported and campaign.judgments_per_item == 3
    counts = dict(
        CampaignItem.objects.filter(campaign=campaign).values_list("schema__external_id", "judgment_count")
    )
    assert counts == {"0": 3, "1": 1}
    for item in CampaignItem.objects.filter(campaign=campaign):
        assert item.judgment_count == item.judgments.count()
    assert set(Judgment.objects.values_list("annotator__username", flat=True)) == {
        "import-sw-audit-ann",
        "import-sw-audit-bob",
        "import-sw-audit-cat",
    }


def test_jsonl_reason_items_by_natural_key(tmp_path, two_schemas):
    path = _jsonl(tmp_path, [{"item": "reason:wsc273/0/0", "annotator": "a", "answer": "plausible"}])
    result = votes_import(format="jsonl", path=path, campaign_name="pl", task="reason_plausibility")
    item = CampaignItem.objects.get(campaign=result.campaign)
    assert item.reason == Reason.objects.get(schema=two_schemas[0], position=0)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ('{"item": "schema:wsc273/0", "annotator": "x"', r"votes.jsonl, row 2: not valid JSON"),
        ('["schema:wsc273/0", "x", "switchable"]', r"row 2: expected a JSON object, found list"),
        ({"item": "schema:wsc273/0", "annotator": "x"}, r"row 2, field 'answer': missing"),
        (
            {"item": "schema:wsc273/0", "annotator": "x", "answer": "yes"},
            r"row 2, field 'answer': 'yes' is not an answer",
        ),
        (
            {"item": "schema:wsc273/0", "annotator": "x y", "answer": "switchable"},
            r"row 2, field 'annotator'",
        ),
        (
            {"item": "wsc273/0", "annotator": "x", "answer": "switchable"},
            r"row 2, field 'item': 'wsc273/0' is not",
        ),
        (
            {"item": "schema:wsc273/9", "annotator": "x", "answer": "switchable"},
            r"row 2, field 'item': no schema wsc273/9",
        ),
        (
            {"item": "reason:wsc273/0/0", "annotator": "x", "answer": "switchable"},
            r"row 2, field 'item': .* found a reason",
        ),
        (
            {"item": "schema:wsc273/0", "annotator": "ann", "answer": "switchable"},
            r"row 2, field 'annotator': ann already answered .* in row 1",
        ),
        (
            {"item": "schema:wsc273/0", "annotator": "x", "answer": "switchable", "when": 1},
            r"row 2, field 'when': unknown field",
        ),
    ],
    ids=[
        "broken-json",
        "not-object",
        "no-answer",
        "bad-answer",
        "bad-annotator",
        "bad-ref",
        "unknown-item",
        "wrong-kind",
        "duplicate",
        "extra-field",
    ],
)
def test_bad_jsonl_row_is_named_and_nothing_is_written(tmp_path, two_schemas, row, message):
    first = {"item": "schema:wsc273/0", "annotator": "ann", "answer": "switchable"}
    path = _jsonl(tmp_path, [first, row])
    with pytest.raises(VotesImportError, match=message):
        votes_import(format="jsonl", path=path, campaign_name="sw", task="switchability")
    _nothing_written()


def test_command_reports_bad_input_as_a_command_error(tmp_path, two_schemas):
    path = _jsonl(tmp_path, [{"item": "schema:wsc273/0", "annotator": "a", "answer": "no"}])
    with pytest.raises(CommandError, match="row 1, field 'answer'.*nothing was imported"):
        call_command("import_votes", "jsonl", str(path), "--campaign", "sw", "--task", "switchability")
    _nothing_written()


def test_jsonl_needs_a_task_for_a_new_campaign_and_refuses_free_text(tmp_path, two_schemas):
    path = _jsonl(tmp_path, [{"item": "schema:wsc273/0", "annotator": "a", "answer": "switchable"}])
    with pytest.raises(VotesImportError, match="needs the task"):
        votes_import(format="jsonl", path=path, campaign_name="sw")
    with pytest.raises(VotesImportError, match="no categorical answers"):
        votes_import(format="jsonl", path=path, campaign_name="sw", task="reason_writing")
    _nothing_written()


@pytest.mark.parametrize(
    "field,value", [("annotator", "-ann"), ("annotator", "@ann"), ("item", "\uff1dschema:wsc273/0")]
)
def test_jsonl_vote_cell_starting_a_formula_is_refused_with_row_and_field(
    tmp_path, two_schemas, field, value
):
    rows = [
        {"item": "schema:wsc273/0", "annotator": "ann", "answer": "switchable"},
        {"item": "schema:wsc273/1", "annotator": "bob", "answer": "switchable"} | {field: value},
    ]
    with pytest.raises(
        VotesImportError, match=rf"votes.jsonl, row 2, field '{field}': may not start with .* formula"
    ):
        votes_import(format="jsonl", path=_jsonl(tmp_path, rows), campaign_name="sw", task="switchability")
    _nothing_written()


def test_empty_file_and_missing_file_are_refused(tmp_path, two_schemas):
    path = _jsonl(tmp_path, [""])
    with pytest.raises(VotesImportError, match="votes.jsonl: no votes in the file"):
        votes_import(format="jsonl", path=path, campaign_name="sw", task="switchability")
    with pytest.raises(VotesImportError, match="cannot read the file"):
        votes_import(format="jsonl", path=tmp_path / "nope.jsonl", campaign_name="sw", task="switchability")
    _nothing_written()


def test_a_campaign_that_already_has_items_is_not_imported_into(tmp_path, two_schemas):
    path = _jsonl(tmp_path, [{"item": "schema:wsc273/0", "annotator": "a", "answer": "switchable"}])
    votes_import(format="jsonl", path=path, campaign_name="sw", task="switchability")
    with pytest.raises(VotesImportError, match="already has items"):
        votes_import(format="jsonl", path=path, campaign_name="sw", task="switchability")
    assert Judgment.objects.count() == 1


def test_an_empty_existing_campaign_is_used_and_marked_imported(tmp_path, two_schemas):
    Campaign.objects.create(name="sw", task="switchability", judgments_per_item=3)
    path = _jsonl(tmp_path, [{"item": "schema:wsc273/0", "annotator": "a", "answer": "switchable"}])
    with pytest.raises(VotesImportError, match="is a switchability campaign, not associativity"):
        votes_import(format="jsonl", path=path, campaign_name="sw", task="associativity")
    votes_import(format="jsonl", path=path, campaign_name="sw")
    assert Campaign.objects.get(name="sw").imported


def test_unknown_format_and_bad_campaign_name_are_refused(tmp_path):
    with pytest.raises(VotesImportError, match="unknown format 'csv'"):
        votes_import(format="csv", path=tmp_path / "x", campaign_name="sw")
    with pytest.raises(VotesImportError, match="must be a slug"):
        votes_import(format="jsonl", path=tmp_path / "x", campaign_name="no spaces")
    _nothing_written()


def test_votes_go_through_judgment_import_so_k_of_an_existing_campaign_holds(tmp_path, two_schemas):
    Campaign.objects.create(name="sw", task="switchability", judgments_per_item=1)
    rows = [
        {"item": "schema:wsc273/0", "annotator": "ann", "answer": "switchable"},
        {"item": "schema:wsc273/0", "annotator": "bob", "answer": "switchable"},
    ]
    path = _jsonl(tmp_path, rows)
    with pytest.raises(
        VotesImportError, match=r"votes.jsonl, row 2: item \d+ would get more than K judgments"
    ):
        votes_import(format="jsonl", path=path, campaign_name="sw")
    assert CampaignItem.objects.count() == 0
    assert Judgment.objects.count() == 0
    assert not Campaign.objects.get(name="sw").imported
