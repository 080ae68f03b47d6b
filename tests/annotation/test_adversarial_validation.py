"""Validation of items written with models in the loop (issue 27): a writer never gets
their own item (nor under another study link's account), each item's own K bounds its
answers everywhere K is read, the answers name their missing field, and the round's rule
(K matching answers, or ANLI's third vote on disagreement) decides the item's validation.
Run on SQLite and, with DATABASE_URL=$TEST_DATABASE_URL, on PostgreSQL."""

from collections import Counter
from datetime import timedelta
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation import selectors
from annotation.crowd import services as crowd
from annotation.models import (
    AdversarialItem,
    AdversarialStatus,
    Assignment,
    CampaignItem,
    Judgment,
    PipelineKind,
    ValidationRule,
    ValidationStatus,
)
from annotation.services import (
    CampaignError,
    JudgmentRefused,
    LeaseExpired,
    adjudication_record,
    assignment_next,
    campaign_aggregate,
    campaign_create,
    judgment_change,
    judgment_submit,
)
from tests.annotation.answering import annotators
from tests.annotation.factories import adversarial_item, adversarial_round
from tests.datasets.factories import SchemaFactory

pytestmark = pytest.mark.django_db

PROLIFIC = {"PROLIFIC_PID": "5f0c1a2b3c4d5e6f7a8b9c0d", "STUDY_ID": "s1", "SESSION_ID": "x1"}


def _validation(items, *, k=3, name="validate"):
    return campaign_create(
        name=name, task="adversarial_validation", items="adversarial", ids=[i.pk for i in items], k=k
    )


def _lease(campaign, user, **kwargs):
    lease = assignment_next(campaign=campaign, annotator=user, **kwargs)
    assert lease is not None, user.username
    return lease


def _drain(campaign, user):
    """Every item ``user`` is handed, answered "correct": the items they got."""
    got = []
    while (lease := assignment_next(campaign=campaign, annotator=user)) is not None:
        got.append(lease.campaign_item.adversarial_id)
        judgment_submit(annotator=user, assignment=lease, answer="correct")
    return got


# --------------------------------------------------------------------------- routing


def test_a_writer_is_never_offered_their_own_item_to_validate():
    writer, other = annotators(2, "writer")
    round = adversarial_round()
    mine = adversarial_item(round=round, writer=writer)
    theirs = adversarial_item(round=round, writer=other)
    campaign = _validation([mine, theirs])
    authors = dict(CampaignItem.objects.filter(campaign=campaign).values_list("adversarial_id", "author_id"))
    assert authors == {mine.pk: writer.pk, theirs.pk: other.pk}
    assert selectors.my_progress(campaign=campaign, annotator=writer).remaining == 1  # not their own
    assert _drain(campaign, writer) == [theirs.pk]
    assert _drain(campaign, other) == [mine.pk]
    assert not Assignment.objects.filter(campaign_item__adversarial=mine, annotator=writer).exists()


def test_a_crowd_writer_back_through_the_validation_study_link_is_not_offered_their_item(curator):
    round = adversarial_round()
    # the writer came through the writing campaign's study link (Prolific)
    writing = campaign_create(
        name="write", task="switchability", items="schemas", ids=[SchemaFactory.create().pk]
    )
    write_link = crowd.study_link_create(campaign=writing, platform="prolific", consent="ok", user=curator)
    writer = crowd.participant_enter(link=write_link, params=PROLIFIC).participant.user
    mine = adversarial_item(round=round, writer=writer)
    theirs = adversarial_item(round=round)
    campaign = _validation([mine, theirs])
    # the same Prolific id enters the validation campaign's own link: another account
    link = crowd.study_link_create(campaign=campaign, platform="prolific", consent="ok", user=curator)
    validator = crowd.participant_enter(link=link, params=PROLIFIC).participant.user
    assert validator.pk != writer.pk
    assert _drain(campaign, validator) == [theirs.pk]
    # another Prolific participant is offered both
    someone = crowd.participant_enter(
        link=link, params={**PROLIFIC, "PROLIFIC_PID": "aaaa1111bbbb2222cccc3333"}
    )
    assert sorted(_drain(campaign, someone.participant.user)) == sorted([mine.pk, theirs.pk])


