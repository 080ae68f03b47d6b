"""The pure agreement statistics against their references and hand-checked cases."""

import itertools
import math

import krippendorff
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, to_table
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from annotation.agreement import stats as ag

# --------------------------------------------------------------------------- strategies


@st.composite
def full_tables(draw):
    """Items x categories counts with the same number (>= 2) of judgments on every item."""
    n_items = draw(st.integers(1, 40))
    n_cats = draw(st.integers(2, 6))
    raters = draw(st.integers(2, 9))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.full(n_cats, draw(st.sampled_from([0.2, 1.0, 5.0]))))
    return rng.multinomial(raters, probs, size=n_items)


@st.composite
def reliability_matrices(draw):
    """Raters x units matrices of nominal values with missing answers (NaN)."""
    n_raters = draw(st.integers(2, 7))
    n_units = draw(st.integers(2, 30))
    values = draw(
        arrays(np.float64, (n_raters, n_units), elements=st.sampled_from([0.0, 1.0, 2.0, 3.0, np.nan]))
    )
    return values


def _table_from_reliability(rel: np.ndarray) -> np.ndarray:
    r, i = np.nonzero(~np.isnan(rel))
    return ag.count_table(i, rel[r, i].astype(np.int64), rel.shape[1], 4)


# --------------------------------------------------------------------------- Fleiss' kappa


@settings(max_examples=300, deadline=None)
@given(full_tables())
def test_fleiss_kappa_equals_statsmodels_on_random_tables(table):
    with np.errstate(invalid="ignore", divide="ignore"):
        reference = sm_fleiss_kappa(table, method="fleiss")
    assume(np.isfinite(reference))
    assert ag.fleiss_kappa(table) == pytest.approx(reference, abs=1e-12, rel=0)


@settings(max_examples=100, deadline=None)
@given(full_tables())
def test_fleiss_kappa_is_undefined_exactly_where_statsmodels_gives_nan(table):
    with np.errstate(invalid="ignore", divide="ignore"):
        reference = sm_fleiss_kappa(table, method="fleiss")
    if np.isfinite(reference):
        assert math.isfinite(ag.fleiss_kappa(table))
    else:
        with pytest.raises(ag.UndefinedAgreement):
            ag.fleiss_kappa(table)


def test_fleiss_kappa_from_codes_equals_statsmodels_aggregate_raters():
    rng = np.random.default_rng(7)
    ratings = rng.integers(0, 3, size=(200, 4))  # 200 items, 4 raters each
    sm_table, _ = aggregate_raters(ratings, n_cat=3)
    items = np.repeat(np.arange(200), 4)
    ours = ag.count_table(items, ratings.reshape(-1), 200, 3)
    assert np.array_equal(ours, sm_table)
    assert ag.fleiss_kappa(ours) == pytest.approx(sm_fleiss_kappa(sm_table), abs=1e-12, rel=0)


def test_fleiss_kappa_of_the_wikipedia_example():
    # en.wikipedia.org/wiki/Fleiss'_kappa, 10 subjects x 5 categories, 14 raters: kappa 0.210
    table = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    assert ag.fleiss_kappa(table) == pytest.approx(0.20993070442195522, abs=1e-12)
    assert round(ag.fleiss_kappa(table), 3) == 0.210


def test_fleiss_kappa_with_varying_raters_reduces_to_fleiss_on_the_complete_items():
    complete = np.array([[3, 0], [2, 1], [0, 3], [1, 2]])
    # one item with a single judgment carries no pair and must not change anything
    with_single = np.vstack([complete, [[1, 0]]])
    assert ag.fleiss_kappa(with_single) == pytest.approx(sm_fleiss_kappa(complete), abs=1e-12)


def test_perfect_agreement_over_two_categories_gives_kappa_one():
    assert ag.fleiss_kappa([[3, 0], [0, 3], [3, 0]]) == pytest.approx(1.0)


# --------------------------------------------------------------------------- pairwise agreement


