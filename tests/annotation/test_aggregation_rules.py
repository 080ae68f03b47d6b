"""The papers' aggregation rules (pure)."""

import pytest

from annotation import aggregation_rules as rules


def test_switchable_and_associative_only_when_unanimous():
    assert rules.switchable(["switchable"] * 3)
    assert not rules.switchable(["switchable", "switchable", "not_switchable"])
    assert not rules.switchable([])
    assert rules.associative(["associative"] * 3)
    assert not rules.associative(["associative", "not_associative", "associative"])


@pytest.mark.parametrize(
    ("plausible", "label"),
    [
        (5, "positive"),
        (4, "positive"),
        (3, "acceptable"),
        (2, "acceptable"),
        (1, "negative"),
        (0, "negative"),
    ],
)
def test_plausibility_thresholds_at_four_and_one_of_five(plausible, label):
    votes = ["plausible"] * plausible + ["implausible"] * (5 - plausible)
    result = rules.plausibility(votes)
    assert result.label == label
    assert result.score == plausible / 5


def test_plausibility_without_votes_is_an_error():
    with pytest.raises(ValueError):
        rules.plausibility([])


def test_majority_breaks_ties_by_the_fixed_order_not_by_vote_order():
    assert rules.majority(["Object", "Object", "Spatial"]) == ("Object", False)
    assert rules.majority(["Spatial", "Spatial", "Property", "Property", "Others"]) == ("Property", True)
    assert rules.majority(["Property", "Property", "Spatial", "Spatial"]) == ("Property", True)


def test_major_types_counts_votes_over_reasons_and_keeps_ties():
    assert rules.major_types([["Object"] * 3 + ["Spatial"] * 2, ["Spatial"] * 5]) == ["Spatial"]
    assert rules.major_types([["Object"] * 5, ["Spatial"] * 5]) == ["Object", "Spatial"]
    assert rules.major_types([]) == []


def test_comve_rewrite_when_more_than_half_wrong():
    assert rules.comve_check(["1:A", "0:A", "1:B"], "1:A").needs_rewrite
    assert not rules.comve_check(["1:A", "1:A", "0:A"], "1:A").needs_rewrite
    assert not rules.comve_check(["1:A", "0:A"], "1:A").needs_rewrite  # exactly half is not more
