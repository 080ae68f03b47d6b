"""A task's spec and answer validation (annotation.answers, pure), read through the registry."""

import pytest

from annotation.answers import AnswerError, clause_with_pronoun
from annotation.models import Task
from annotation.task_types import TASKS, answer_clean, answer_key

PAPER_K = {
    "switchability": 3,
    "associativity": 3,
    "reason_writing": 5,
    "reason_plausibility": 5,
    "knowledge_type": 5,
    "comve_writing": 1,
    "comve_check": 3,
    "comve_rewrite": 1,  # one writer rewrites an item (ComVE 3.1 names no number)
    # the task proposal (paper 003, "Quality Control"): "at least three testees"
    "explanation_plausibility": 3,
    # one writer per slot, as ComVE writing (ANLI, Dynabench: a writer and the models in the loop)
    "adversarial_winograd": 1,
    "adversarial_comve": 1,
    # Dynabench's num_matching_validations (3 by default: api/controllers/validations.py);
    # ANLI's rule asks 2 and a third on disagreement (the item's own K)
    "adversarial_validation": 3,
}


def test_every_task_has_the_papers_default_k_and_instructions_with_examples():
    assert set(TASKS) == set(Task.values)
    for name, spec in TASKS.items():
        assert spec.default_k == PAPER_K[name]
        assert "example" in spec.instructions.lower()


def test_every_choice_has_a_distinct_key():
    for spec in TASKS.values():
        keys = [c.key for c in spec.choices + spec.option_choices]
        assert len(keys) == len(set(keys)), spec.name
        assert all(len(k) == 1 for k in keys)


def test_knowledge_type_has_the_six_types():
    assert [c.value for c in TASKS["knowledge_type"].choices] == [
        "Property",
        "Object",
        "Eventuality",
        "Spatial",
        "Quantity",
        "Others",
    ]


def test_a_choice_outside_the_task_is_refused():
    with pytest.raises(AnswerError, match="answer: 'maybe'"):
        answer_clean("switchability", answer="maybe")
    with pytest.raises(AnswerError, match="answer"):
        answer_clean("knowledge_type", answer="Causal")


def test_reason_writing_needs_text_and_drops_stray_fields():
    with pytest.raises(AnswerError, match="text"):
        answer_clean("reason_writing", text="  ")
    with pytest.raises(AnswerError, match="no choice"):
        answer_clean("reason_writing", answer="plausible", text="because it is big")
    assert answer_clean("reason_writing", text=" big things do not fit ", payload={"x": 1}) == (
        "",
        "big things do not fit",
        {},
    )


def test_comve_check_needs_an_option_when_the_item_has_options():
    with pytest.raises(AnswerError, match="option"):
        answer_clean("comve_check", answer="1", payload={})
    assert answer_clean("comve_check", answer="1", payload={"option": "b"}) == ("1", "", {"option": "B"})
    assert answer_clean("comve_check", answer="0", payload={"option": "b"}, has_options=False) == (
        "0",
        "",
        {},
    )
    assert answer_key("comve_check", "1", {"option": "B"}) == "1:B"


def test_comve_writing_checks_every_field():
    good = {
        "statement_0": "He drinks milk.",
        "statement_1": "He drinks a chair.",
        "false_index": "1",
        "option_a": "a",
        "option_b": "b",
        "option_c": "c",
        "correct_option": "b",
        "reference_1": "r1",
        "reference_2": "r2",
        "reference_3": "r3",
    }
    _, _, payload = answer_clean("comve_writing", payload=good)
    assert payload["false_index"] == 1 and payload["correct_option"] == "B"
    assert payload["references"] == ["r1", "r2", "r3"]
    for field, bad, message in [
        ("statement_1", "", "statement_1: required"),
        ("statement_1", "he drinks milk.", "must differ"),
        ("false_index", "2", "false_index"),
        ("correct_option", "D", "correct_option"),
        ("reference_3", "", "references"),
    ]:
        with pytest.raises(AnswerError, match=message):
            answer_clean("comve_writing", payload={**good, field: bad})


def test_clause_with_pronoun_shows_only_the_clause():
    assert (
        clause_with_pronoun("The trophy doesn't fit into the brown suitcase because", "it", "is too large.")
        == "it is too large"
    )
    assert (
        clause_with_pronoun("The man couldn't lift his son because", "he", "was so weak.") == "he was so weak"
    )
    assert clause_with_pronoun("I poured water from the bottle into the cup until", "it", "was full.") == (
        "it was full"
    )
    assert (
        clause_with_pronoun(
            "Sam Goodman's biography of the Spartan general Xenophanes conveys a vivid sense of the difficulties",
            "he",
            "faced in his childhood.",
        )
        == "he faced in his childhood"
    )