def test_pairwise_agreement_hand_checked():
    # item 1: 5 raters, 4 say A -> pairs agreeing C(4,2)=6 of C(5,2)=10 -> 0.6
    # item 2: 3 raters all B -> 1.0
    # item 3: 2 raters disagree -> 0.0
    # item 4: 1 rater -> no pair, left out
    table = [[4, 1], [0, 3], [1, 1], [1, 0]]
    assert ag.pairwise_agreement(table) == pytest.approx((0.6 + 1.0 + 0.0) / 3, abs=1e-15)


def test_pairwise_agreement_equals_brute_force_over_pairs():
    rng = np.random.default_rng(3)
    answers = [list(rng.integers(0, 3, size=rng.integers(2, 7))) for _ in range(60)]
    brute = np.mean([np.mean([a == b for a, b in itertools.combinations(item, 2)]) for item in answers])
    items = np.concatenate([[i] * len(a) for i, a in enumerate(answers)])
    cats = np.concatenate(answers)
    assert ag.pairwise_agreement(ag.count_table(items, cats)) == pytest.approx(brute, abs=1e-12)


def test_winowhy_pairwise_of_a_four_to_one_reason_is_sixty_percent():
    assert ag.pairwise_agreement([[4, 1]]) == pytest.approx(0.6)


# --------------------------------------------------------------------------- Krippendorff's alpha


@settings(max_examples=300, deadline=None)
@given(reliability_matrices())
def test_krippendorff_alpha_equals_the_krippendorff_package(rel):
    table = _table_from_reliability(rel)
    pairable = table.sum(axis=1) >= 2
    assume(pairable.any())
    assume(np.count_nonzero(table[pairable].sum(axis=0)) >= 2)
    reference = krippendorff.alpha(reliability_data=rel, level_of_measurement="nominal")
    assert ag.krippendorff_alpha_nominal(table) == pytest.approx(reference, abs=1e-9, rel=0)


