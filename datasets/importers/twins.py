"""Find the twins of a Winograd collection (no Django imports).

In WSC273 the two halves of a schema are consecutive questions with opposite answers
that share at least one candidate (usually both: "The trophy ... too big / too small";
sometimes the special word is a candidate itself: "minnow" / "shark"). Questions 252-254
are a triple (George/Eric), so one of them stays without a twin.

The pairing is the best matching on the path of consecutive questions: first as many
pairs as possible, then, among equally many, pairs that share more (the same candidates,
the same text before the pronoun, the same text after). For the triple this pairs the two
questions that share the text before the pronoun (253-254), leaving 252 alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class TwinCandidate:
    key: str
    answer: str
    candidates: tuple[str, str]
    text_before: str
    text_after: str


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def twin_strength(a: TwinCandidate, b: TwinCandidate) -> int | None:
    """None if a and b cannot be twins; else how much they share (higher is stronger)."""
    if a.answer == b.answer:
        return None
    ca = {_norm(c) for c in a.candidates}
    cb = {_norm(c) for c in b.candidates}
    if not ca & cb:
        return None
    strength = 0
    if ca == cb:
        strength += 1
    if _norm(a.text_before) == _norm(b.text_before):
        strength += 2
    if _norm(a.text_after) == _norm(b.text_after):
        strength += 1
    return strength


def find_twins(questions: Sequence[TwinCandidate]) -> list[tuple[str, str]]:
    """Pairs of keys of consecutive questions that are twins (see module docstring)."""
    n = len(questions)
    # best[i] = (pairs, strength) achievable from question i on; take[i]: pair i with i+1
    best: list[tuple[int, int]] = [(0, 0)] * (n + 2)
    take = [False] * (n + 1)
    for i in range(n - 1, -1, -1):
        best[i] = best[i + 1]
        if i + 1 < n:
            strength = twin_strength(questions[i], questions[i + 1])
            if strength is not None:
                option = (best[i + 2][0] + 1, best[i + 2][1] + strength)
                if option > best[i]:
                    best[i] = option
                    take[i] = True
    pairs: list[tuple[str, str]] = []
    i = 0
    while i < n:
        if take[i]:
            pairs.append((questions[i].key, questions[i + 1].key))
            i += 2
        else:
            i += 1
    return pairs
