"""Switched sentences for the switchability task (Trichelair et al. 2019). No Django here.

``switch_candidates`` exchanges the two candidate spans in a Winograd sentence: every
mention of candidate A becomes candidate B and the other way round, in one pass (a span
just written is never rewritten). Capitalisation follows the position: a sentence-initial
span starts with a capital, a determiner in the middle of a sentence is lower case ("The
city councilmen" -> "the city councilmen"), proper names keep their capitals. Possessive
endings stay where they were ("Yakutsk's army" -> "Kamchatka's army"), and candidates that
share words ("Sam's drawing" / "Tina's drawing", "The older students" / "The younger
students") are switched on the words that differ, so elliptical mentions ("above Tina's",
"the younger ones") are switched too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

ARTICLES = frozenset({"the", "a", "an"})
POSSESSIVE_DETERMINERS = frozenset({"his", "her", "their", "its", "my", "our", "your"})
DETERMINERS = ARTICLES | POSSESSIVE_DETERMINERS | frozenset({"this", "that", "these", "those", "some"})
_POSSESSIVE = re.compile(r"(?:'s|')$")


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    candidate: int  # 0 or 1
    extended: bool = False  # took the sentence's own determiner ("his son" for "The son")

    def overlaps(self, other: Span) -> bool:
        return self.start < other.end and other.start < self.end


def normalise(text: str) -> str:
    """Whitespace- and case-insensitive form used to compare switched sentences."""
    return " ".join(text.lower().split())


def _clean(candidate: str) -> str:
    return " ".join(candidate.strip().strip('.,;:!?"').split())


def _pattern(phrase: str) -> re.Pattern[str]:
    escaped = r"\s+".join(re.escape(w) for w in phrase.split())
    return re.compile(rf"(?<![\w-]){escaped}(?![\w-])", re.IGNORECASE)


def _is_sentence_start(sentence: str, index: int) -> bool:
    before = sentence[:index].rstrip().rstrip("\"'(")
    return before == "" or before[-1] in ".!?"


def _find(sentence: str, phrase: str, candidate: int) -> list[Span]:
    """Mentions of ``phrase``; without its determiner, a mention takes the determiner
    written before it in the sentence ("his son" for the candidate "The son")."""
    spans = [Span(m.start(), m.end(), candidate) for m in _pattern(phrase).finditer(sentence)]
    if spans:
        return spans
    words = phrase.split()
    if len(words) > 1 and words[0].lower() in DETERMINERS:
        bare = " ".join(words[1:])
        for m in _pattern(bare).finditer(sentence):
            start = m.start()
            previous = re.search(r"(\w+)\s+$", sentence[:start])
            if previous and previous.group(1).lower() in DETERMINERS:
                start = previous.start(1)
            spans.append(Span(start, m.end(), candidate, extended=start != m.start()))
    return spans


def _bare(phrase: str) -> str:
    words = phrase.split()
    if len(words) > 1 and words[0].lower() in DETERMINERS:
        return " ".join(words[1:])
    return phrase


def _candidate_forms(a: str, b: str) -> Iterator[tuple[str, str]]:
    """The candidates as written, then reduced to the words in which they differ."""
    yield a, b
    wa, wb = a.split(), b.split()
    head = 0
    while head < min(len(wa), len(wb)) - 1 and wa[head].lower() == wb[head].lower():
        head += 1
    tail = 0
    while (
        tail < min(len(wa), len(wb)) - head - 1
        and wa[len(wa) - 1 - tail].lower() == wb[len(wb) - 1 - tail].lower()
    ):
        tail += 1
    if head or tail:
        ra = " ".join(wa[head : len(wa) - tail])
        rb = " ".join(wb[head : len(wb) - tail])
        # "Sam's" / "Tina's": switch the possessors, the ending stays in the sentence.
        if _POSSESSIVE.search(ra) and _POSSESSIVE.search(rb):
            ra, rb = _POSSESSIVE.sub("", ra), _POSSESSIVE.sub("", rb)
        if ra and rb:
            yield ra, rb


def _choose(spans: list[Span]) -> list[Span]:
    chosen: list[Span] = []
    for span in sorted(spans, key=lambda s: (s.start, -(s.end - s.start))):
        if not any(span.overlaps(c) for c in chosen):
            chosen.append(span)
    return chosen


def _moved_form(sentence: str, chosen: list[Span], candidate: int, written: str) -> str:
    """How a candidate reads when it moves: its first mention in the sentence, except
    that a possessive determiner ("his son") gives way to the candidate's article ("the
    son"), since "his" would refer to someone else at the new place."""
    span = next(s for s in chosen if s.candidate == candidate)
    words = sentence[span.start : span.end].split()
    written_words = written.split()
    if (
        len(words) > 1
        and words[0].lower() in POSSESSIVE_DETERMINERS
        and written_words
        and written_words[0].lower() in ARTICLES
    ):
        words = [written_words[0].lower(), *words[1:]]
    if _is_sentence_start(sentence, span.start) and words and not _keeps_capital(words[0], sentence):
        words[0] = words[0][:1].lower() + words[0][1:]
    return " ".join(words)


