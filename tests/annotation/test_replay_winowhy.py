"""Replay of the WinoWhy plausibility votes through the annotation services.

Each reason's published score is a share of 5 votes; it becomes score*5 "plausible" and
the rest "implausible" judgments from 5 annotators, sent through the judgment services,
then aggregated by the paper's rule: 1,270 positive, 1,595 negative, 1,230 acceptable."""

import json
from collections import Counter, defaultdict

import pytest

from annotation.models import CampaignItem, Judgment
from annotation.services import (
    ImportedVote,
    campaign_aggregate,
    campaign_create,
    judgment_import,
    judgment_submit,
)
from datasets.models import Reason
from datasets.services import dataset_import


def _norm(text):
    return " ".join(text.lower().split())


SOURCE_LABEL = {"Valid": "positive", "Invalid": "negative", "Undecided": "acceptable"}


@pytest.mark.realdata
@pytest.mark.slow
@pytest.mark.django_db
def test_winowhy_votes_replayed_give_the_papers_labels(data_dir, make_annotators):
    path = data_dir / "winowhy" / "winowhy.json"
    questions = json.loads(path.read_text(encoding="utf-8"))
    dataset_import(format="winowhy", paths=[path])
    assert Reason.objects.count() == 4095
    # plausible votes (of 5) for each reason, from the published score. Keyed by text, not
    # by ids, so that any importer's numbering works; repeated keys pop in file order.
    plausible_votes: dict[tuple[str, str], list[int]] = defaultdict(list)
    for q in questions:
        sentence = _norm(" ".join((q["text"]["txt1"], q["text"]["pron"], q["text"]["txt2"])))
        for text, _origin, score, _label in q["reasons"]:
            plausible_votes[(sentence, _norm(text))].append(round(score * 5))
    campaign = campaign_create(
        name="winowhy-replay", task="reason_plausibility", items="reasons", imported=True
    )
    assert campaign.judgments_per_item == 5
    annotators = make_annotators(5, prefix="winowhy")
    items = list(
        CampaignItem.objects.filter(campaign=campaign)
        .select_related("reason__schema")
        .order_by("reason__schema_id", "reason__position")
    )
    assert len(items) == 4095
    plausible_of = {}
    for item in items:
        assert item.reason is not None
        key = (_norm(item.reason.schema.sentence), _norm(item.reason.text))
        plausible_of[item.pk] = plausible_votes[key].pop(0)
    assert not any(plausible_votes.values())  # every published score used exactly once

    def votes_of(item):
        p = plausible_of[item.pk]
        return [("plausible" if n < p else "implausible") for n in range(5)]

    # The first 20 reasons go vote by vote through judgment_submit (the annotators'
    # path), the rest in bulk through judgment_import (same validation and counting).
    one_by_one, bulk = items[:20], items[20:]
    for item in one_by_one:
        for annotator, answer in zip(annotators, votes_of(item), strict=True):
            assert judgment_submit(annotator=annotator, item=item, answer=answer).created
    created = judgment_import(
        campaign=campaign,
        votes=[
            ImportedVote(item=item, annotator=annotator, answer=answer)
            for item in bulk
            for annotator, answer in zip(annotators, votes_of(item), strict=True)
        ],
    )
    assert created == len(bulk) * 5
    # replaying again records nothing new
    assert (
        judgment_import(
            campaign=campaign,
            votes=[
                ImportedVote(item=item, annotator=annotators[0], answer=votes_of(item)[0]) for item in items
            ],
        )
        == 0
    )
    assert Judgment.objects.filter(campaign_item__campaign=campaign).count() == 4095 * 5

    summary = campaign_aggregate(campaign=campaign)
    assert summary.aggregated == 4095 and summary.pending == 0
    assert dict(summary.labels) == {"positive": 1270, "negative": 1595, "acceptable": 1230}
    stored = Counter(Reason.objects.values_list("label", flat=True))
    assert stored == Counter({"positive": 1270, "negative": 1595, "acceptable": 1230})
    # every reason agrees with the label published beside its score
    for reason in Reason.objects.all():
        assert reason.label == SOURCE_LABEL[reason.source_label], reason.pk
    assert campaign_aggregate(campaign=campaign).changed == 0
