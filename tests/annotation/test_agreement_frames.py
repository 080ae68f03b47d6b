"""A campaign's judgments as a DataFrame, and the agreement tables the page shows computed
from the same judgments: a notebook and the page give the same figures."""

import pandas as pd
import pytest
from statsmodels.stats.inter_rater import cohens_kappa, fleiss_kappa

from annotation.agreement.services import (
    ANNOTATOR_COLUMNS,
    COHEN_COLUMNS,
    JUDGMENT_COLUMNS,
    campaign_agreement_summary,
    campaign_judgments_frame,
    campaign_table,
)
from annotation.models import Campaign, CampaignItem, Judgment

from .agreement_data import campaign_with_votes

pytestmark = pytest.mark.django_db

VOTES = [
    ["switchable", "switchable", "switchable"],
    ["switchable", "not_switchable", "not_switchable"],
    ["not_switchable", "switchable", "not_switchable"],
    ["switchable", "switchable", "not_switchable"],
]


@pytest.fixture
def campaign(django_user_model) -> Campaign:
    campaign = campaign_with_votes(django_user_model, "sw", "switchability", VOTES)
    first = CampaignItem.objects.filter(campaign=campaign).order_by("id").first()
    assert first is not None
    CampaignItem.objects.filter(pk=first.pk).update(is_gold=True, gold_answer="switchable")
    return campaign


def test_the_judgments_frame_has_one_row_per_judgment_with_the_documented_dtypes(campaign):
    frame = campaign_judgments_frame(campaign=campaign, identities=True)
    assert list(frame.columns) == JUDGMENT_COLUMNS
    assert frame.dtypes.astype(str).to_dict() == {
        "judgment": "int64",
        "item": "int64",
        "schema": "Int64",
        "reason": "Int64",
        "comve_item": "Int64",
        "annotator": "str",
        "answer": "str",
        "text": "str",
        "is_gold": "bool",
        "gold_answer": "str",
        "correct": "boolean",
        "duration_ms": "Int64",
        "submitted_at": "datetime64[us, UTC]",
    }
    assert len(frame) == 12 and frame["answer"].tolist()[:3] == VOTES[0]
    assert frame["annotator"].tolist()[:3] == ["sw-rater-1", "sw-rater-2", "sw-rater-3"]
    gold = frame[frame["is_gold"]]
    assert gold["correct"].tolist() == [True, True, True]
    assert frame.loc[~frame["is_gold"], "correct"].isna().all()
    assert frame.loc[~frame["is_gold"], "gold_answer"].isna().all()


def test_without_identities_annotators_are_numbered_as_on_the_agreement_pages(campaign):
    frame = campaign_judgments_frame(campaign=campaign)
    assert frame["annotator"].tolist()[:3] == ["annotator 1", "annotator 2", "annotator 3"]
    summary = campaign_agreement_summary(campaign=campaign)
    assert [r["annotator"] for r in summary["per_annotator"]] == ["annotator 1", "annotator 2", "annotator 3"]
    per_annotator = frame.groupby("annotator").size().to_dict()
    assert {r["annotator"]: r["judgments"] for r in summary["per_annotator"]} == per_annotator


def test_the_pages_figures_are_statsmodels_figures_of_the_judgments_frame(campaign):
    frame = campaign_judgments_frame(campaign=campaign, identities=True)
    counts = pd.crosstab(frame["item"], frame["answer"])
    summary = campaign_agreement_summary(campaign=campaign, identities=True)
    assert summary["figures"]["fleiss_kappa"]["value"] == pytest.approx(
        fleiss_kappa(counts.to_numpy()), abs=1e-12
    )
    wide = frame.pivot(index="item", columns="annotator", values="answer")
    pairs = campaign_table(campaign=campaign, chart="cohen-pairs", identities=True)
    assert list(pairs.columns) == COHEN_COLUMNS and len(pairs) == 3
    for _, pair in pairs.iterrows():
        both = wide[[pair["annotator_a"], pair["annotator_b"]]].dropna()
        table = pd.crosstab(both.iloc[:, 0], both.iloc[:, 1]).reindex(
            index=["switchable", "not_switchable"], columns=["switchable", "not_switchable"], fill_value=0
        )
        assert pair["cohen_kappa"] == pytest.approx(
            cohens_kappa(table.to_numpy(), return_results=False), abs=1e-12
        )
    annotators = campaign_table(campaign=campaign, chart="annotator-agreement", identities=True)
    assert list(annotators.columns) == ANNOTATOR_COLUMNS
    gold = frame[frame["is_gold"]].groupby("annotator")["correct"].mean()
    assert annotators.set_index("annotator")["gold_accuracy"].to_dict() == gold.to_dict()


def test_a_free_text_campaign_has_its_texts_in_the_frame_and_no_agreement_rows(django_user_model):
    campaign = Campaign.objects.create(name="wr", task="reason_writing", judgments_per_item=2)
    item = CampaignItem.objects.create(campaign=campaign, judgment_count=1)
    writer = django_user_model.objects.create_user(username="w")
    Judgment.objects.create(
        campaign_item=item, annotator=writer, text="because it is heavy", duration_ms=1200
    )
    frame = campaign_judgments_frame(campaign=campaign)
    assert frame[["annotator", "answer", "text", "duration_ms"]].to_dict("records") == [
        {"annotator": "annotator 1", "answer": "", "text": "because it is heavy", "duration_ms": 1200}
    ]
    pairs = campaign_table(campaign=campaign, chart="cohen-pairs")
    assert pairs.empty and pairs.attrs["empty"] == "no two annotators share an item"
