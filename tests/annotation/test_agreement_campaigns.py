"""A campaign's agreement: the summary the dataset card quotes, the chart numbers, the command."""

import json

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from annotation.agreement.services import campaign_agreement_summary, campaign_chart
from annotation.models import Campaign, CampaignItem

from .agreement_data import campaign_with_votes, winowhy_reasons

pytestmark = pytest.mark.django_db

VOTES = [
    ["switchable", "switchable", "switchable"],
    ["switchable", "switchable", "not_switchable"],
    ["not_switchable", "not_switchable", "not_switchable"],
    ["not_switchable", "switchable", "not_switchable"],
]


def test_summary_figures_equal_the_references(django_user_model):
    campaign = campaign_with_votes(django_user_model, "sw", "switchability", VOTES)
    s = campaign_agreement_summary(campaign=campaign)
    table = np.array([[v.count("switchable"), v.count("not_switchable")] for v in VOTES])
    assert s["categories"] == ["switchable", "not_switchable"]
    assert (s["items"], s["items_judged"], s["judgments"], s["annotators"]) == (4, 4, 12, 3)
    kappa = s["figures"]["fleiss_kappa"]
    assert kappa["value"] == pytest.approx(sm_fleiss_kappa(table), abs=1e-12)
    assert kappa["ci_low"] <= kappa["value"] <= kappa["ci_high"]
    assert s["figures"]["pairwise_agreement"]["value"] == pytest.approx((1 + 1 / 3 + 1 + 1 / 3) / 4)
    json.dumps(s, allow_nan=False)  # JSON-ready, no NaN anywhere


def test_summary_names_no_annotator_unless_asked(django_user_model):
    campaign = campaign_with_votes(django_user_model, "sw", "switchability", VOTES)
    anonymous = json.dumps(campaign_agreement_summary(campaign=campaign))
    assert "sw-rater" not in anonymous and "annotator 1" in anonymous
    named = campaign_agreement_summary(campaign=campaign, identities=True)
    assert [r["annotator"] for r in named["per_annotator"]] == ["sw-rater-1", "sw-rater-2", "sw-rater-3"]
    # rater 1: items 2 and 4 the others tie -> 2 of 2; rater 2: item 2 tie, item 4 against
    # the others -> 2 of 3; rater 3: item 4 tie, item 2 against -> 2 of 3
    assert [(r["compared_with_majority"], r["agreed_with_majority"]) for r in named["per_annotator"]] == [
        (2, 2),
        (3, 2),
        (3, 2),
    ]
    assert len(named["cohen_pairs"]) == 3


def test_summary_of_a_campaign_without_judgments_is_undefined_not_nan(django_user_model):
    campaign = Campaign.objects.create(name="empty", task="switchability", judgments_per_item=3)
    s = campaign_agreement_summary(campaign=campaign)
    assert s["judgments"] == 0
    assert s["figures"]["fleiss_kappa"]["value"] is None
    assert "two judgments" in s["figures"]["fleiss_kappa"]["undefined"]
    assert s["figures"]["gold_accuracy"]["undefined"] == "no judgment on a gold item"
    json.dumps(s, allow_nan=False)


def test_unanimous_campaign_has_kappa_undefined_and_pairwise_one(django_user_model):
    campaign = campaign_with_votes(django_user_model, "un", "switchability", [["switchable"] * 3] * 4)
    s = campaign_agreement_summary(campaign=campaign)
    assert s["figures"]["fleiss_kappa"]["value"] is None
    assert "same category" in s["figures"]["fleiss_kappa"]["undefined"]
    assert s["figures"]["pairwise_agreement"]["value"] == 1.0
    json.dumps(s, allow_nan=False)


def test_free_text_campaign_has_no_agreement_figures(django_user_model):
    campaign = Campaign.objects.create(name="wr", task="reason_writing", judgments_per_item=5)
    s = campaign_agreement_summary(campaign=campaign)
    assert s["applicable"] is False and "free-text" in s["not_applicable"]


def test_gold_accuracy_per_annotator(django_user_model):
    campaign = campaign_with_votes(django_user_model, "sw", "switchability", VOTES)
    first = CampaignItem.objects.filter(campaign=campaign).order_by("id").first()
    assert first is not None
    CampaignItem.objects.filter(pk=first.pk).update(is_gold=True, gold_answer="switchable")
    s = campaign_agreement_summary(campaign=campaign)
    assert [r["gold_accuracy"] for r in s["per_annotator"]] == [1.0, 1.0, 1.0]
    assert s["figures"]["gold_accuracy"]["value"] == 1.0


