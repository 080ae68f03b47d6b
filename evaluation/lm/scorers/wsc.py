"""How a candidate is put in place of the pronoun (pure string functions).

The rules follow lm-evaluation-harness's wsc273 task (lm_eval/tasks/wsc273/utils.py), so
that partial scoring there and here builds the same strings:
- a candidate whose first word is a capitalised determiner/pronoun ("The", "A", ...) is
  lower-cased when it does not start a sentence;
- for a possessive pronoun (my, his, her, our, their) the candidate gets "'s".
"""

from __future__ import annotations

from dataclasses import dataclass

from evaluation.lm.scorers.types import WscText

UPPER_STARTS = ("A", "An", "The", "She", "He", "It", "They", "My", "His", "Her", "Their")
POSSESSIVE_PRONOUNS = ("my", "his", "her", "our", "their")
_NO_SPACE_BEFORE = ".,;:!?')]}\u2019"


def join_parts(left: str, right: str) -> str:
    """Join two pieces of a sentence with one space unless one is there or not wanted."""
    if not left or not right:
        return left + right
    if left[-1].isspace() or right[0].isspace() or right[0] in _NO_SPACE_BEFORE:
        return left + right
    return left + " " + right


def normalize_candidate(text: WscText, candidate: str) -> str:
    """The candidate as it reads in place of the pronoun."""
    candidate = candidate.strip()
    if text.pronoun.strip().lower() in POSSESSIVE_PRONOUNS:
        candidate += "'s"
    words = candidate.split(maxsplit=1)
    before = text.text_before.rstrip()
    starts_sentence = before == "" or before[-1] in ".!?"
    if words and not starts_sentence and words[0] in UPPER_STARTS:
        candidate = words[0].lower() + candidate[len(words[0]) :]
    elif words and starts_sentence:
        candidate = candidate[0].upper() + candidate[1:]
    return candidate


@dataclass(frozen=True)
class Substitution:
    """The sentence with a candidate in place of the pronoun, and its partial-scoring split.

    sentence == context + continuation; context ends with the candidate, continuation is
    the rest (with its leading space), as in Trinh and Le (2018) partial scoring.
    """

    context: str
    continuation: str

    @property
    def sentence(self) -> str:
        return self.context + self.continuation


def substitute(text: WscText, candidate: str) -> Substitution:
    context = join_parts(text.text_before, normalize_candidate(text, candidate))
    sentence = join_parts(context, text.text_after.rstrip())
    return Substitution(context=context, continuation=sentence[len(context) :])
