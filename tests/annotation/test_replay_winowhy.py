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
from datasets.models import Reason, Schema


def _norm(text):
    return " ".join(text.lower().split())


SOURCE_LABEL = {"Valid": "positive", "Invalid": "negative", "Undecided": "acceptable"}


def _load_winowhy(path):
    """Schema and Reason rows from winowhy.json. Uses the datasets importer when it
    exists (the foundation work), else a minimal loader of the same rows."""
    try:
        from datasets.services import dataset_import  # type: ignore[attr-defined]
    except ImportError:
        dataset_import = None
    if dataset_import is not None:
        dataset_import(format="winowhy", paths=[path])
        return
    questions = json.loads(path.read_text(encoding="utf-8"))
    schemas = Schema.objects.bulk_create(
        Schema(
            collection="wsc273",
            external_id=str(i),
            text_before=q["text"]["txt1"],
            pronoun=q["text"]["pron"],
            text_after=q["text"]["txt2"],
            candidate_a=q["answers"][0],
            candidate_b=q["answers"][1],
            answer=q["correctAnswer"].strip(" ."),
            source=q.get("source", ""),
            source_file=path.name,
            source_row=i + 1,
            file_checksum="",
        )
        for i, q in enumerate(questions)
    )
    Reason.objects.bulk_create(
        Reason(
            schema=schema,
            position=j,
            text=text,
            origin={"gpt": "generated"}.get(origin, origin),
            source_label=label,
            source_file=path.name,
            source_row=i + 1,
            file_checksum="",
        )
        for i, (q, schema) in enumerate(zip(questions, schemas, strict=True))
        for j, (text, origin, _score, label) in enumerate(q["reasons"])
    )


@pytest.mark.realdata
@pytest.mark.slow
@pytest.mark.django_db
def test_winowhy_votes_replayed_give_the_papers_labels(data_dir, make_annotators):
    path = data_dir / "winowhy" / "winowhy.json"
    questions = json.loads(path.read_text(encoding="utf-8"))
    _load_winowhy(path)
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
