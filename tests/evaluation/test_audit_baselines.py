"""Partial-input baselines (evaluation.audit.baselines): a leak is found, no leak is not,
folds keep twins together, the statistics are the significance module's. No database."""

import numpy as np
import pytest

from evaluation.audit.baselines import group_folds, partial_input_baseline
from evaluation.audit.errors import AuditInputError
from evaluation.audit.synthetic import leaky_set
from evaluation.metrics.significance import lucky_draw, wilson_interval


@pytest.mark.parametrize("options", [None, 2])
def test_the_baseline_finds_a_token_that_gives_the_label_away(options):
    data = leaky_set(1000, leak=0.3, options=options, seed=0)
    result = partial_input_baseline(data.features, data.labels, groups=data.groups, seed=1)
    assert result.accuracy >= result.majority_accuracy + 0.08  # 30% right for sure, the rest a coin
    assert result.wilson_low > result.majority_accuracy
    assert result.p_value < 1e-6
    # the leaked items are the ones it gets right
    assert result.right_share[data.leaked].mean() >= 0.95


@pytest.mark.parametrize("options", [None, 2])
def test_the_baseline_finds_nothing_on_a_set_without_a_leak(options):
    data = leaky_set(1000, leak=0.0, options=options, seed=2)
    result = partial_input_baseline(data.features, data.labels, groups=data.groups, seed=3)
    assert result.accuracy < result.majority_accuracy + 0.05
    assert result.p_value > 0.05
    assert result.wilson_low <= result.majority_accuracy


def test_folds_never_split_a_twin_pair_and_stay_balanced():
    data = leaky_set(1001, leak=0.3, seed=4)
    result = partial_input_baseline(data.features, data.labels, groups=data.groups, folds=5, seed=5)
    for group in np.unique(data.groups):
        assert np.unique(result.fold[data.groups == group]).size == 1
    sizes = np.bincount(result.fold, minlength=5)
    assert sizes.max() - sizes.min() <= 2
    assert result.grouped and result.params["grouped"] is True


def test_group_folds_deals_larger_groups_first_and_depends_on_the_seed():
    codes = np.repeat(np.arange(6), [5, 1, 1, 1, 1, 1])  # one schema of 5 items, five singles
    folds = group_folds(codes, 2, np.random.default_rng(0))
    assert np.bincount(folds).tolist() == [5, 5]
    many = np.arange(100) // 2
    a = group_folds(many, 5, np.random.default_rng(1))
    b = group_folds(many, 5, np.random.default_rng(2))
    assert not np.array_equal(a, b)


def test_the_figures_are_the_significance_modules_against_the_majority_rate():
    data = leaky_set(600, leak=0.2, seed=6)
    result = partial_input_baseline(data.features, data.labels, seed=7)
    counts = np.bincount(data.labels)
    assert result.majority_label == int(np.argmax(counts))
    assert result.majority_accuracy == pytest.approx(counts.max() / 600)
    assert result.correct == round(result.accuracy * 600)
    assert (result.wilson_low, result.wilson_high) == wilson_interval(result.correct, 600)
    assert result.p_value == lucky_draw(result.correct, 600, result.majority_accuracy)
    assert result.accuracy == pytest.approx(result.right_share.mean())
    summary = result.summary()
    assert "right_share" not in summary and summary["n"] == 600 and summary["params"]["seed"] == 7


def test_repeats_give_each_item_the_share_of_repeats_it_was_right_in():
    data = leaky_set(400, leak=0.3, seed=8)
    result = partial_input_baseline(data.features, data.labels, repeats=3, seed=9)
    assert len(result.accuracies) == 3
    assert result.accuracy == pytest.approx(np.mean(result.accuracies))
    assert set(np.round(result.right_share * 3, 6).tolist()) <= {0.0, 1.0, 2.0, 3.0}
    assert result.accuracy == pytest.approx(result.right_share.mean())


def test_the_same_seed_gives_the_same_result():
    data = leaky_set(400, leak=0.3, seed=10)
    a = partial_input_baseline(data.features, data.labels, groups=data.groups, seed=11)
    b = partial_input_baseline(data.features, data.labels, groups=data.groups, seed=11)
    assert np.array_equal(a.right_share, b.right_share) and np.array_equal(a.fold, b.fold)


@pytest.mark.parametrize(
    ("kwargs", "setting"),
    [
        ({"folds": 1}, "folds"),
        ({"folds": 500}, "folds"),
        ({"repeats": 0}, "repeats"),
        ({"groups": np.zeros(400)}, "folds"),
        ({"groups": np.arange(10)}, "groups"),
    ],
)
def test_bad_settings_are_refused_naming_the_setting(kwargs, setting):
    data = leaky_set(400, leak=0.3, seed=12)
    with pytest.raises(AuditInputError) as refused:
        partial_input_baseline(data.features, data.labels, **kwargs)
    assert str(refused.value).startswith(f"{setting}:")


def test_no_labels_is_refused():
    data = leaky_set(100, seed=13)
    with pytest.raises(AuditInputError, match="^labels:"):
        partial_input_baseline(data.features, None)
