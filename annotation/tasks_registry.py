"""The annotation tasks of DESIGN section 5 (and the ComVE rewrite of issue 13): what an item is, which answers exist
(each with its keyboard key), how many judgments an item needs by default (K, from the
papers) and the default instructions with worked examples. No Django here.

Task names are the values of ``annotation.models.Task``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.errors import WinnowError
from core.formulas import formula_refusal

ITEM_KINDS = ("schemas", "reasons", "comve", "slots", "explanations")
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
    extra: dict[str, Any] = field(default_factory=dict)

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
        return self.writes_text or self.writes_comve

    def answer_key(self, answer: str, payload: Any) -> str:
        """The canonical string compared with a gold answer: the choice, and the answer to
        the second question when the task asks one ("1:B" for ComVE check)."""
        if self.option_choices and isinstance(payload, dict) and payload.get("option"):
            return f"{answer}:{payload['option']}"
        return answer


YES_NO = {
    "switchability": (
        Choice("switchable", "Switchable", "y"),
        Choice("not_switchable", "Not switchable", "n"),
    ),
    "associativity": (
        Choice("associative", "Associative", "y"),
        Choice("not_associative", "Not associative", "n"),
    ),
    "reason_plausibility": (
        Choice("plausible", "Plausible", "y"),
        Choice("implausible", "Not plausible", "n"),
    ),
    "explanation_plausibility": (
        Choice("plausible", "Plausible", "y"),
        Choice("implausible", "Not plausible", "n"),
    ),
}

INSTRUCTIONS = {
    "switchability": """You see a Winograd sentence and the same sentence with its two candidates exchanged.
Answer "switchable" when the switched sentence still reads naturally AND the pronoun now refers to the other candidate for the same reason; answer "not switchable" when the switch makes the sentence odd or changes the reasoning.

Worked examples
- "Paul tried to call George on the phone, but he wasn't successful." -> "George tried to call Paul on the phone, but he wasn't successful." Still natural, "he" is still the caller: switchable.
- "The city councilmen refused the demonstrators a permit because they feared violence." -> "The demonstrators refused the city councilmen a permit ..." Demonstrators do not grant permits: not switchable.""",
    "associativity": """You see only the clause that contains the pronoun and the two candidates.
Answer "associative" when one candidate obviously goes with the clause by itself, without the rest of the sentence (a word association is enough to answer).

Worked examples
- Clause "it was too big", candidates "the trophy" / "the suitcase": either could be big: not associative.
- Clause "they were very good at their job", candidates "the firemen" / "the burglars": not decided by association alone: not associative.
- Clause "he had been drinking", candidates "the drunk" / "the bartender": the drunk goes with drinking by association: associative.""",
    "reason_writing": """You see a question and its correct answer. Complete "'X' refers to Y because ..." with the reason a person would give: the commonsense knowledge that decides it. One or two plain sentences; do not repeat the question.

Worked examples
- "The fish ate the worm. It was hungry." 'It' refers to the fish because: the one who eats is the one who is hungry.
- "The trophy doesn't fit into the suitcase because it is too large." 'it' refers to the trophy because: an object that is too large cannot fit into a container.""",
    "reason_plausibility": """You see a question, its correct answer and one reason someone gave. Is the reason plausible: does it correctly explain why the pronoun refers to that answer?

Worked examples
- Question "The city councilmen refused the demonstrators a permit because they feared violence." Answer: the city councilmen. Reason "The ones that fear violence are likely the councilmen" -> plausible.
- Same question, reason "of the city's history of racial discrimination." -> not plausible (it explains nothing about who feared violence).""",
    "knowledge_type": """You see a valid reason for a question. Which kind of commonsense knowledge does it use?
Property (of an object: big, heavy, kind), Object (what an object is or is used for), Eventuality (events, their order, causes and effects), Spatial (where things are), Quantity (numbers, amounts), Others.

Worked examples
- "An object that is too large cannot fit into a container." -> Property.
- "You thank someone after they helped you." -> Eventuality.
- "Something placed above another thing is higher." -> Spatial.""",
    "comve_writing": """Write one ComVE item. Guidelines: two statements that differ in a few words, one makes sense and one is against common sense; three explanations of why the nonsensical one is wrong, exactly one of them correct; and three reference explanations written in your own words. Avoid negation tricks, rare facts and offensive content. The prompt is only for inspiration.