def test_each_item_gets_exactly_its_own_k_and_none_waits_at_zero_while_another_passes_it():
    round = adversarial_round()
    low, usual, high = (adversarial_item(round=round) for _ in range(3))
    campaign = _validation([low, usual, high], k=3)
    CampaignItem.objects.filter(campaign=campaign, adversarial=low).update(judgments_needed=1)
    CampaignItem.objects.filter(campaign=campaign, adversarial=high).update(judgments_needed=4)
    people = annotators(6, "val")
    got: Counter[int] = Counter()
    for person in people:
        for adversarial_id in _drain(campaign, person):
            got[adversarial_id] += 1
    assert got == {low.pk: 1, usual.pk: 3, high.pk: 4}
    counts = dict(
        CampaignItem.objects.filter(campaign=campaign).values_list("adversarial_id", "judgment_count")
    )
    assert counts == {low.pk: 1, usual.pk: 3, high.pk: 4}
    progress = selectors.campaign_progress(campaign=campaign)
    assert (progress["complete"], progress["judgments"], progress["needed"], progress["percent"]) == (
        3,
        8,
        8,
        100,
    )
    summary = campaign_aggregate(campaign=campaign)
    assert (summary.aggregated, summary.pending) == (3, 0)
    # the low item is validated on its one answer: its K matching answers
    assert AdversarialItem.objects.get(pk=low.pk).validation == ValidationStatus.VALIDATED


def test_a_late_answer_on_an_item_that_has_its_own_k_is_refused():
    round = adversarial_round()
    other_item = adversarial_item(round=round)
    item = adversarial_item(round=round)
    campaign = _validation([other_item, item], k=3)
    CampaignItem.objects.filter(campaign=campaign, adversarial=item).update(judgments_needed=1)
    first, second, third = annotators(3, "late")
    start = timezone.now()
    lease = _lease(campaign, first, now=start)
    assert lease.campaign_item.adversarial_id == item.pk  # the newest first
    # its own K is 1, held by a live lease: the second annotator gets the other item
    assert _lease(campaign, second, now=start).campaign_item.adversarial_id == other_item.pk
    # the first lease runs out: the item goes to the third, who answers it
    later = start + timedelta(seconds=campaign.lease_seconds + 1)
    taken = _lease(campaign, third, now=later)
    assert taken.campaign_item.adversarial_id == item.pk
    judgment_submit(annotator=third, assignment=taken, answer="correct", now=later)
    with pytest.raises(LeaseExpired):
        judgment_submit(annotator=first, assignment=lease, answer="correct", now=later)
    assert CampaignItem.objects.get(campaign=campaign, adversarial=item).judgment_count == 1


def test_items_out_of_reach_leave_the_author_out_of_the_eligible_annotators():
    writer, validator = annotators(2, "reach")
    round = adversarial_round()
    item = adversarial_item(round=round, writer=writer)
    campaign = _validation([item], k=2)
    # two annotators: the writer may not answer, so K = 2 cannot be reached
    assert selectors.items_out_of_reach(campaign=campaign).item_ids == [
        CampaignItem.objects.get(campaign=campaign).pk
    ]
    CampaignItem.objects.filter(campaign=campaign).update(judgments_needed=1)
    assert not selectors.items_out_of_reach(campaign=campaign)
    assert _drain(campaign, validator) == [item.pk]


# --------------------------------------------------------------------------- which items


def test_retracted_items_never_reach_validation():
    round = adversarial_round()
    kept = adversarial_item(round=round)
    retracted = adversarial_item(round=round, status=AdversarialStatus.RETRACTED)
    writing = adversarial_item(round=round, status=AdversarialStatus.WRITING)
    campaign = _validation([kept, retracted, writing])
    assert list(CampaignItem.objects.filter(campaign=campaign).values_list("adversarial_id", flat=True)) == [
        kept.pk
    ]
    with pytest.raises(CampaignError, match="items: the selection of adversarial is empty"):
        _validation([retracted], name="only-retracted")


# --------------------------------------------------------------------------- answers


