"""Significance of accuracies: lucky draws, Wilson intervals, McNemar's test.

Lucky draw (Trichelair et al. 2019, appendix B): on a two-candidate task a guesser that
flips a fair coin scores ``X ~ Binomial(n, 0.5)``; the chance it does at least as well
as a system with ``k`` of ``n`` right is ``P(X >= k)``, and the chance that the best of
``m`` independent guessers (e.g. m random seeds or m tried models) does is
``1 - (1 - P(X >= k))**m``. For 151 of 273: 4.50% for one guesser, 36.9% (more than
one in three) for the best of ten.
"""

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from scipy import stats


def lucky_draw(correct: int, n: int, p: float = 0.5) -> float:
    """P(X >= correct) for X ~ Binomial(n, p): a random guesser scores at least this well."""
    if not 0 <= correct <= n:
        raise ValueError(f"correct must be between 0 and n={n}, got {correct}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be a probability, got {p}")
    return float(stats.binom.sf(correct - 1, n, p))


def best_of(probability: float, m: int) -> float:
    """Chance that at least one of ``m`` independent tries has an event of ``probability``."""
    if m < 1:
        raise ValueError(f"m must be at least 1, got {m}")
    return 1.0 - (1.0 - probability) ** m


def wilson_interval(correct: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion (no continuity correction)."""
    if n <= 0:
        raise ValueError("n must be positive")
    if not 0 <= correct <= n:
        raise ValueError(f"correct must be between 0 and n={n}, got {correct}")
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    phat = correct / n
    denom = 1 + z * z / n
    centre = (phat + z * z / (2 * n)) / denom
    half = z * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


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

    With fewer than ``exact_below`` discordant pairs: the exact two-sided binomial test
    (statistic = min(only_a, only_b)); otherwise chi-squared with continuity correction,
    (|b - c| - 1)^2 / (b + c), one degree of freedom. Matches statsmodels' ``mcnemar``
    with ``exact=True`` / ``exact=False, correction=True``.
    """
    if len(a_correct) != len(b_correct):
        raise ValueError(f"the runs have {len(a_correct)} and {len(b_correct)} items; pair them first")
    pairs = list(zip((bool(x) for x in a_correct), (bool(x) for x in b_correct), strict=True))
    both_right = sum(1 for a, b in pairs if a and b)
    both_wrong = sum(1 for a, b in pairs if not a and not b)
    only_a = sum(1 for a, b in pairs if a and not b)
    only_b = sum(1 for a, b in pairs if b and not a)
    discordant = only_a + only_b
    if discordant == 0:
        method, statistic, p_value = "exact", 0.0, 1.0
    elif discordant < exact_below:
        method = "exact"
        statistic = float(min(only_a, only_b))
        p_value = min(1.0, 2.0 * float(stats.binom.cdf(min(only_a, only_b), discordant, 0.5)))
    else:
        method = "chi2"
        statistic = (abs(only_a - only_b) - 1) ** 2 / discordant
        p_value = float(stats.chi2.sf(statistic, 1))
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