def test_krippendorff_alpha_of_krippendorffs_own_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha", nominal example: alpha = 0.743
    nan = np.nan
    rel = np.array(
        [
            [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
            [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
        ]
    )
    r, i = np.nonzero(~np.isnan(rel))
    table = ag.count_table(i, rel[r, i].astype(np.int64), 12, 6)
    assert ag.krippendorff_alpha_nominal(table) == pytest.approx(0.743, abs=5e-4)
    assert ag.krippendorff_alpha_nominal(table) == pytest.approx(
        krippendorff.alpha(rel, level_of_measurement="nominal"), abs=1e-12
    )


# --------------------------------------------------------------------------- Cohen's kappa


def test_cohen_kappa_hand_checked():
    # two raters, 10 items: yes/yes 4, yes/no 1, no/yes 1, no/no 4
    # po = 0.8, pe = 0.5*0.5 + 0.5*0.5 = 0.5 -> kappa = 0.6
    a = [1, 1, 1, 1, 1, 0, 0, 0, 0, 0]
    b = [1, 1, 1, 1, 0, 1, 0, 0, 0, 0]
    items = np.concatenate([np.arange(10), np.arange(10)])
    raters = np.array([0] * 10 + [1] * 10)
    [pair] = ag.cohen_kappa_pairs(items, raters, np.array(a + b))
    assert (pair.rater_a, pair.rater_b, pair.items) == (0, 1, 10)
    assert pair.observed == pytest.approx(0.8)
    assert pair.kappa == pytest.approx(0.6, abs=1e-12)


def test_cohen_kappa_uses_only_items_both_raters_labelled_and_equals_sklearn():
    rng = np.random.default_rng(11)
    rel = rng.integers(0, 3, size=(4, 80)).astype(float)
    rel[rng.random(rel.shape) < 0.25] = np.nan
    r, i = np.nonzero(~np.isnan(rel))
    pairs = ag.cohen_kappa_pairs(i, r, rel[r, i].astype(np.int64), 3)
    assert {(p.rater_a, p.rater_b) for p in pairs} == set(itertools.combinations(range(4), 2))
    for p in pairs:
        both = ~np.isnan(rel[p.rater_a]) & ~np.isnan(rel[p.rater_b])
        assert p.items == both.sum()
        assert p.kappa == pytest.approx(
            cohen_kappa_score(rel[p.rater_a][both], rel[p.rater_b][both]), abs=1e-12
        )


def test_cohen_kappa_of_two_raters_who_only_ever_say_the_same_thing_is_undefined_not_nan():
    [pair] = ag.cohen_kappa_pairs([0, 0, 1, 1], [0, 1, 0, 1], [2, 2, 2, 2])
    assert pair.kappa is None and "single" in (pair.reason or "")
    assert pair.observed == 1.0


# --------------------------------------------------------------------------- majority, gold


def test_majority_agreement_is_leave_one_out_and_skips_ties():
    # item 0: raters 0,1,2 say A,A,B -> r0: others A,B tie -> skipped; r1 same; r2: others A,A -> disagrees
    # item 1: raters 0,1,2 say B,B,B -> everyone agrees with the others' majority
    # item 2: rater 0 alone -> not compared
    items = [0, 0, 0, 1, 1, 1, 2]
    raters = [0, 1, 2, 0, 1, 2, 0]
    cats = [0, 0, 1, 1, 1, 1, 0]
    m = ag.majority_agreement(items, raters, cats)
    assert m.judgments.tolist() == [3, 2, 2]
    assert m.compared.tolist() == [1, 1, 2]
    assert m.agreed.tolist() == [1, 1, 1]
    assert m.shares() == [1.0, 1.0, 0.5]


def test_gold_accuracy_counts_per_rater():
    g = ag.gold_accuracy([0, 0, 1, 2], [True, False, True, True], n_raters=4)
    assert g.seen.tolist() == [2, 1, 1, 0]
    assert g.shares() == [0.5, 1.0, 1.0, None]


# --------------------------------------------------------------------------- bootstrap


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    rng = np.random.default_rng(5)
    table = rng.multinomial(5, [0.7, 0.3], size=300)
    a = ag.table_figures(table, resamples=500, seed=42)
    b = ag.table_figures(table, resamples=500, seed=42)
    c = ag.table_figures(table, resamples=500, seed=43)
    assert a == b
    assert a.fleiss_kappa_ci != c.fleiss_kappa_ci
    for value, ci in (
        (a.fleiss_kappa, a.fleiss_kappa_ci),
        (a.pairwise_agreement, a.pairwise_agreement_ci),
        (a.krippendorff_alpha, a.krippendorff_alpha_ci),
    ):
        assert ci is not None and ci.low is not None and ci.high is not None and value is not None
        assert ci.low < value < ci.high
        assert ci.high - ci.low < 0.3


def test_bootstrap_resamples_items_like_a_plain_loop_would():
    """The multinomial-over-distinct-rows shortcut gives the same distribution as resampling rows."""
    rng = np.random.default_rng(9)
    table = rng.multinomial(4, [0.5, 0.3, 0.2], size=150)
    fast = ag.table_figures(table, resamples=2000, seed=1).fleiss_kappa_ci
    loop_rng = np.random.default_rng(2)
    loop = [ag.fleiss_kappa(table[loop_rng.integers(0, 150, size=150)]) for _ in range(2000)]
    low, high = np.percentile(loop, [2.5, 97.5])
    assert fast is not None and fast.low is not None and fast.high is not None
    assert fast.low == pytest.approx(low, abs=0.03)
    assert fast.high == pytest.approx(high, abs=0.03)


def test_bootstrap_interval_of_a_mean():
    ci = ag.bootstrap_interval([1.0] * 50 + [0.0] * 50, resamples=1000, seed=0)
    assert ci.low is not None and ci.high is not None
    assert 0.35 < ci.low < 0.5 < ci.high < 0.65


# --------------------------------------------------------------------------- degenerate input


def test_empty_input_is_undefined_with_a_reason():
    for fn in (ag.fleiss_kappa, ag.pairwise_agreement, ag.krippendorff_alpha_nominal):
        with pytest.raises(ag.UndefinedAgreement, match="at least two judgments"):
            fn(np.zeros((0, 2), dtype=int))
    figures = ag.table_figures(np.zeros((0, 2), dtype=int))
    assert figures.fleiss_kappa is None and "two judgments" in (figures.fleiss_kappa_reason or "")
    assert figures.fleiss_kappa_ci is None
    assert ag.cohen_kappa_pairs([], [], []) == []
    assert ag.majority_agreement([], [], [], n_raters=2).shares() == [None, None]


def test_one_rater_per_item_is_undefined_with_a_reason():
    with pytest.raises(ag.UndefinedAgreement, match="at least two judgments"):
        ag.fleiss_kappa([[1, 0], [0, 1]])
    assert ag.cohen_kappa_pairs([0, 1], [0, 0], [0, 1]) == []


def test_one_category_only_is_undefined_for_kappa_and_alpha_but_pairwise_is_one():
    table = [[3], [3], [3]]
    with pytest.raises(ag.UndefinedAgreement, match="same category"):
        ag.fleiss_kappa(table)
    with pytest.raises(ag.UndefinedAgreement, match="one value"):
        ag.krippendorff_alpha_nominal(table)
    assert ag.pairwise_agreement(table) == 1.0
    figures = ag.table_figures(table, resamples=50)
    assert figures.fleiss_kappa is None and figures.pairwise_agreement == 1.0
    assert figures.fleiss_kappa_ci is not None and figures.fleiss_kappa_ci.low is None
    assert figures.fleiss_kappa_ci.undefined_resamples == 50


def test_all_agree_on_a_single_used_category_among_several_is_undefined_not_nan():
    with pytest.raises(ag.UndefinedAgreement):
        ag.fleiss_kappa([[5, 0, 0], [5, 0, 0]])


def test_category_kappas_are_defined_or_none():
    assert ag.category_kappas([[3, 0, 0], [0, 3, 0], [3, 0, 0]]) == [1.0, 1.0, None]


@pytest.mark.parametrize(
    "table", [[[1, -1]], [[0.5, 1]], [1, 2, 3], [[np.nan, 1]]], ids=["negative", "fraction", "1d", "nan"]
)
def test_malformed_tables_are_a_clear_value_error(table):
    with pytest.raises(ValueError, match="count table"):
        ag.fleiss_kappa(table)


def test_a_rater_answering_an_item_twice_is_refused():
    with pytest.raises(ValueError, match="rater 1 answered item 0 more than once"):
        ag.check_one_answer_per_rater([0, 0], [1, 1])
    with pytest.raises(ValueError, match="more than once"):
        ag.encode(["x", "x"], ["r1", "r1"], ["a", "b"])
    with pytest.raises(ValueError, match="more than once"):
        ag.cohen_kappa_pairs([0, 0, 0], [0, 0, 1], [0, 1, 1])


def test_encode_maps_labels_to_codes_in_a_fixed_category_order():
    codes = ag.encode(
        ["i2", "i1", "i2"], ["bob", "ann", "ann"], ["no", "yes", "yes"], categories=["yes", "no"]
    )
    assert codes.items == ["i1", "i2"] and codes.raters == ["ann", "bob"]
    assert codes.categories == ["yes", "no"]
    assert codes.table().tolist() == [[1, 0], [1, 1]]
    with pytest.raises(ValueError, match="outside the categories"):
        ag.encode(["i"], ["r"], ["maybe"], categories=["yes", "no"])


# --------------------------------------------------------------------------- brute-force properties


@st.composite
def ragged_judgments(draw):
    """Items with 0..6 judgments each, by distinct raters from a pool of 6, 3 categories."""
    n_items = draw(st.integers(1, 25))
    rows = []
    for item in range(n_items):
        raters = draw(st.lists(st.integers(0, 5), unique=True, max_size=6))
        for rater in raters:
            rows.append((item, rater, draw(st.integers(0, 2))))
    assume(rows)
    items, raters, cats = (np.array(col, dtype=np.int64) for col in zip(*rows, strict=True))
    return items, raters, cats


@settings(max_examples=200, deadline=None)
@given(ragged_judgments())
def test_pairwise_agreement_equals_brute_force_with_ragged_items(data):
    items, _, cats = data
    shares = []
    for item in np.unique(items):
        answers = cats[items == item].tolist()
        if len(answers) >= 2:
            pairs = list(itertools.combinations(answers, 2))
            shares.append(sum(a == b for a, b in pairs) / len(pairs))
    table = ag.count_table(items, cats, int(items.max()) + 1, 3)
    if not shares:
        with pytest.raises(ag.UndefinedAgreement):
            ag.pairwise_agreement(table)
    else:
        assert ag.pairwise_agreement(table) == pytest.approx(np.mean(shares), abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(ragged_judgments())
def test_majority_agreement_equals_a_plain_loop(data):
    items, raters, cats = data
    compared, agreed = np.zeros(6, int), np.zeros(6, int)
    for j in range(len(items)):
        others = [int(c) for k, c in enumerate(cats) if items[k] == items[j] and k != j]
        if not others:
            continue
        counts = np.bincount(others, minlength=3)
        if (counts == counts.max()).sum() == 1:
            compared[raters[j]] += 1
            agreed[raters[j]] += int(cats[j] == counts.argmax())
    m = ag.majority_agreement(items, raters, cats, n_raters=6, n_categories=3)
    assert m.compared.tolist() == compared.tolist()
    assert m.agreed.tolist() == agreed.tolist()


@settings(max_examples=100, deadline=None)
@given(ragged_judgments())
def test_cohen_kappa_pairs_equal_sklearn_on_common_items(data):
    items, raters, cats = data
    answer = {(int(i), int(r)): int(c) for i, r, c in zip(items, raters, cats, strict=True)}
    for p in ag.cohen_kappa_pairs(items, raters, cats, 3):
        common = sorted(i for (i, r) in answer if r == p.rater_a and (i, p.rater_b) in answer)
        a = [answer[(i, p.rater_a)] for i in common]
        b = [answer[(i, p.rater_b)] for i in common]
        assert p.items == len(common)
        if p.kappa is None:
            assert len(set(a) | set(b)) == 1
        else:
            with np.errstate(invalid="ignore", divide="ignore"):
                assert p.kappa == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(ragged_judgments())
def test_cohen_kappa_pairs_equal_statsmodels_cohens_kappa_on_common_items(data):
    items, raters, cats = data
    answer = {(int(i), int(r)): int(c) for i, r, c in zip(items, raters, cats, strict=True)}
    for p in ag.cohen_kappa_pairs(items, raters, cats, 3):
        common = sorted(i for (i, r) in answer if r == p.rater_a and (i, p.rater_b) in answer)
        pairs = np.array([[answer[(i, p.rater_a)], answer[(i, p.rater_b)]] for i in common])
        confusion, _ = to_table(pairs, bins=np.arange(4))
        with np.errstate(invalid="ignore", divide="ignore"):
            reference = cohens_kappa(confusion, return_results=False)
        if p.kappa is None:
            assert not np.isfinite(reference)  # statsmodels: 0/0
        else:
            assert p.kappa == pytest.approx(reference, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(full_tables())
def test_category_kappa_equals_statsmodels_on_the_collapsed_table(table):
    ours = ag.category_kappas(table)
    n = table.sum(axis=1)
    for j, kappa in enumerate(ours):
        two = np.stack([table[:, j], n - table[:, j]], axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            reference = sm_fleiss_kappa(two)
        if kappa is None:
            assert not np.isfinite(reference)
        else:
            assert kappa == pytest.approx(reference, abs=1e-12)