@pytest.mark.parametrize(
    ("fields", "refusal"),
    [
        ({"answer": "incorrect"}, "corrected_answer: say what the right answer is"),
        (
            {"answer": "incorrect", "payload": {"corrected_answer": "A"}},
            "corrected_twin_answer: the right candidate",
        ),
        (
            {"answer": "incorrect", "payload": {"corrected_answer": "A", "corrected_twin_answer": "B"}},
            "corrected_answer: those are the writer's answers",
        ),
        (
            {"answer": "incorrect", "payload": {"corrected_false_index": "0"}},
            "corrected_answer: say which candidate",
        ),
        ({"answer": "flagged"}, "text: say why you flag this item"),
        ({"answer": "flagged", "text": "=HYPERLINK(1)"}, "text: "),
        ({"answer": "maybe"}, "answer: 'maybe' is not one of correct, incorrect, flagged"),
    ],
)
def test_an_incomplete_answer_is_refused_with_its_field_named_and_nothing_written(fields, refusal):
    campaign = _validation([adversarial_item()], k=1)
    (validator,) = annotators(1, "v")
    lease = assignment_next(campaign=campaign, annotator=validator)
    with pytest.raises(JudgmentRefused, match=refusal):
        judgment_submit(annotator=validator, assignment=lease, **fields)
    assert Judgment.objects.count() == 0
    assert CampaignItem.objects.get(campaign=campaign).judgment_count == 0


def test_a_comve_pair_is_corrected_by_its_statement_and_not_to_the_writers_answer():
    round = adversarial_round(kind=PipelineKind.ADVERSARIAL_COMVE, collection="pairs")
    campaign = _validation([adversarial_item(round=round)], k=1)
    (validator,) = annotators(1, "v")
    lease = assignment_next(campaign=campaign, annotator=validator)
    with pytest.raises(JudgmentRefused, match="corrected_false_index: say which statement"):
        judgment_submit(
            annotator=validator,
            assignment=lease,
            answer="incorrect",
            payload={"corrected_answer": "A", "corrected_twin_answer": "A"},
        )
    with pytest.raises(JudgmentRefused, match="corrected_false_index: that is the writer's answer"):
        judgment_submit(
            annotator=validator, assignment=lease, answer="incorrect", payload={"corrected_false_index": 1}
        )
    done = judgment_submit(
        annotator=validator,
        assignment=lease,
        answer="incorrect",
        payload={"corrected_false_index": "0"},
        text="both odd",
    )
    assert (done.judgment.payload, done.judgment.text) == ({"corrected_false_index": 0}, "both odd")


def test_correct_carries_nothing_and_flagged_keeps_its_reason():
    round = adversarial_round()
    campaign = _validation([adversarial_item(round=round), adversarial_item(round=round)], k=1)
    (validator,) = annotators(1, "v")
    first = assignment_next(campaign=campaign, annotator=validator)
    done = judgment_submit(
        annotator=validator,
        assignment=first,
        answer="correct",
        text="fine",
        payload={"corrected_answer": "B"},
    )
    assert (done.judgment.text, done.judgment.payload) == ("", {})
    second = assignment_next(campaign=campaign, annotator=validator)
    flagged = judgment_submit(annotator=validator, assignment=second, answer="flagged", text=" both fit ")
    assert (flagged.judgment.answer, flagged.judgment.text) == ("flagged", "both fit")


# --------------------------------------------------------------------------- the rules


def _answer(campaign, people, answers):
    for person, (answer, extra) in zip(people, answers, strict=True):
        lease = assignment_next(campaign=campaign, annotator=person)
        assert lease is not None, person.username
        judgment_submit(annotator=person, assignment=lease, answer=answer, **extra)


Answer = tuple[str, dict[str, Any]]
CORRECT: Answer = ("correct", {})
INCORRECT: Answer = ("incorrect", {"payload": {"corrected_answer": "B", "corrected_twin_answer": "A"}})
FLAGGED: Answer = ("flagged", {"text": "both candidates fit"})