Worked example
- Statements: "He put a turkey into the fridge." / "He put an elephant into the fridge." (against sense: the second)
- Options: A "An elephant is much bigger than a fridge." (right) B "Elephants are usually gray." C "An elephant cannot eat a turkey."
- References: "An elephant is too big to fit in a fridge." / "A fridge is far smaller than an elephant." / "Elephants cannot fit in household appliances.\"""",
    "comve_rewrite": """More than half of the testees answered this ComVE item wrong. You see the item as it is and every testee's answer. Rewrite it so that every literate person gives the right answer: keep what works, fix what misled them (an ambiguous statement, a second defensible reason, a wrong key). The same rules as writing apply.

Worked example
- Item: "He drank milk." / "He drank a stone." (against sense: 2), testees answered statement 1 twice because "milk" read as spoiled. Rewrite statement 1 as "He drank a glass of fresh milk.\"""",
    "explanation_plausibility": """You see a statement that is against common sense and an explanation a language model wrote of why it is. Is the explanation plausible: does it correctly say why the statement is against common sense? Judge what it says, not its grammar or style.

Worked examples
- Statement "He put an elephant into the fridge." Explanation "an elephant is much bigger than a fridge." -> plausible.
- Same statement, explanation "elephants are usually gray." -> not plausible (true, but it does not explain anything).
- Same statement, explanation "he put an elephant into the fridge." -> not plausible (it repeats the statement).""",
    "comve_check": """You see two statements and three reasons. Choose the statement that is against common sense, then the reason that best explains why.

Worked example
- 1 "He put a turkey into the fridge." 2 "He put an elephant into the fridge." -> statement 2; reason "An elephant is much bigger than a fridge.\"""",
}

TASKS: dict[str, TaskSpec] = {
    "switchability": TaskSpec(
        "switchability",
        "Switchability",
        ("schemas",),
        3,
        YES_NO["switchability"],
        instructions=INSTRUCTIONS["switchability"],
    ),
    "associativity": TaskSpec(
        "associativity",
        "Associativity",
        ("schemas",),
        3,
        YES_NO["associativity"],
        instructions=INSTRUCTIONS["associativity"],
    ),
    "reason_writing": TaskSpec(
        "reason_writing",
        "Reason writing",
        ("schemas",),
        5,
        writes_text=True,
        min_text_length=3,
        instructions=INSTRUCTIONS["reason_writing"],
    ),
    "reason_plausibility": TaskSpec(
        "reason_plausibility",
        "Reason plausibility",
        ("reasons",),
        5,
        YES_NO["reason_plausibility"],
        instructions=INSTRUCTIONS["reason_plausibility"],
    ),
    "knowledge_type": TaskSpec(
        "knowledge_type",
        "Knowledge type",
        ("reasons",),
        5,
        tuple(Choice(t, t, str(i + 1)) for i, t in enumerate(KNOWLEDGE_TYPES)),
        instructions=INSTRUCTIONS["knowledge_type"],
    ),
    "comve_writing": TaskSpec(
        "comve_writing",
        "ComVE writing",
        ("comve", "slots"),
        1,
        writes_comve=True,
        instructions=INSTRUCTIONS["comve_writing"],
    ),
    "comve_check": TaskSpec(
        "comve_check",
        "ComVE check",
        ("comve",),
        3,
        (Choice("0", "Statement 1", "1"), Choice("1", "Statement 2", "2")),
        option_choices=(
            Choice("A", "Reason A", "a"),
            Choice("B", "Reason B", "b"),
            Choice("C", "Reason C", "c"),
        ),
        instructions=INSTRUCTIONS["comve_check"],
    ),
    "comve_rewrite": TaskSpec(
        "comve_rewrite",
        "ComVE rewrite",
        ("comve",),
        1,
        writes_comve=True,
        instructions=INSTRUCTIONS["comve_rewrite"],
    ),
}

# Added after the seven tasks of DESIGN section 5 (issue 13): people judge the explanations
# an evaluation run generated for ComVE subtask C, as the task proposal's testees judged
# subtask 3's answers ("if one answer is considered unsuitable by more than half testees").
TASKS["explanation_plausibility"] = TaskSpec(
    "explanation_plausibility",
    "Explanation plausibility",
    ("explanations",),
    3,
    YES_NO["explanation_plausibility"],
    instructions=INSTRUCTIONS["explanation_plausibility"],
)

COMVE_WRITING_FIELDS = ("statement_0", "statement_1", "option_a", "option_b", "option_c")


def _no_formula_start(field: str, value: str) -> None:
    """Crowd-written text may not start a spreadsheet formula (``core.formulas``), so the
    release files can carry every text byte for byte and still be safe to open."""
    refusal = formula_refusal(value)
    if refusal:
        raise AnswerError(f"{field}: {refusal}")


def task_spec(name: str) -> TaskSpec:
    try:
        return TASKS[name]
    except KeyError:
        raise AnswerError(f"task: unknown task {name!r}; one of {', '.join(TASKS)}") from None


def answer_clean(
    task: str,
    *,
    answer: str = "",
    text: str = "",
    payload: dict[str, Any] | None = None,
    has_options: bool = True,
) -> tuple[str, str, dict[str, Any]]:
    """Validate and normalise an answer for ``task``: (answer, text, payload).

    Raises AnswerError naming the field and the reason."""
    spec = task_spec(task)
    answer = (answer or "").strip()
    text = (text or "").strip()
    payload = dict(payload or {})
    if spec.choices:
        if answer not in spec.choice_values:
            raise AnswerError(f"answer: {answer!r} is not one of {', '.join(spec.choice_values)}")
    elif answer:
        raise AnswerError(f"answer: this task takes no choice, got {answer!r}")
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


def answer_key(task: str, answer: str, payload: dict[str, Any]) -> str:
    """The canonical string compared with a gold answer ("1:B" for ComVE check); see
    :meth:`TaskSpec.answer_key`."""
    spec = TASKS.get(task)
    return spec.answer_key(answer, payload) if spec is not None else answer


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
