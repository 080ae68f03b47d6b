"""Significance of accuracies: lucky draws, Wilson intervals, McNemar's test.

The statistics come from statsmodels (``binom_test``, ``proportion_confint``,
``mcnemar``); this module fixes how Winnow calls them and what it reports.

Lucky draw (Trichelair et al. 2019, appendix B): on a two-candidate task a guesser that
flips a fair coin scores ``X ~ Binomial(n, 0.5)``; the chance it does at least as well
as a system with ``k`` of ``n`` right is ``P(X >= k)`` (the one-sided binomial test), and
the chance that the best of ``m`` independent guessers (e.g. m random seeds or m tried
models) does is ``1 - (1 - P(X >= k))**m``. For 151 of 273: 4.50% for one guesser, 36.9%
(more than one in three) for the best of ten.
"""

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.proportion import binom_test, proportion_confint


def lucky_draw(correct: int, n: int, p: float = 0.5) -> float:
    """P(X >= correct) for X ~ Binomial(n, p): a random guesser scores at least this well."""
    if not 0 <= correct <= n:
        raise ValueError(f"correct must be between 0 and n={n}, got {correct}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be a probability, got {p}")
    return float(binom_test(correct, n, prop=p, alternative="larger"))


def best_of(probability: float, m: int) -> float:
    """Chance that at least one of ``m`` independent tries has an event of ``probability``."""
    if m < 1:
        raise ValueError(f"m must be at least 1, got {m}")
    return 1.0 - (1.0 - probability) ** m


def wilson_interval(correct: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion (no continuity correction): statsmodels'
    ``proportion_confint(method="wilson")``."""
    if n <= 0:
        raise ValueError("n must be positive")
    if not 0 <= correct <= n:
        raise ValueError(f"correct must be between 0 and n={n}, got {correct}")
    low, high = proportion_confint(correct, n, alpha=1 - confidence, method="wilson")
    return float(low), float(high)


def wilson_intervals(
    correct: npt.ArrayLike, n: npt.ArrayLike, confidence: float = 0.95
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """:func:`wilson_interval` for each pair of counts (NaN where ``n`` is 0).

    One call per pair, not statsmodels' array form: that one differs in the last bit, and a
    table's interval must equal the one in the run's ``results.json``."""
    k = np.asarray(correct, dtype=np.int64).reshape(-1)
    total = np.asarray(n, dtype=np.int64).reshape(-1)
    if k.shape != total.shape:
        raise ValueError(f"{k.size} counts for {total.size} totals")
    pairs = [
        wilson_interval(int(c), int(t), confidence) if t else (np.nan, np.nan)
        for c, t in zip(k, total, strict=True)
    ]
    low = np.array([p[0] for p in pairs], dtype=np.float64)
    high = np.array([p[1] for p in pairs], dtype=np.float64)
    return low, high


@dataclass(frozen=True)
class McNemarResult:
    """``only_a``: items run A got right and run B wrong; ``only_b`` the reverse."""

    n: int
    both_right: int
    both_wrong: int
    only_a: int
    only_b: int
    method: str
    statistic: float
    p_value: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


EXACT_BELOW = 25


def mcnemar(
    a_correct: Sequence[bool], b_correct: Sequence[bool], *, exact_below: int = EXACT_BELOW
) -> McNemarResult:
    """McNemar's test on paired per-item correctness of two runs.

    statsmodels' ``mcnemar`` on the 2x2 table ``[[both_right, only_a], [only_b, both_wrong]]``:
    with fewer than ``exact_below`` discordant pairs the exact two-sided binomial test
    (``exact=True``, statistic = min(only_a, only_b)); otherwise chi-squared with continuity
    correction, (|b - c| - 1)^2 / (b + c), one degree of freedom (``exact=False,
    correction=True``). No discordant pair: p = 1.
    """
    if len(a_correct) != len(b_correct):
        raise ValueError(f"the runs have {len(a_correct)} and {len(b_correct)} items; pair them first")
    pairs = list(zip((bool(x) for x in a_correct), (bool(x) for x in b_correct), strict=True))
    both_right = sum(1 for a, b in pairs if a and b)
    both_wrong = sum(1 for a, b in pairs if not a and not b)
    only_a = sum(1 for a, b in pairs if a and not b)
    only_b = sum(1 for a, b in pairs if b and not a)
    discordant = only_a + only_b
    table = [[both_right, only_a], [only_b, both_wrong]]
    if discordant == 0:
        method, statistic, p_value = "exact", 0.0, 1.0
    else:
        method = "exact" if discordant < exact_below else "chi2"
        result = sm_mcnemar(table, exact=method == "exact", correction=True)
        statistic, p_value = float(result.statistic), float(result.pvalue)
    return McNemarResult(
        n=len(pairs),
        both_right=both_right,
        both_wrong=both_wrong,
        only_a=only_a,
        only_b=only_b,
        method=method,
        statistic=float(statistic),
        p_value=p_value,
    )


def accuracy_significance(correct: int, n: int, *, guessers: int = 10, chance: float = 0.5) -> dict[str, Any]:
    """The figures shown beside an accuracy: Wilson 95% interval and the lucky-draw odds."""
    if n == 0:
        return {"n": 0}
    low, high = wilson_interval(correct, n)
    one = lucky_draw(correct, n, chance)
    return {
        "n": n,
        "correct": correct,
        "wilson_95": [low, high],
        "chance": chance,
        "lucky_draw": one,
        "guessers": guessers,
        "lucky_draw_best_of": best_of(one, guessers),
    }