@pytest.mark.parametrize(
    ("answers", "outcome", "review"),
    [
        ((CORRECT, CORRECT, CORRECT), ValidationStatus.VALIDATED, False),
        ((INCORRECT, CORRECT, INCORRECT), ValidationStatus.REJECTED, False),
        ((CORRECT, CORRECT, FLAGGED), ValidationStatus.FLAGGED, True),
        ((CORRECT, INCORRECT, FLAGGED), ValidationStatus.FLAGGED, True),
    ],
)
def test_the_unanimous_rule_validates_on_k_matching_answers_and_rejects_on_a_majority_incorrect(
    answers, outcome, review
):
    item = adversarial_item()
    campaign = _validation([item], k=3)
    _answer(campaign, annotators(3, "u"), answers)
    summary = campaign_aggregate(campaign=campaign)
    item.refresh_from_db()
    assert item.validation == outcome and item.validated_at is not None
    assert item.votes == {
        "correct": answers.count(CORRECT),
        "incorrect": answers.count(INCORRECT),
        "flagged": answers.count(FLAGGED),
    }
    row = CampaignItem.objects.get(campaign=campaign)
    assert row.needs_review is review and row.aggregate["validation"] == outcome
    assert summary.labels == Counter({outcome: 1}) and summary.extra[outcome] == 1
    at = item.validated_at
    again = campaign_aggregate(campaign=campaign)  # idempotent: nothing changes, not even the time
    item.refresh_from_db()
    assert again.changed == 0 and item.validated_at == at


def test_anli_takes_two_answers_and_a_third_only_when_they_disagree():
    round = adversarial_round(rule=ValidationRule.ANLI)
    agreed, disputed = adversarial_item(round=round), adversarial_item(round=round)
    campaign = _validation([agreed, disputed], k=2)
    first, second, third, fourth = annotators(4, "anli")
    rows = {r.adversarial_id: r for r in CampaignItem.objects.filter(campaign=campaign)}

    def answer(person, item_id, answer_and_extra):
        lease = _lease(campaign, person)
        assert lease.campaign_item.adversarial_id == item_id
        judgment_submit(annotator=person, assignment=lease, answer=answer_and_extra[0], **answer_and_extra[1])

    # the agreed item: two "correct", no third vote
    answer(first, disputed.pk, CORRECT)  # the newest item first
    answer(first, agreed.pk, CORRECT)
    answer(second, disputed.pk, INCORRECT)  # disagrees with the first: a third vote
    answer(second, agreed.pk, CORRECT)
    needed = dict(
        CampaignItem.objects.filter(campaign=campaign).values_list("adversarial_id", "judgments_needed")
    )
    assert needed == {agreed.pk: None, disputed.pk: 3}
    # the third annotator gets the disputed item only; the fourth nothing
    answer(third, disputed.pk, INCORRECT)
    assert assignment_next(campaign=campaign, annotator=third) is None
    assert assignment_next(campaign=campaign, annotator=fourth) is None
    summary = campaign_aggregate(campaign=campaign)
    assert (summary.aggregated, summary.pending) == (2, 0)
    agreed.refresh_from_db()
    disputed.refresh_from_db()
    assert (agreed.validation, agreed.votes) == (
        ValidationStatus.VALIDATED,
        {"correct": 2, "incorrect": 0, "flagged": 0},
    )
    assert (disputed.validation, disputed.votes) == (
        ValidationStatus.REJECTED,
        {"correct": 1, "incorrect": 2, "flagged": 0},
    )
    assert rows[disputed.pk].judgments_needed is None  # (read before: set by the second answer)
    progress = selectors.campaign_progress(campaign=campaign)
    assert (progress["judgments"], progress["needed"]) == (5, 5)


def test_anli_a_changed_second_answer_that_disagrees_asks_for_the_third():
    round = adversarial_round(rule=ValidationRule.ANLI)
    item = adversarial_item(round=round)
    campaign = _validation([item], k=2)
    first, second = annotators(2, "chg")
    _answer(campaign, [first, second], [CORRECT, CORRECT])
    row = CampaignItem.objects.get(campaign=campaign)
    assert row.judgments_needed is None
    judgment_change(annotator=second, item=row, answer="flagged", text="on second thought, both fit")
    row.refresh_from_db()
    assert row.judgments_needed == 3


def test_the_unanimous_rule_never_asks_for_a_third_vote():
    item = adversarial_item()
    campaign = _validation([item], k=2)
    _answer(campaign, annotators(2, "two"), [CORRECT, INCORRECT])
    assert CampaignItem.objects.get(campaign=campaign).judgments_needed is None
    campaign_aggregate(campaign=campaign)
    item.refresh_from_db()
    assert item.validation == ValidationStatus.FLAGGED  # neither 2 matching nor a majority incorrect


