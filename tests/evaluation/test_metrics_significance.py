import math
import random
from fractions import Fraction
from math import comb

import pytest
from scipy.stats import binomtest
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.proportion import binom_test, proportion_confint

from evaluation.metrics.significance import (
    accuracy_significance,
    best_of,
    lucky_draw,
    mcnemar,
    wilson_interval,
    wilson_intervals,
)


def _exact_tail(k: int, n: int) -> float:
    return float(Fraction(sum(comb(n, i) for i in range(k, n + 1)), 2**n))


def test_lucky_draw_small_cases_by_hand():
    assert lucky_draw(3, 3) == pytest.approx(1 / 8)
    assert lucky_draw(2, 3) == pytest.approx(4 / 8)
    assert lucky_draw(0, 3) == pytest.approx(1.0)
    assert best_of(0.5, 2) == pytest.approx(0.75)
    assert best_of(0.1, 1) == pytest.approx(0.1)


def test_lucky_draw_reproduces_trichelair_appendix_b_for_151_of_273():
    one = lucky_draw(151, 273)
    assert one == pytest.approx(_exact_tail(151, 273), rel=1e-12)
    assert round(one, 4) == 0.0450  # "about 4%": 4.50% exactly
    ten = best_of(one, 10)
    assert ten > 1 / 3  # "more than 1 in 3" for the best of 10
    assert round(ten, 3) == 0.369


def test_lucky_draw_rejects_impossible_counts():
    with pytest.raises(ValueError):
        lucky_draw(5, 4)
    with pytest.raises(ValueError):
        best_of(0.5, 0)


def test_wilson_interval_by_hand_and_against_statsmodels():
    low, high = wilson_interval(5, 10)
    assert (round(low, 4), round(high, 4)) == (0.2366, 0.7634)
    for k, n in [(0, 7), (151, 273), (273, 273), (3, 40)]:
        assert wilson_interval(k, n) == pytest.approx(proportion_confint(k, n, method="wilson"), abs=1e-12)


def test_mcnemar_exact_by_hand_and_against_statsmodels():
    # 5 both right, 3 only A, 10 only B, 2 both wrong
    a = [True] * 5 + [True] * 3 + [False] * 10 + [False] * 2
    b = [True] * 5 + [False] * 3 + [True] * 10 + [False] * 2
    r = mcnemar(a, b)
    assert (r.both_right, r.only_a, r.only_b, r.both_wrong) == (5, 3, 10, 2)
    assert r.method == "exact"
    assert r.p_value == pytest.approx(2 * (1 + 13 + 78 + 286) / 2**13)
    assert r.p_value == pytest.approx(sm_mcnemar([[5, 3], [10, 2]], exact=True).pvalue)


def test_mcnemar_uses_chi2_with_continuity_for_many_discordant_pairs():
    a = [True] * 10 + [False] * 30 + [True] * 50
    b = [False] * 10 + [True] * 30 + [True] * 50
    r = mcnemar(a, b)
    assert r.method == "chi2"
    assert r.statistic == pytest.approx((abs(10 - 30) - 1) ** 2 / 40)
    ref = sm_mcnemar([[50, 10], [30, 0]], exact=False, correction=True)
    assert r.statistic == pytest.approx(ref.statistic)
    assert r.p_value == pytest.approx(ref.pvalue)


def test_mcnemar_identical_runs_are_not_different():
    r = mcnemar([True, False, True], [True, False, True])
    assert r.p_value == 1.0 and r.only_a == r.only_b == 0


def test_mcnemar_refuses_runs_of_different_length():
    with pytest.raises(ValueError, match="pair them first"):
        mcnemar([True], [True, False])


def test_accuracy_significance_bundles_interval_and_lucky_draw():
    s = accuracy_significance(151, 273)
    assert s["lucky_draw"] == pytest.approx(lucky_draw(151, 273))
    assert s["lucky_draw_best_of"] == pytest.approx(best_of(lucky_draw(151, 273), 10))
    assert s["wilson_95"][0] < 151 / 273 < s["wilson_95"][1]


def test_wilson_intervals_for_arrays_equal_statsmodels_and_the_single_interval():
    correct, n = [0, 5, 151, 273, 3, 0], [7, 10, 273, 273, 40, 0]
    low, high = wilson_intervals(correct, n)
    for i, (k, total) in enumerate(zip(correct, n, strict=True)):
        if total == 0:
            assert math.isnan(low[i]) and math.isnan(high[i])  # no interval on an empty subset
            continue
        assert (low[i], high[i]) == wilson_interval(k, total)
        assert (low[i], high[i]) == proportion_confint(k, total, alpha=1 - 0.95, method="wilson")
        assert (low[i], high[i]) == pytest.approx(proportion_confint(k, total, method="wilson"), abs=1e-15)
    with pytest.raises(ValueError):
        wilson_intervals([3], [2])


def test_lucky_draw_is_statsmodels_one_sided_binomial_test_and_scipys():
    for k, n, p in [(151, 273, 0.5), (0, 5, 0.5), (12, 30, 1 / 3), (30, 30, 1 / 3)]:
        assert lucky_draw(k, n, p) == binom_test(k, n, prop=p, alternative="larger")
        assert lucky_draw(k, n, p) == pytest.approx(
            binomtest(k, n, p, alternative="greater").pvalue, rel=1e-9
        )


def test_mcnemar_equals_statsmodels_on_random_pairs_of_runs():
    rng = random.Random(0)
    for _ in range(300):
        n = rng.randint(1, 120)
        a = [rng.random() < 0.6 for _ in range(n)]
        b = [rng.random() < rng.random() for _ in range(n)]
        r = mcnemar(a, b)
        if r.only_a + r.only_b == 0:
            assert r.p_value == 1.0
            continue
        table = [[r.both_right, r.only_a], [r.only_b, r.both_wrong]]
        ref = sm_mcnemar(table, exact=r.method == "exact", correction=True)
        assert (r.statistic, r.p_value) == (float(ref.statistic), float(ref.pvalue))
        assert r.method == ("exact" if r.only_a + r.only_b < 25 else "chi2")
