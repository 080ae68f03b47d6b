"""The writer's content is checked before any model sees it (annotation.adversarial_content,
pure): each problem names its field."""

import pytest

from annotation.adversarial_content import ContentError, comve_clean, mark_split, winograd_clean

TWINS = {
    "sentence": "The trophy doesn't fit into the suitcase because [it] is too large.",
    "twin": "The trophy doesn't fit into the suitcase because [it] is too small.",
    "candidate_a": "The trophy",
    "candidate_b": "the suitcase",
    "answer": "A",
    "twin_answer": "b",
}


def _problems(raw, clean=winograd_clean):
    with pytest.raises(ContentError) as refused:
        clean(raw)
    return refused.value.problems


def test_a_twin_pair_in_winogrande_form_is_accepted_and_cut_at_its_mark():
    content = winograd_clean(TWINS)
    assert content["twin_answer"] == "B" and content["candidate_a"] == "The trophy"
    marked = mark_split(content["sentence"])
    assert (marked.before, marked.pronoun, marked.after) == (
        "The trophy doesn't fit into the suitcase because",
        "it",
        "is too large.",
    )
    blank = mark_split("The trophy doesn't fit into the suitcase because _ is too small.")
    assert blank.pronoun == "_" and blank.after == "is too small."


def test_a_sentence_without_a_marked_pronoun_is_refused_naming_the_field():
    problems = _problems(
        {**TWINS, "sentence": "The trophy doesn't fit into the suitcase because it is too large."}
    )
    assert list(problems) == ["sentence"] and "mark the pronoun" in problems["sentence"]
    two = _problems(
        {**TWINS, "twin": "[The trophy] doesn't fit into the suitcase because [it] is too small."}
    )
    assert list(two) == ["twin"] and "not 2" in two["twin"]


def test_a_candidate_missing_from_a_sentence_is_refused_naming_the_sentence_and_the_candidate():
    problems = _problems({**TWINS, "twin": "The trophy doesn't fit into the box because [it] is too small."})
    assert list(problems) == ["twin"] and "candidate B ('the suitcase')" in problems["twin"]
    # inside the mark does not count: the candidate must be in the sentence around it
    inside = _problems({**TWINS, "candidate_b": "it"})
    assert "candidate B ('it') does not appear" in inside["sentence"]


def test_a_twin_that_does_not_differ_or_does_not_flip_is_refused_naming_its_field():
    same = _problems(
        {**TWINS, "twin": "the trophy doesn't fit into the  suitcase because [it] is too LARGE."}
    )
    assert list(same) == ["twin"] and "must differ" in same["twin"]
    unflipped = _problems({**TWINS, "twin_answer": "A"})
    assert list(unflipped) == ["twin_answer"] and "flip" in unflipped["twin_answer"]


def test_every_problem_is_named_at_once_and_the_message_lists_them():
    with pytest.raises(ContentError) as refused:
        winograd_clean({"sentence": "=cmd()", "candidate_a": "x", "candidate_b": "X", "answer": "C"})
    problems = refused.value.problems
    assert set(problems) == {"sentence", "twin", "candidate_b", "answer", "twin_answer"}
    assert "formula" in problems["sentence"] and problems["twin"] == "required"
    assert str(refused.value).startswith("sentence: ")


def test_a_comve_pair_needs_two_different_statements_and_which_is_false():
    assert comve_clean(
        {"statement_0": "He ate bread.", "statement_1": "He ate a car.", "false_index": "1"}
    ) == {
        "statement_0": "He ate bread.",
        "statement_1": "He ate a car.",
        "false_index": 1,
    }
    assert set(_problems({"statement_0": "He ate bread.", "statement_1": "he ate  bread."}, comve_clean)) == {
        "statement_1",
        "false_index",
    }


def test_a_comve_pair_takes_subtask_b_reasons_all_or_none():
    base = {"statement_0": "He ate bread.", "statement_1": "He ate a car.", "false_index": "1"}
    full = comve_clean(
        {
            **base,
            "option_a": "Cars are not food.",
            "option_b": "Cars are red.",
            "option_c": "Bread is food.",
            "correct_option": "a",
        }
    )
    assert full["correct_option"] == "A" and full["option_b"] == "Cars are red."
    problems = _problems({**base, "option_a": "Cars are not food."}, comve_clean)
    assert set(problems) == {"option_b", "option_c", "correct_option"}
