"""What an adversarial writer writes, checked before any model sees it. No Django here.

Two kinds of item (issue 27, docs/adversarial.md):

- a Winograd twin pair in WinoGrande's form: ``{"sentence", "twin", "candidate_a",
  "candidate_b", "answer", "twin_answer"}``; the pronoun (or WinoGrande's blank) is marked in
  each sentence as ``[it]`` (a word in square brackets) or a lone ``_``;
- a ComVE pair: ``{"statement_0", "statement_1", "false_index"}`` and, optionally, subtask
  B's three reasons ``option_a``, ``option_b``, ``option_c`` with ``correct_option``.

:func:`winograd_clean` and :func:`comve_clean` check everything that can be checked and
raise one :class:`ContentError` listing every problem by the field it is in (the page shows
each beside its field); they return the content as it is stored on a try.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from annotation.answers import AnswerError
from core.formulas import formula_refusal

MAX_LENGTH = 500
WINOGRAD_FIELDS = ("sentence", "twin", "candidate_a", "candidate_b", "answer", "twin_answer")
COMVE_FIELDS = ("statement_0", "statement_1", "false_index")
COMVE_OPTION_FIELDS = ("option_a", "option_b", "option_c", "correct_option")
ANSWERS = ("A", "B")

_BRACKETED = re.compile(r"\[([^\[\]]+)\]")
_BLANK = re.compile(r"(?<!\w)_(?!\w)")


class ContentError(AnswerError):
    """Content a writer submitted that cannot be checked by the models: ``problems`` maps
    each field to what is wrong with it (the message lists them all, each after its field)."""

    def __init__(self, problems: Mapping[str, str]) -> None:
        self.problems = dict(problems)
        super().__init__("; ".join(f"{name}: {why}" for name, why in self.problems.items()))


@dataclass(frozen=True)
class Marked:
    """A sentence cut at its marked pronoun (or blank): ``before`` + ``pronoun`` + ``after``."""

    before: str
    pronoun: str
    after: str

    @property
    def unmarked(self) -> str:
        return " ".join(p for p in (self.before, self.pronoun, self.after) if p)


def _marks(sentence: str) -> list[tuple[int, int, str]]:
    """Every mark in ``sentence``: (start, end, the pronoun; "_" for a blank)."""
    found = [(m.start(), m.end(), m.group(1).strip()) for m in _BRACKETED.finditer(sentence)]
    found += [(m.start(), m.end(), "_") for m in _BLANK.finditer(sentence)]
    return sorted(found)


def mark_split(sentence: str) -> Marked:
    """``sentence`` cut at its one mark; ValueError (the reason) when it has none or several."""
    marks = _marks(sentence)
    if not marks:
        raise ValueError("mark the pronoun as [it] (in square brackets), or the blank as _")
    if len(marks) > 1:
        raise ValueError(f"mark one pronoun or blank, not {len(marks)}")
    start, end, pronoun = marks[0]
    if not pronoun or "[" in pronoun or "]" in pronoun:
        raise ValueError("write the pronoun inside the brackets, as [it]")
    return Marked(before=sentence[:start].strip(), pronoun=pronoun, after=sentence[end:].strip())


def _text(raw: Mapping[str, Any], name: str, problems: dict[str, str]) -> str:
    value = " ".join(str(raw.get(name) or "").split())
    if not value:
        problems[name] = "required"
    elif len(value) > MAX_LENGTH:
        problems[name] = f"at most {MAX_LENGTH} characters"
    elif refusal := formula_refusal(value):
        problems[name] = refusal
    return value


def _contains(text: str, phrase: str) -> bool:
    """``phrase`` is in ``text`` as whole words (case aside)."""
    pattern = r"(?<!\w)" + re.escape(phrase.lower()) + r"(?!\w)"
    return re.search(pattern, text.lower()) is not None


def _same(a: str, b: str) -> bool:
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


def winograd_clean(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A twin pair as stored, or ContentError naming each problem's field: one mark per
    sentence, both candidates in each sentence (outside the mark), the twin differs from
    the sentence, and the twin's answer is the other candidate (the twin flips it)."""
    problems: dict[str, str] = {}
    content: dict[str, Any] = {name: _text(raw, name, problems) for name in WINOGRAD_FIELDS[:4]}
    for name in ("answer", "twin_answer"):
        value = str(raw.get(name) or "").strip().upper()
        if value not in ANSWERS:
            problems[name] = "say which candidate the marked pronoun refers to (A or B)"
        content[name] = value
    a, b = content["candidate_a"], content["candidate_b"]
    if a and b and _same(a, b) and "candidate_b" not in problems:
        problems["candidate_b"] = "the two candidates must differ"
    for name in ("sentence", "twin"):
        if name in problems:
            continue
        try:
            marked = mark_split(content[name])
        except ValueError as exc:
            problems[name] = str(exc)
            continue
        outside = f"{marked.before} {marked.after}"
        missing = [
            label
            for label, candidate in (("A", a), ("B", b))
            if candidate
            and f"candidate_{label.lower()}" not in problems
            and not _contains(outside, candidate)
        ]
        if missing:
            problems[name] = " and ".join(
                f"candidate {label} ({a if label == 'A' else b!r}) does not appear in it" for label in missing
            )
    if "sentence" not in problems and "twin" not in problems and _same(content["sentence"], content["twin"]):
        problems["twin"] = "the twin must differ from the sentence (change a trigger word or phrase)"
    if (
        "answer" not in problems
        and "twin_answer" not in problems
        and content["answer"] == content["twin_answer"]
    ):
        problems["twin_answer"] = "the twin must flip the answer: its pronoun refers to the other candidate"
    if problems:
        raise ContentError(problems)
    return content


def winograd_questions(content: Mapping[str, Any]) -> list[tuple[Marked, int]]:
    """The two questions of a checked twin pair: each sentence cut at its mark, with the
    index (0 = candidate A) of the candidate its pronoun refers to."""
    return [
        (mark_split(str(content[name])), ANSWERS.index(str(content[answer])))
        for name, answer in (("sentence", "answer"), ("twin", "twin_answer"))
    ]


def comve_clean(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A ComVE pair as stored, or ContentError naming each problem's field: two different
    statements, which one is against common sense, and subtask B's three reasons with the
    right one either all given or all left out."""
    problems: dict[str, str] = {}
    content: dict[str, Any] = {name: _text(raw, name, problems) for name in ("statement_0", "statement_1")}
    if not problems and _same(content["statement_0"], content["statement_1"]):
        problems["statement_1"] = "the two statements must differ"
    false_index = str(raw.get("false_index", "")).strip()
    if false_index not in ("0", "1"):
        problems["false_index"] = "say which statement is against common sense (1 or 2)"
    else:
        content["false_index"] = int(false_index)
    given = [name for name in COMVE_OPTION_FIELDS if str(raw.get(name) or "").strip()]
    if given:
        for name in COMVE_OPTION_FIELDS[:3]:
            content[name] = _text(raw, name, problems)
        correct = str(raw.get("correct_option") or "").strip().upper()
        if correct not in ("A", "B", "C"):
            problems["correct_option"] = "say which reason is the right one (A, B or C)"
        content["correct_option"] = correct
    if problems:
        raise ContentError(problems)
    return content


def comve_has_reasons(content: Mapping[str, Any]) -> bool:
    """The pair carries subtask B's three reasons and the right one."""
    return all(content.get(name) for name in COMVE_OPTION_FIELDS)
