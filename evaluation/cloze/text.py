"""Words of a statement, content words, and the differing span of a statement pair.

Pure Python: no Django, no model. A word keeps its character offsets so a span can be
cut out of the original text and the rest kept byte for byte.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# English function words (the usual NLTK-style list, shipped here so nothing is downloaded).
STOP_WORDS: frozenset[str] = frozenset(
    """
    a about above after again against ain all am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each few for from further had hadn't has hasn't have haven't
    having he he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll
    i'm i've if in into is isn't it it's its itself just let's me might more most must mustn't my
    myself no nor not now of off on once only or other ought our ours ourselves out over own
    same shan't she she'd she'll she's should shouldn't so some such than that that's the their
    theirs them themselves then there there's these they they'd they'll they're they've this
    those through to too under until up very was wasn't we we'd we'll we're we've were weren't
    what what's when when's where where's which while who who's whom why why's will with won't
    would wouldn't you you'd you'll you're you've your yours yourself yourselves also may shall
    s t d ll m o re ve y
    """.split()
)

_WORD_RE = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?|[^\sA-Za-z0-9]")


@dataclass(frozen=True)
class Word:
    text: str
    start: int
    end: int

    @property
    def is_word(self) -> bool:
        """Letters or digits (not punctuation)."""
        return self.text[0].isalnum()

    @property
    def is_content(self) -> bool:
        """A content word: alphabetic and not a stop word."""
        return self.text.replace("'", "").replace("’", "").isalpha() and self.text.lower() not in STOP_WORDS


def split_words(text: str) -> list[Word]:
    """Words and punctuation marks of ``text`` with their character offsets."""
    return [Word(m.group(0), m.start(), m.end()) for m in _WORD_RE.finditer(text)]


def content_word_indexes(words: list[Word]) -> list[int]:
    return [i for i, w in enumerate(words) if w.is_content]


def sentence_length(words: list[Word]) -> int:
    """Number of words, punctuation not counted."""
    return sum(1 for w in words if w.is_word)


@dataclass(frozen=True)
class PairDiff:
    """Where two statements differ: ``prefix`` + (choice 0 | choice 1) + ``suffix``."""

    prefix: str
    suffix: str
    choices: tuple[str, str]
    choice_words: tuple[tuple[str, ...], tuple[str, ...]]
    word_position: int


def pair_diff(sent0: str, sent1: str, *, max_span_words: int = 3) -> tuple[PairDiff | None, str]:
    """The single differing span of two statements, by their common word prefix and suffix.

    Returns ``(diff, "")`` when the statements differ in one run of at most
    ``max_span_words`` words at the same position, else ``(None, reason)``. Words are
    compared case-insensitively; the prefix and suffix text are taken from ``sent0``.
    """
    w0, w1 = split_words(sent0), split_words(sent1)
    k0 = [w.text.lower() for w in w0]
    k1 = [w.text.lower() for w in w1]
    if k0 == k1:
        return None, "identical"
    p = 0
    while p < min(len(k0), len(k1)) and k0[p] == k1[p]:
        p += 1
    s = 0
    while s < min(len(k0), len(k1)) - p and k0[-1 - s] == k1[-1 - s]:
        s += 1
    span0, span1 = w0[p : len(w0) - s], w1[p : len(w1) - s]
    if not span0 or not span1:
        return None, "insertion"  # one statement only adds words: nothing to mask in both
    if not any(w.is_word for w in span0) or not any(w.is_word for w in span1):
        return None, "punctuation"
    if len(span0) > max_span_words or len(span1) > max_span_words:
        return None, "span too long"
    start0, end0 = span0[0].start, span0[-1].end
    start1, end1 = span1[0].start, span1[-1].end
    return (
        PairDiff(
            prefix=sent0[:start0],
            suffix=sent0[end0:],
            choices=(sent0[start0:end0], sent1[start1:end1]),
            choice_words=(
                tuple(w.text for w in span0 if w.is_word),
                tuple(w.text for w in span1 if w.is_word),
            ),
            word_position=p,
        ),
        "",
    )
