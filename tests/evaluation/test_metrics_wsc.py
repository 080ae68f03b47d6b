import pytest

from evaluation.metrics.wsc import WscOutcome, switch_result, wsc_metrics


def _outcomes() -> list[WscOutcome]:
    # Hand-built: 6 questions, gold/predicted candidate indexes.
    return [
        # switchable, right before; after the switch it picks the other candidate: right, consistent
        WscOutcome(
            "q0",
            gold=0,
            predicted=0,
            switchable=True,
            switched_predicted=1,
            associative=False,
            knowledge_types=("Property",),
        ),
        # switchable, right before, keeps the same candidate after: wrong after, inconsistent
        WscOutcome(
            "q1",
            gold=1,
            predicted=1,
            switchable=True,
            switched_predicted=1,
            associative=True,
            knowledge_types=("Object", "Spatial"),
        ),
        # switchable, wrong before, changes: wrong after too (it moved to the old gold), consistent
        WscOutcome(
            "q2",
            gold=0,
            predicted=1,
            switchable=True,
            switched_predicted=0,
            associative=False,
            knowledge_types=("Object",),
        ),
        # not switchable, right
        WscOutcome(
            "q3", gold=1, predicted=1, switchable=False, associative=True, knowledge_types=("Object",)
        ),
        # not switchable, wrong
        WscOutcome(
            "q4",
            gold=0,
            predicted=1,
            switchable=False,
            associative=False,
            knowledge_types=("Property", "Object"),
        ),
        # labels unknown, right
        WscOutcome("q5", gold=0, predicted=0),
    ]


def test_accuracy_on_all_counts_every_question():
    m = wsc_metrics(_outcomes())
    assert m["all"] == {"n": 6, "correct": 4, "accuracy": 4 / 6}


def test_switchable_subset_before_after_and_consistency_by_hand():
    m = wsc_metrics(_outcomes())["switchable"]
    assert m["n"] == 3
    assert m["accuracy_before"] == pytest.approx(2 / 3)  # q0, q1
    assert m["accuracy_after"] == pytest.approx(1 / 3)  # only q0
    assert m["changed"] == 2  # q0, q2 change their candidate
    assert m["consistency"] == pytest.approx(2 / 3)


def test_non_switchable_associative_and_non_associative_subsets():
    m = wsc_metrics(_outcomes())
    assert m["non_switchable"] == {"n": 2, "correct": 1, "accuracy": 0.5}
    assert m["associative"] == {"n": 2, "correct": 2, "accuracy": 1.0}  # q1, q3
    assert m["non_associative"] == {"n": 3, "correct": 1, "accuracy": 1 / 3}  # q0 right, q2 q4 wrong


def test_knowledge_types_count_a_question_in_each_of_its_types():
    m = wsc_metrics(_outcomes())
    assert list(m["knowledge_types"]) == ["Property", "Object", "Spatial"]  # the paper's order
    assert m["knowledge_types"]["Property"] == {"n": 2, "correct": 1, "accuracy": 0.5}  # q0, q4
    assert m["knowledge_types"]["Object"] == {"n": 4, "correct": 2, "accuracy": 0.5}  # q1 q2 q3 q4
    assert m["knowledge_types"]["Spatial"] == {"n": 1, "correct": 1, "accuracy": 1.0}


def test_single_versus_multiple_knowledge_types():
    m = wsc_metrics(_outcomes())["type_count"]
    assert m["single"] == {"n": 3, "correct": 2, "accuracy": 2 / 3}  # q0 q2 q3
    assert m["multiple"] == {"n": 2, "correct": 1, "accuracy": 0.5}  # q1 q4
    assert m["none"] == {"n": 1, "correct": 1, "accuracy": 1.0}


def test_an_empty_subset_has_no_accuracy_rather_than_zero():
    m = wsc_metrics([WscOutcome("a", gold=0, predicted=0)])
    assert m["switchable"]["accuracy_before"] is None
    assert m["associative"] == {"n": 0, "correct": 0, "accuracy": None}


def test_explicit_switched_gold_overrides_the_other_candidate():
    # A switch that keeps the answer (unusual, but a release may say so).
    r = switch_result(
        [WscOutcome("a", gold=0, predicted=0, switchable=True, switched_predicted=0, switched_gold=0)]
    )
    assert r.after.correct == 1
    assert r.consistency == 0.0


def test_switchable_item_without_switched_prediction_is_named():
    with pytest.raises(ValueError, match="item q9: switchable but no prediction"):
        wsc_metrics([WscOutcome("q9", gold=0, predicted=0, switchable=True)])


def test_duplicate_item_ids_are_refused():
    with pytest.raises(ValueError, match="duplicate item ids: a"):
        wsc_metrics([WscOutcome("a", gold=0, predicted=0), WscOutcome("a", gold=1, predicted=0)])
