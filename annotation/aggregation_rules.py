"""The papers' aggregation rules (DESIGN section 5) as pure functions. No Django here."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from annotation.answers import KNOWLEDGE_TYPES, VALIDATION_CORRECT, VALIDATION_FLAGGED, VALIDATION_INCORRECT


def unanimous_yes(votes: Sequence[str], yes: str) -> bool:
    """Trichelair et al.: switchable / associative only if every annotator says so."""
    return bool(votes) and all(v == yes for v in votes)


def switchable(votes: Sequence[str]) -> bool:
    return unanimous_yes(votes, "switchable")


def associative(votes: Sequence[str]) -> bool:
    return unanimous_yes(votes, "associative")


@dataclass(frozen=True)
class Plausibility:
    score: float
    label: str  # positive / acceptable / negative


def plausibility(votes: Sequence[str]) -> Plausibility:
    """WinoWhy: score = share of plausible votes; >= 4/5 positive, <= 1/5 negative,
    acceptable between. Exact fractions, so 4 of 5 is never lost to rounding."""
    if not votes:
        raise ValueError("plausibility of an item without votes")
    share = Fraction(sum(1 for v in votes if v == "plausible"), len(votes))
    if share >= Fraction(4, 5):
        label = "positive"
    elif share <= Fraction(1, 5):
        label = "negative"
    else:
        label = "acceptable"
    return Plausibility(score=float(share), label=label)


def explanation_plausible(votes: Sequence[str]) -> bool:
    """A model's ComVE explanation is plausible when more than half of its votes say so.

    The task proposal (paper 003, "Quality Control") asks at least three testees and
    rewrites a subtask-3 answer "considered unsuitable by more than half testees"; it scores
    no 0-3 scale. With an odd K (the default, 3) the two rules agree; with an even K a tie
    counts as not plausible here, where the proposal would keep the answer."""
    if not votes:
        raise ValueError("plausibility of an explanation without votes")
    return 2 * sum(1 for v in votes if v == "plausible") > len(votes)


def majority(votes: Iterable[str], order: Sequence[str] = KNOWLEDGE_TYPES) -> tuple[str, bool]:
    """The most frequent vote and whether it was a tie (a tie goes to the first in
    ``order``, so the result never depends on the order of the votes)."""
    counts = Counter(votes)
    if not counts:
        raise ValueError("majority of no votes")
    best = max(counts.values())
    top = [v for v in counts if counts[v] == best]
    rank = {v: i for i, v in enumerate(order)}
    top.sort(key=lambda v: (rank.get(v, len(rank)), v))
    return top[0], len(top) > 1


def major_types(votes_per_reason: Iterable[Sequence[str]]) -> list[str]:
    """WinoWhy 2.2: a question's major knowledge type = the type with most votes over its
    valid reasons; ties give several types (sorted)."""
    total: Counter[str] = Counter()
    for votes in votes_per_reason:
        total.update(votes)
    if not total:
        return []
    best = max(total.values())
    return sorted(t for t, n in total.items() if n == best)


@dataclass(frozen=True)
class ComVECheck:
    wrong: int
    total: int
    needs_rewrite: bool


def comve_check(answers: Sequence[str], key: str) -> ComVECheck:
    """ComVE 3.1: an item is rewritten when more than half of the checkers answer wrong."""
    wrong = sum(1 for a in answers if a != key)
    return ComVECheck(wrong=wrong, total=len(answers), needs_rewrite=wrong * 2 > len(answers))


#: A validator's answers on an adversarial item (ANLI's validation; issue 27).
CORRECT, INCORRECT, FLAGGED = VALIDATION_CORRECT, VALIDATION_INCORRECT, VALIDATION_FLAGGED
#: What validation makes of an item (``annotation.models.ValidationStatus`` values).
VALIDATED, REJECTED = "validated", "rejected"


def validation_unanimous(votes: Sequence[str], k: int) -> str:
    """Winnow's default: validated when K answers say "correct" (all of them); rejected
    when more than half say "incorrect"; otherwise flagged, for the curator."""
    counts = Counter(votes)
    if len(votes) >= k and counts[CORRECT] == len(votes):
        return VALIDATED
    if counts[INCORRECT] * 2 > len(votes):
        return REJECTED
    return FLAGGED


def validation_anli(votes: Sequence[str]) -> str:
    """ANLI (Nie et al. 2020, 2.1): two validators; on disagreement a third, and the
    majority decides (correct: validated, incorrect: rejected, flagged or no majority:
    flagged)."""
    counts = Counter(votes)
    if not votes:
        return FLAGGED
    answer, n = counts.most_common(1)[0]
    if n * 2 <= len(votes):  # no majority (three different answers)
        return FLAGGED
    return {CORRECT: VALIDATED, INCORRECT: REJECTED}.get(answer, FLAGGED)


def anli_needs_third(votes: Sequence[str]) -> bool:
    """ANLI: the first two validators disagree, so a third one answers."""
    return len(votes) >= 2 and votes[0] != votes[1]
