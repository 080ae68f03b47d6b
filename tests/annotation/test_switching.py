"""Switched sentences: a pure function, measured against Trichelair et al.'s own."""

import json

import pytest

from annotation.switching import (
    bracketed_parts,
    bracketed_sentence,
    measure_against_trichelair,
    normalise,
    switch_candidates,
)


def test_exchanges_the_two_candidates_and_keeps_sentence_initial_capital():
    out = switch_candidates(
        "The city councilmen refused the demonstrators a permit because they feared violence.",
        "The city councilmen",
        "The demonstrators",
    )
    assert out == "The demonstrators refused the city councilmen a permit because they feared violence."


def test_proper_names_keep_their_capitals():
    out = switch_candidates("Joan made sure to thank Susan for all the help she had given.", "Joan", "Susan")
    assert out == "Susan made sure to thank Joan for all the help she had given."


def test_possessive_ending_stays_in_place():
    out = switch_candidates(
        "In July, Kamchatka declared war on Yakutsk. Since Yakutsk's army was much better equipped, they won.",
        "Kamchatka",
        "Yakutsk",
    )
    assert "Since Kamchatka's army" in out
    assert out.startswith("In July, Yakutsk declared war on Kamchatka.")


def test_candidates_sharing_a_head_switch_elliptical_mentions():
    out = switch_candidates(
        "Sam's drawing was hung just above Tina's and it did look much better.",
        "Sam's drawing",
        "Tina's drawing",
    )
    assert out == "Tina's drawing was hung just above Sam's and it did look much better."
    out = switch_candidates(
        "The older students were bullying the younger ones, so we punished them.",
        "The older students",
        "The younger students",
    )
    assert out == "The younger students were bullying the older ones, so we punished them."


def test_own_determiners_stay_and_nouns_move():
    out = switch_candidates(
        "Grace was happy to trade me her sweater for my jacket.", "the sweater", "the jacket"
    )
    assert out == "Grace was happy to trade me her jacket for my sweater."


def test_a_mid_sentence_candidate_moving_to_the_start_is_capitalised():
    out = switch_candidates(
        "The delivery truck zoomed by the school bus because it was going so fast.",
        "the delivery truck",
        "the school bus",
    )
    assert out == "The school bus zoomed by the delivery truck because it was going so fast."


def test_a_word_containing_a_candidate_is_not_touched():
    out = switch_candidates("Tom threw his schoolbag down to Ray after he reached the bottom.", "Tom", "Ray")
    assert out == "Ray threw his schoolbag down to Tom after he reached the bottom."


def test_missing_candidate_leaves_the_sentence_unchanged():
    sentence = "The man lifted the box."
    assert switch_candidates(sentence, "the woman", "the box") == sentence


def test_bracketed_sentence_round_trips():
    assert (
        bracketed_sentence("Paul called George but", "he", "was out.")
        == "Paul called George but [he] was out."
    )
    assert bracketed_parts(bracketed_sentence("A b", "it", "c.")) == ("A b", "it", "c.")


def test_bracketed_parts_and_normalise():
    assert bracketed_parts("Paul called George but [he] was out.") == (
        "Paul called George but",
        "he",
        "was out.",
    )
    with pytest.raises(ValueError, match="no \\[pronoun\\]"):
        bracketed_parts("no pronoun here")
    assert normalise("  A  b\tC ") == "a b c"


@pytest.mark.realdata
def test_matches_trichelair_on_at_least_90_percent_of_their_switchable_schemas(data_dir):
    rows = json.loads((data_dir / "wsc_switched" / "WSC_switched_label.json").read_text())
    matching, total, misses = measure_against_trichelair(rows)
    assert total == 131
    # Measured: 124/131 = 94.7%. The 7 misses are their own slips (a misspelt name,
    # "botray" for "bottom", an inconsistent "his") or rewrites beyond a switch.
    assert matching / total >= 0.90, misses
    assert matching >= 124


@pytest.mark.realdata
@pytest.mark.django_db
def test_switched_measure_command_prints_the_share(data_dir, capsys):
    from django.core.management import call_command

    call_command("switched_measure", "--file", str(data_dir / "wsc_switched" / "WSC_switched_label.json"))
    assert "124/131 = 94.7%" in capsys.readouterr().out
