"""What an annotation task's answers are, and how an answer is checked. No Django here.

A :class:`TaskSpec` says what items a task works on, which answers exist (each with its
keyboard key), how many judgments an item needs by default (K, from the papers) and the
default instructions with worked examples. Each task's spec is written on the task's own
class (``annotation/task_types/``, one module per family); this module holds what they
share, so that the answers are checked without a database.

Task names are the values of ``annotation.models.Task``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from core.errors import WinnowError
from core.formulas import formula_refusal

ITEM_KINDS = ("schemas", "reasons", "comve", "slots", "explanations", "adversarial")
KNOWLEDGE_TYPES = ("Property", "Object", "Eventuality", "Spatial", "Quantity", "Others")


class AnswerError(WinnowError, ValueError):
    """An answer that the task does not accept; the message says which field and why.
    (Still a ValueError, as it was before the domain errors had one root.)"""

    status = 400


@dataclass(frozen=True)
class Choice:
    value: str
    label: str
    key: str


def yes_no(yes: str, yes_label: str, no: str, no_label: str) -> tuple[Choice, Choice]:
    """The two answers of a yes/no question, on the keys ``y`` and ``n``."""
    return Choice(yes, yes_label, "y"), Choice(no, no_label, "n")


@dataclass(frozen=True)
class TaskSpec:
    name: str
    title: str
    item_kinds: tuple[str, ...]
    default_k: int
    choices: tuple[Choice, ...] = ()
    # Second question of ComVE check ("which reason"), answered in payload["option"].
    option_choices: tuple[Choice, ...] = ()
    writes_text: bool = False
    writes_comve: bool = False
    instructions: str = ""
    min_text_length: int = 0
    #: Adversarial writing (issue 27): the writer's item is checked by the models before it
    #: is kept, so the answer is ``kept`` (the payload: the item's content, checked by this
    #: function, which raises AnswerError naming the field) or ``retracted`` (no payload).
    content_clean: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None
    #: The URL name (taking the campaign's name) the item's form posts to instead of the
    #: annotate page's own: adversarial writing's "check with the models".
    form_action: str = ""
    #: The label of the item form's submit button.
    submit_label: str = "Submit"
    #: Answers that carry details (a validator's corrected answer, the reason for a flag):
    #: ``details(answer, text, payload)`` checks them and returns the (text, payload) kept,
    #: raising AnswerError naming the field. None: text and payload as the flags above say.
    details: Callable[[str, str, dict[str, Any]], tuple[str, dict[str, Any]]] | None = None

    @property
    def choice_values(self) -> tuple[str, ...]:
        return tuple(c.value for c in self.choices)

    def label_of(self, value: str) -> str:
        for c in self.choices:
            if c.value == value:
                return c.label
        return value

    @property
    def free_text(self) -> bool:
        """Answers are written (a reason, a ComVE item), not chosen: no categories to
        count, so no agreement figures and no votes to import."""
        return self.writes_text or self.writes_comve or self.content_clean is not None

    def answer_key(self, answer: str, payload: Any) -> str:
        """The canonical string compared with a gold answer: the choice, and the answer to
        the second question when the task asks one ("1:B" for ComVE check)."""
        if self.option_choices and isinstance(payload, dict) and payload.get("option"):
            return f"{answer}:{payload['option']}"
        return answer


#: The two answers of an adversarial writing slot: the item is kept, or retracted.
ADVERSARIAL_KEPT = "kept"
ADVERSARIAL_RETRACTED = "retracted"

COMVE_WRITING_FIELDS = ("statement_0", "statement_1", "option_a", "option_b", "option_c")


def _no_formula_start(field: str, value: str) -> None:
    """Crowd-written text may not start a spreadsheet formula (``core.formulas``), so the
    release files can carry every text byte for byte and still be safe to open."""
    refusal = formula_refusal(value)
    if refusal:
        raise AnswerError(f"{field}: {refusal}")


def answer_clean(
    spec: TaskSpec,
    *,
    answer: str = "",
    text: str = "",
    payload: dict[str, Any] | None = None,
    has_options: bool = True,
) -> tuple[str, str, dict[str, Any]]:
    """Validate and normalise an answer to the task of ``spec``: (answer, text, payload).
    (``annotation.task_types.answer_clean`` takes the task's name.)

    Raises AnswerError naming the field and the reason."""
    answer = (answer or "").strip()
    text = (text or "").strip()
    payload = dict(payload or {})
    if spec.content_clean is not None:
        if answer == ADVERSARIAL_KEPT:
            return answer, "", spec.content_clean(payload)
        if answer == ADVERSARIAL_RETRACTED:
            return answer, "", {}
        raise AnswerError(f"answer: {ADVERSARIAL_KEPT} or {ADVERSARIAL_RETRACTED}, not {answer!r}")
    if spec.choices:
        if answer not in spec.choice_values:
            raise AnswerError(f"answer: {answer!r} is not one of {', '.join(spec.choice_values)}")
    elif answer:
        raise AnswerError(f"answer: this task takes no choice, got {answer!r}")
    if spec.details is not None:
        text, payload = spec.details(answer, text, payload)
        return answer, text, payload
    if spec.option_choices and has_options:
        option = str(payload.get("option", "")).strip().upper()
        allowed = tuple(c.value for c in spec.option_choices)
        if option not in allowed:
            raise AnswerError(f"option: {option!r} is not one of {', '.join(allowed)}")
        payload = {"option": option}
    elif spec.option_choices:
        payload = {}
    if spec.writes_text:
        if len(text) < spec.min_text_length:
            raise AnswerError(f"text: write a reason of at least {spec.min_text_length} characters")
        if len(text) > 2000:
            raise AnswerError("text: at most 2000 characters")
        _no_formula_start("text", text)
        payload = {}
    elif not spec.writes_comve:
        text = ""
    if spec.writes_comve:
        payload = comve_payload_clean(payload)
        text = ""
    elif not spec.option_choices:
        payload = {}
    return answer, text, payload


def comve_payload_clean(payload: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in COMVE_WRITING_FIELDS:
        value = str(payload.get(name, "") or "").strip()
        if not value:
            raise AnswerError(f"{name}: required")
        if len(value) > 500:
            raise AnswerError(f"{name}: at most 500 characters")
        _no_formula_start(name, value)
        out[name] = value
    if out["statement_0"].lower() == out["statement_1"].lower():
        raise AnswerError("statement_1: the two statements must differ")
    false_index = str(payload.get("false_index", "")).strip()
    if false_index not in ("0", "1"):
        raise AnswerError("false_index: say which statement is against common sense (0 or 1)")
    out["false_index"] = int(false_index)
    correct = str(payload.get("correct_option", "")).strip().upper()
    if correct not in ("A", "B", "C"):
        raise AnswerError("correct_option: one of A, B, C")
    out["correct_option"] = correct
    refs = payload.get("references")
    if not isinstance(refs, list | tuple):
        refs = [payload.get(f"reference_{i}", "") for i in (1, 2, 3)]
    refs = [str(r or "").strip() for r in refs]
    if len(refs) != 3 or not all(refs):
        raise AnswerError("references: write three reference explanations")
    if any(len(r) > 500 for r in refs):
        raise AnswerError("references: at most 500 characters each")
    for ref in refs:
        _no_formula_start("references", ref)
    out["references"] = refs
    return out


VALIDATION_CORRECT, VALIDATION_INCORRECT, VALIDATION_FLAGGED = "correct", "incorrect", "flagged"


def validation_details(answer: str, text: str, payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A validator's answer on an adversarial item (issue 27): "correct" carries nothing;
    "incorrect" the corrected answer (the right candidate, A or B, in the sentence and in
    its twin: ``corrected_answer``, ``corrected_twin_answer``; or the statement against
    common sense of a ComVE pair, 0 or 1: ``corrected_false_index``) and an optional note;
    "flagged" the reason (``text``). Which of the two corrections fits the item, and that
    it differs from the writer's answer, is checked against the item
    (``AdversarialValidationTask.answer_check``)."""
    if answer == VALIDATION_CORRECT:
        return "", {}
    if len(text) > 2000:
        raise AnswerError("text: at most 2000 characters")
    _no_formula_start("text", text)
    if answer == VALIDATION_FLAGGED:
        if len(text) < 3:
            raise AnswerError("text: say why you flag this item (the reason)")
        return text, {}
    twin = {
        name: str(payload.get(name, "") or "").strip().upper()
        for name in ("corrected_answer", "corrected_twin_answer")
    }
    false_index = str(payload.get("corrected_false_index", "") or "").strip()
    if any(twin.values()):
        for name, value in twin.items():
            if value not in ("A", "B"):
                raise AnswerError(f"{name}: the right candidate, A or B")
        return text, twin
    if false_index:
        if false_index not in ("0", "1"):
            raise AnswerError("corrected_false_index: the statement against common sense, 0 or 1")
        return text, {"corrected_false_index": int(false_index)}
    raise AnswerError("corrected_answer: say what the right answer is")


def clause_with_pronoun(text_before: str, pronoun: str, text_after: str) -> str:
    """The clause containing the pronoun (associativity shows only this): from the last
    clause boundary before the pronoun to the first after it."""
    boundaries = (
        ",",
        ";",
        ".",
        "!",
        "?",
        " because",
        " but",
        " so",
        " although",
        " though",
        " since",
        " when",
        " until",
        " after",
        " before",
        " that",
        " while",
        " and",
        " if",
    )
    before = text_before
    cut = 0
    lowered = before.lower()
    for b in boundaries:
        i = lowered.rfind(b)
        if i >= 0:
            cut = max(cut, i + len(b))
    # No boundary before the pronoun (a relative clause without "that": "the difficulties
    # he faced in his childhood"): the clause starts at the pronoun.
    head = before[cut:].strip() if cut or not text_after.strip(" .!?") else ""
    after = text_after
    end = len(after)
    for b in (".", ";", "!", "?", ","):
        i = after.find(b)
        if i >= 0:
            end = min(end, i)
    tail = after[:end].strip()
    return " ".join(p for p in (head, pronoun, tail) if p)


def reason_key(text: str) -> str:
    """What makes two reasons the same: case, spacing and end punctuation ignored (written
    reasons merged before validation, generated candidates dropped as duplicates)."""
    return " ".join(text.lower().split()).rstrip(" .!?;,")
