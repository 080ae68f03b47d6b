"""AfLite (evaluation.audit.aflite): the planted leak goes, the rest stays, the batched
models agree with the plain scikit-learn loop, bad input is refused by name.

Small seeded sets (evaluation.audit.synthetic); no database."""

import itertools
import subprocess
import sys
from pathlib import Path
from typing import cast

import numpy as np
import pytest

from evaluation.audit.aflite import AfliteParams, aflite, draw_partitions
from evaluation.audit.errors import AuditInputError
from evaluation.audit.reference import aflite_reference
from evaluation.audit.synthetic import leaky_set
from tests.evaluation.audit_threads import one_torch_thread  # noqa: F401 (autouse)

ROOT = Path(__file__).resolve().parents[2]

# t far below |S| keeps the m classifiers' training sets nearly disjoint, so an item
# without the token gets independent guesses (the paper's t = 10,000 of WinoGrande's 40k+).
SMALL = AfliteParams(t=200, target_n=1000)


def test_aflite_removes_the_items_a_token_gives_away_and_few_others():
    data = leaky_set(2000, leak=0.3, seed=0)
    result = aflite(data.features, data.labels, params=SMALL)
    leaked_removed = (~result.kept[data.leaked]).mean()
    others_removed = (~result.kept[~data.leaked]).mean()
    assert leaked_removed >= 0.9
    assert others_removed <= 0.1
    assert result.stopped == "early"


def test_aflite_finds_the_token_on_the_right_option_of_multiple_choice_items():
    data = leaky_set(2000, leak=0.3, options=2, seed=1)
    result = aflite(data.features, data.labels, params=SMALL)
    assert (~result.kept[data.leaked]).mean() >= 0.9
    assert (~result.kept[~data.leaked]).mean() <= 0.1


def test_aflite_removes_few_items_from_a_set_without_a_leak():
    data = leaky_set(2000, leak=0.0, seed=2)
    result = aflite(data.features, data.labels, params=SMALL)
    assert (~result.kept).mean() <= 0.1
    assert result.stopped == "early"


@pytest.mark.parametrize("options", [None, 2])
def test_aflite_matches_the_scikit_learn_loop_item_by_item(options):
    data = leaky_set(600, dim=16, leak=0.3, options=options, seed=3)
    params = AfliteParams(t=60, k=120, target_n=300, seed=7)
    batched = aflite(data.features, data.labels, params=params)
    plain = aflite_reference(data.features, data.labels, params=params)
    assert len(batched.iterations) >= 2  # more than one pass compared
    assert np.abs(batched.scores - plain.scores).max() <= 0.02
    assert np.array_equal(batched.removed_in, plain.removed_in)
    counts = [(i.items_in, i.at_or_above_tau, i.removed) for i in batched.iterations]
    assert counts == [(i.items_in, i.at_or_above_tau, i.removed) for i in plain.iterations]


def test_the_same_inputs_give_the_same_removals_and_another_seed_other_partitions():
    data = leaky_set(1000, dim=16, leak=0.3, seed=4)
    params = AfliteParams(t=100, k=200, target_n=500, seed=11)
    first = aflite(data.features, data.labels, params=params)
    second = aflite(data.features, data.labels, params=params)
    assert np.array_equal(first.removed_in, second.removed_in)
    assert np.array_equal(first.scores, second.scores)
    rng_a, rng_b = np.random.default_rng(11), np.random.default_rng(12)
    assert not np.array_equal(draw_partitions(rng_a, 1000, 64, 100), draw_partitions(rng_b, 1000, 64, 100))


def test_a_partition_trains_on_the_t_smallest_keys_equal_keys_in_item_order():
    class Keys:  # a generator that hands out the keys given
        def __init__(self, keys):
            self.keys = np.asarray(keys, dtype=float)

        def random(self, shape):
            return self.keys.reshape(shape)

    given = Keys([[0.5, 0.1, 0.5, 0.3, 0.5, 0.9], [0.2, 0.2, 0.2, 0.2, 0.1, 0.7]])
    train = draw_partitions(cast(np.random.Generator, given), 6, 2, 3)
    assert train.tolist() == [
        [True, True, False, True, False, False],
        [True, True, False, False, True, False],
    ]
    keys = np.random.default_rng(5).random((64, 1000))
    stable = np.zeros((64, 1000), dtype=bool)
    np.put_along_axis(stable, np.argsort(keys, axis=1, kind="stable")[:, :100], True, axis=1)
    assert np.array_equal(draw_partitions(np.random.default_rng(5), 1000, 64, 100), stable)