def _keeps_capital(word: str, sentence: str) -> bool:
    """A capitalised sentence-initial word keeps its capital when it is a name: not a
    determiner, and written with a capital wherever else it occurs."""
    if word.lower() in DETERMINERS or not word[:1].isupper():
        return False
    others = re.findall(rf"(?<!\w){re.escape(word)}(?!\w)", sentence, re.IGNORECASE)
    return all(o[:1].isupper() for o in others)


def _place(form: str, sentence: str, start: int) -> str:
    if not form:
        return form
    if _is_sentence_start(sentence, start):
        return form[:1].upper() + form[1:]
    first, _, rest = form.partition(" ")
    if first.lower() in DETERMINERS:
        return " ".join(p for p in (first.lower(), rest) if p)
    return form


def switch_candidates(sentence: str, candidate_a: str, candidate_b: str) -> str:
    """The sentence with the two candidates exchanged. When the candidates cannot both be
    found, the sentence comes back unchanged (the annotator then sees no switch)."""
    for form_a, form_b in _candidate_forms(_clean(candidate_a), _clean(candidate_b)):
        chosen = _choose(_find(sentence, form_a, 0) + _find(sentence, form_b, 1))
        if {s.candidate for s in chosen} != {0, 1}:
            continue
        if all(s.extended for s in chosen):
            # Both mentions have their own determiners ("her jacket for my sweater"):
            # those stay in place and only the nouns move.
            form_a, form_b = _bare(form_a), _bare(form_b)
            chosen = _choose(_find(sentence, form_a, 0) + _find(sentence, form_b, 1))
        forms = [
            _moved_form(sentence, chosen, 0, form_a),
            _moved_form(sentence, chosen, 1, form_b),
        ]
        pieces: list[str] = []
        cursor = 0
        for span in chosen:
            pieces.append(sentence[cursor : span.start])
            pieces.append(_place(forms[1 - span.candidate], sentence, span.start))
            cursor = span.end
        pieces.append(sentence[cursor:])
        return "".join(pieces)
    return sentence


def bracketed_sentence(text_before: str, pronoun: str, text_after: str) -> str:
    """Trichelair's form: the sentence with the pronoun in [brackets]."""
    return " ".join(p for p in (text_before.strip(), f"[{pronoun.strip()}]", text_after.strip()) if p)


def bracketed_parts(sentence: str) -> tuple[str, str, str]:
    """Split Trichelair's "text [pronoun] text" into (before, pronoun, after)."""
    match = re.search(r"\[([^\]]+)\]", sentence)
    if not match:
        raise ValueError(f"no [pronoun] in sentence: {sentence!r}")
    return sentence[: match.start()].rstrip(), match.group(1), sentence[match.end() :].lstrip()


def measure_against_trichelair(rows: list[dict]) -> tuple[int, int, list[dict]]:
    """(matching, total, mismatches) over the rows labelled switchable."""
    total = 0
    matching = 0
    misses: list[dict] = []
    for row in rows:
        if str(row.get("is_switchable")) not in ("1", "True", "true"):
            continue
        total += 1
        ours = switch_candidates(row["sentence"], row["answer0"], row["answer1"])
        if normalise(ours) == normalise(row["sentence_switched"]):
            matching += 1
        else:
            misses.append({"index": row.get("index"), "ours": ours, "theirs": row["sentence_switched"]})
    return matching, total, misses