def test_chart_numbers_for_the_annotator_chart(django_user_model):
    campaign = campaign_with_votes(django_user_model, "sw", "switchability", VOTES)
    chart = campaign_chart(campaign=campaign, chart="annotator-agreement", identities=True)
    assert chart["columns"][0] == "annotator"
    assert [r["majority_agreement"] for r in chart["rows"]] == pytest.approx([1.0, 2 / 3, 2 / 3])
    assert campaign_chart(campaign=campaign, chart="plausibility-by-origin")["rows"] == []
    with pytest.raises(KeyError):
        campaign_chart(campaign=campaign, chart="nope")


def test_agreement_command_prints_figures_and_json(django_user_model, capsys):
    campaign_with_votes(django_user_model, "sw", "switchability", VOTES)
    call_command("agreement", "sw")
    out = capsys.readouterr().out
    assert "Fleiss' kappa:" in out and "pairwise agreement:" in out and "Krippendorff's alpha:" in out
    call_command("agreement", "sw", "--json")
    data = json.loads(capsys.readouterr().out)
    assert data["campaign"] == "sw" and data["figures"]["pairwise_agreement"]["value"] == pytest.approx(2 / 3)
    with pytest.raises(CommandError, match="no campaign named 'nope'"):
        call_command("agreement", "nope")


@pytest.mark.realdata
@pytest.mark.slow
def test_winowhy_votes_imported_and_measured_by_the_command(data_dir, capsys):
    """The whole WinoWhy data set: 4,095 reasons x 5 votes, through import_votes and agreement."""
    assert winowhy_reasons(data_dir) == 4095
    call_command(
        "import_votes", "winowhy", str(data_dir / "winowhy" / "winowhy.json"), "--campaign", "winowhy"
    )
    capsys.readouterr()
    call_command("agreement", "winowhy", "--json")
    s = json.loads(capsys.readouterr().out)
    assert (s["items"], s["judgments"], s["annotators"]) == (4095, 20475, 5)
    scores = json.loads((data_dir / "winowhy" / "winowhy.json").read_text(encoding="utf-8"))
    k = np.rint(np.array([r[2] for q in scores for r in q["reasons"]]) * 5)
    reference = sm_fleiss_kappa(np.stack([k, 5 - k], axis=1))
    assert s["figures"]["fleiss_kappa"]["value"] == pytest.approx(reference, abs=1e-12)
    assert round(s["figures"]["pairwise_agreement"]["value"], 4) == 0.6688
    assert {g["group"] for g in s["groups"] if g["group_by"] == "reason origin"} == {
        "human",
        "generated",
        "reverse",
    }
    assert any("anonymous raters" in n for n in s["notes"])
    call_command("agreement", "winowhy")
    out = capsys.readouterr().out
    assert "Fleiss' kappa:          0.3340" in out and "pairwise agreement:     66.88%" in out
    chart = campaign_chart(campaign=Campaign.objects.get(name="winowhy"), chart="plausibility-by-origin")
    assert sum(r["reasons"] for r in chart["rows"]) == 4095
    assert sum(r["reasons"] for r in chart["rows"] if r["score"] >= 0.8) == 1270
    types = campaign_chart(campaign=Campaign.objects.get(name="winowhy"), chart="knowledge-types")
    assert {r["knowledge_type"]: r["count"] for r in types["rows"]}["Object"] == 82


def test_knowledge_type_chart_counts_majority_types_and_ties_for_each(django_user_model):
    votes = [
        ["Object", "Object", "Property"],
        ["Spatial", "Quantity", "Others"],  # a three-way tie: counted for each
        ["Object", "Object", "Object"],
    ]
    campaign = campaign_with_votes(django_user_model, "kt", "knowledge_type", votes)
    chart = campaign_chart(campaign=campaign, chart="knowledge-types")
    counts = {r["knowledge_type"]: r["count"] for r in chart["rows"]}
    assert counts == {"Property": 0, "Object": 2, "Eventuality": 0, "Spatial": 1, "Quantity": 1, "Others": 1}
    assert {r["unit"] for r in chart["rows"]} == {"reasons"}
    s = campaign_agreement_summary(campaign=campaign)
    assert s["categories"][:6] == ["Property", "Object", "Eventuality", "Spatial", "Quantity", "Others"]
    assert s["figures"]["pairwise_agreement"]["value"] == pytest.approx((1 / 3 + 0 + 1) / 3)