# --------------------------------------------------------------------------- pages


def test_the_validator_sees_the_twins_and_answers_incorrect_on_the_page(client):
    item = adversarial_item()
    campaign = _validation([item], k=1)
    (validator,) = annotators(1, "page")
    client.force_login(validator)
    url = reverse("annotation:campaign-annotate", args=[campaign.name])
    started = client.post(url, {"start": "1"})
    page = client.get(started.url).content.decode()
    assert "because <mark>it</mark> is too large." in page and "is too small." in page
    assert 'name="corrected_answer"' in page and 'name="corrected_twin_answer"' in page
    lease = Assignment.objects.get(annotator=validator)
    missing = client.post(url, {"assignment": lease.pk, "answer": "incorrect", "corrected_answer": "B"})
    assert (
        missing.status_code == 400
        and "corrected_twin_answer: the right candidate, A or B" in missing.content.decode()
    )
    client.post(
        url,
        {
            "assignment": lease.pk,
            "answer": "incorrect",
            "corrected_answer": "B",
            "corrected_twin_answer": "B",
        },
    )
    judgment = Judgment.objects.get()
    assert (judgment.answer, judgment.payload) == (
        "incorrect",
        {"corrected_answer": "B", "corrected_twin_answer": "B"},
    )


def test_the_agreement_page_works_on_a_validation_campaign(client, curator):
    round = adversarial_round()
    campaign = _validation([adversarial_item(round=round) for _ in range(3)], k=3)
    people = annotators(3, "agree")
    for n, person in enumerate(people):
        while (lease := assignment_next(campaign=campaign, annotator=person)) is not None:
            answer = CORRECT if (n + lease.campaign_item_id) % 3 else FLAGGED
            judgment_submit(annotator=person, assignment=lease, answer=answer[0], **answer[1])
    client.force_login(curator)
    response = client.get(reverse("agreement:detail", args=[campaign.name]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Fleiss" in html and "Incorrect" in html


def test_the_curators_pages_read_a_validation_campaign(client, curator):
    round = adversarial_round(rule=ValidationRule.ANLI)
    items = [adversarial_item(round=round) for _ in range(2)]
    campaign = _validation(items, k=2)
    first, second = annotators(2, "cur")
    _answer(campaign, [first, second], [CORRECT, FLAGGED])  # the newest item: a third vote asked
    client.force_login(curator)
    detail = client.get(reverse("annotation:campaign-detail", args=[campaign.name]))
    assert detail.status_code == 200
    adjudicate = client.get(reverse("annotation:campaign-adjudicate", args=[campaign.name]) + "?show=all")
    html = adjudicate.content.decode()
    assert adjudicate.status_code == 200
    # the item in full, the writer's answers, and the validator's reason for the flag
    assert "Writer&#x27;s answers" in html and "sentence: A (the trophy); twin: B (the suitcase)" in html
    assert "both candidates fit" in html
    assert "2/3 judgments" in html  # the item's own K: its first two answers disagree
    dashboard = client.get(reverse("annotation:dashboard"))
    assert dashboard.status_code == 200
    export = client.get(reverse("annotation:campaign-export", args=[campaign.name, "csv"]))
    assert export.status_code == 200
    assert b"flagged" in b"".join(export.streaming_content)


def test_a_curators_decision_on_a_flagged_item_sets_its_validation():
    item = adversarial_item()
    campaign = _validation([item], k=2)
    _answer(campaign, annotators(2, "dec"), [CORRECT, FLAGGED])
    campaign_aggregate(campaign=campaign)
    item.refresh_from_db()
    assert item.validation == ValidationStatus.FLAGGED
    row = CampaignItem.objects.get(campaign=campaign)
    curator = annotators(1, "boss")[0]
    result = adjudication_record(
        item=row, curator=curator, decision="correct", note="the reason is no reason"
    )
    assert result.applied and result.label == ValidationStatus.VALIDATED
    item.refresh_from_db()
    assert item.validation == ValidationStatus.VALIDATED and item.votes == {
        "correct": 1,
        "incorrect": 0,
        "flagged": 1,
    }