def test_each_item_carries_its_score_and_the_iteration_that_removed_it():
    data = leaky_set(1000, dim=16, leak=0.3, seed=5)
    result = aflite(data.features, data.labels, params=AfliteParams(t=100, k=150, target_n=500))
    assert result.removed_in[result.kept].tolist() == [0] * int(result.kept.sum())
    for it in result.iterations:
        removed_here = result.removed_in == it.iteration
        assert removed_here.sum() == it.removed == min(150, it.at_or_above_tau)
        assert (result.scores[removed_here] >= 0.75).all()
    assert sum(it.removed for it in result.iterations) == (~result.kept).sum()
    assert result.iterations[0].items_in == 1000
    assert all(b.items_in == a.items_in - a.removed for a, b in itertools.pairwise(result.iterations))
    assert set(result.removed.tolist()) == set(np.flatnonzero(result.removed_in > 0).tolist())
    # every pass but the last removed a full slice of k; the last fewer (early stop)
    assert all(it.removed == 150 for it in result.iterations[:-1])
    assert result.iterations[-1].removed < 150


def test_the_loop_stops_once_the_set_reaches_the_target_size():
    data = leaky_set(1000, dim=16, leak=0.6, seed=6)
    result = aflite(data.features, data.labels, params=AfliteParams(t=100, k=100, target_n=800))
    assert result.stopped == "target"
    assert result.kept.sum() <= 800
    assert result.kept.sum() > 800 - 100


def test_every_parameter_and_the_seed_are_recorded_with_t_and_n_resolved():
    data = leaky_set(1000, dim=16, leak=0.3, seed=7)
    result = aflite(data.features, data.labels, params=AfliteParams(k=300, seed=5))
    assert result.params == {
        "m": 64,
        "t": 249,
        "k": 300,
        "tau": 0.75,
        "target_n": 250,
        "seed": 5,
        "c": 1.0,
        "max_iter": 500,
        "tol": 1e-7,
        "standardize": True,
        "float64": True,
    }
    summary = result.summary()
    assert summary["items"] == 1000 and summary["kept"] + summary["removed"] == 1000
    assert summary["iterations"][0]["items_in"] == 1000


def test_defaults_are_winogrande_settings_with_t_capped_below_the_target_for_small_sets():
    defaults = AfliteParams()
    assert (defaults.m, defaults.k, defaults.tau) == (64, 500, 0.75)
    assert defaults.resolved(40_398).t == 10_000
    assert defaults.resolved(40_398).target_n == 10_099
    small = defaults.resolved(1_000)
    assert small.target_n == 250 and small.t == 249
    assert AfliteParams(target_n=12_000).resolved(40_398).t == 10_000


@pytest.mark.parametrize(
    ("params", "n", "setting"),
    [
        (AfliteParams(target_n=1000), 1000, "target_n"),
        (AfliteParams(target_n=1500), 1000, "target_n"),
        (AfliteParams(t=300, target_n=300), 1000, "t"),
        (AfliteParams(t=500), 1000, "t"),
        (AfliteParams(), 2, "target_n"),
        (AfliteParams(k=0), 1000, "k"),
        (AfliteParams(m=0), 1000, "m"),
        (AfliteParams(tau=0.0), 1000, "tau"),
        (AfliteParams(tau=1.5), 1000, "tau"),
        (AfliteParams(c=0), 1000, "c"),
    ],
)
def test_a_set_too_small_for_the_parameters_is_refused_naming_the_setting(params, n, setting):
    data = leaky_set(n, dim=4, seed=8)
    with pytest.raises(AuditInputError) as refused:
        aflite(data.features, np.arange(n) % 2, params=params)
    assert str(refused.value).startswith(f"{setting}:")


def test_features_without_labels_or_with_one_label_are_refused_naming_the_labels():
    data = leaky_set(100, dim=4, seed=9)
    for labels in (None, np.zeros(100, dtype=int), data.labels[:50], np.full(100, 0.5)):
        with pytest.raises(AuditInputError) as refused:
            aflite(data.features, labels, params=AfliteParams(t=10, target_n=50))
        assert str(refused.value).startswith("labels:")
    for features in (data.features[:, 0], np.full((100, 6), np.nan)):
        with pytest.raises(AuditInputError) as refused:
            aflite(features, data.labels, params=AfliteParams(t=10, target_n=50))
        assert str(refused.value).startswith("features:")


def test_multiple_choice_with_three_options_runs_and_the_reference_says_it_cannot():
    data = leaky_set(600, dim=8, leak=0.3, options=3, seed=10)
    params = AfliteParams(t=60, k=100, target_n=300)
    result = aflite(data.features, data.labels, params=params)
    assert (~result.kept[data.leaked]).mean() >= 0.9
    with pytest.raises(AuditInputError, match="2 options"):
        aflite_reference(data.features, data.labels, params=params)


def test_the_modules_the_web_layer_imports_load_without_torch():
    code = (
        "import sys\n"
        "import evaluation.audit.aflite, evaluation.audit.baselines, evaluation.audit.cartography\n"
        "import evaluation.audit.data, evaluation.audit.errors, evaluation.audit.synthetic\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
