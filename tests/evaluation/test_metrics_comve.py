import csv
import math

import pytest
from nltk.translate.bleu_score import corpus_bleu as nltk_corpus_bleu

from evaluation.metrics.comve import (
    choice_accuracy,
    corpus_bleu,
    length_normalised_choice,
    subtask_c_bleu,
    write_submission,
)

CAT = "the cat is on the mat right now".split()
CAT_REFS = ["the cat is on the mat".split(), "a cat is sitting on the mat right now".split()]


def test_bleu_of_a_perfect_match_is_one():
    r = corpus_bleu([[CAT]], [CAT])
    assert r.bleu == 1.0 and r.brevity_penalty == 1.0


def test_bleu_clips_ngrams_by_the_best_reference_and_has_no_smoothing():
    # hyp "the cat sat on the mat" vs two refs; by hand:
    # 1-grams 5/6 (the x2 clipped at 2, sat unmatched), 2-grams 3/5, 3-grams 1/4, 4-grams 0/3
    refs = [["the cat is on the mat".split(), "there is a cat on the mat".split()]]
    r = corpus_bleu(refs, ["the cat sat on the mat".split()])
    assert r.matches == (5, 3, 1, 0) and r.possible == (6, 5, 4, 3)
    assert r.bleu == 0.0  # a zero 4-gram precision and no smoothing
    smoothed = corpus_bleu(refs, ["the cat sat on the mat".split()], smooth=True)
    assert smoothed.bleu == pytest.approx(((6 / 7) * (4 / 6) * (2 / 5) * (1 / 4)) ** 0.25)


def test_bleu_brevity_penalty_uses_the_shortest_reference_not_the_closest():
    # 8 candidate tokens; references of 6 and 9 tokens. Shortest: r=6 < c, no penalty.
    r = corpus_bleu([CAT_REFS], [CAT])
    assert r.precisions == (1.0, 1.0, 1.0, 1.0)
    assert r.reference_length == 6 and r.brevity_penalty == 1.0 and r.bleu == 1.0
    # nltk takes the closest reference (9 tokens): exp(1 - 9/8). Not the official scorer.
    assert nltk_corpus_bleu([CAT_REFS], [CAT]) == pytest.approx(math.exp(1 - 9 / 8))


def test_bleu_sums_counts_over_the_corpus_by_hand():
    refs = [CAT_REFS, ["a dog barks loudly".split(), "the dog barks".split()]]
    hyps = [CAT, "a dog sleeps".split()]
    r = corpus_bleu(refs, hyps)
    assert r.matches == (10, 8, 6, 5) and r.possible == (11, 9, 7, 5)
    assert (r.translation_length, r.reference_length) == (11, 9)
    assert r.bleu == pytest.approx((10 / 11 * 8 / 9 * 6 / 7 * 1) ** 0.25)


def test_bleu_brevity_penalty_when_candidates_are_short_by_hand_and_as_nltk():
    # Candidates shorter than every reference and at least 4 tokens long: there nltk's
    # corpus_bleu computes the same thing (closest == shortest reference).
    refs = [
        ["the cat is on the mat".split(), "the cat is on the red mat".split()],
        ["a dog is barking loudly".split(), "a dog is barking at night".split()],
    ]
    hyps = ["the cat is on the".split(), "a dog is barking".split()]
    r = corpus_bleu(refs, hyps)
    assert (r.translation_length, r.reference_length) == (9, 11)
    assert r.precisions == (1.0, 1.0, 1.0, 1.0)
    assert r.brevity_penalty == pytest.approx(math.exp(1 - 11 / 9))
    assert r.bleu == pytest.approx(nltk_corpus_bleu(refs, hyps))


def test_nltk_differs_from_the_official_scorer_on_candidates_under_four_tokens():
    # nltk counts max(1, n) possible n-grams per sentence; the official scorer counts n.
    refs = [[["the", "cat", "is", "on", "the", "mat"]], [["a", "dog", "barks"]]]
    hyps = [["the", "cat", "is", "on", "the"], ["a", "dog"]]
    r = corpus_bleu(refs, hyps)
    assert r.possible == (7, 5, 3, 2)
    assert r.bleu == pytest.approx(math.exp(1 - 9 / 7))
    assert nltk_corpus_bleu(refs, hyps) < r.bleu - 0.05


def test_subtask_c_tokenises_on_whitespace_and_drops_empty_references():
    refs = {"1": ["The cat is on the mat.", "", "A cat sits."], "2": ["Dogs   bark.", "dogs bark"]}
    preds = {"1": "The cat is on the mat.", "2": "Dogs bark."}
    r = subtask_c_bleu(refs, preds)
    # "mat." keeps its full stop and "Dogs"/"dogs" differ in case: no normalisation at all
    assert r.reference_length == 3 + 2
    assert r.translation_length == 6 + 2
    assert r.bleu == pytest.approx(1.0)
    assert r.as_dict()["bleu_percent"] == 100.0


def test_subtask_c_needs_one_prediction_per_id():
    with pytest.raises(ValueError, match="missing prediction for id '2'"):
        subtask_c_bleu({"1": ["a b"], "2": ["c d"]}, {"1": "a b"})
    with pytest.raises(ValueError, match="1 extra predictions, for example: 3"):
        subtask_c_bleu({"1": ["a b"]}, {"1": "a b", "3": "x"})
    with pytest.raises(ValueError, match="id '1': no reference sentence"):
        subtask_c_bleu({"1": ["", ""]}, {"1": "a b"})


def test_empty_predictions_give_zero_where_the_official_script_divides_by_zero():
    r = corpus_bleu([[["a", "b"]]], [[]])
    assert r.bleu == 0.0 and r.translation_length == 0


def test_choice_accuracy_compares_labels_as_strings():
    gold = {"1": "0", "2": "1", "3": "1"}
    assert choice_accuracy(gold, {"1": "0", "2": "0", "3": "1"}).correct == 2
    with pytest.raises(ValueError, match="missing prediction for id '3'"):
        choice_accuracy(gold, {"1": "0", "2": "0"})


def test_submission_files_have_no_header_and_quote_commas(tmp_path):
    path = tmp_path / "subtaskC_answers.csv"
    assert write_submission(path, [("1175", 'A bed, too "heavy"'), ("452", "plain")]) == 2
    assert list(csv.reader(path.open(newline=""))) == [["1175", 'A bed, too "heavy"'], ["452", "plain"]]
    assert path.read_text().splitlines()[1] == "452,plain"


def test_real_comve_test_set_bleu_of_copying_the_false_statement_matches_the_official_scorer(data_dir):
    # The official scorer (taskC_scorer.py @ ce9430a), run by hand on the same input,
    # printed "BLEU score: 17.2340." (float 0.17233992235000792); see docs/evaluation.md.
    folder = data_dir / "comve" / "test"
    with (folder / "subtaskC_gold_answers.csv").open(encoding="utf-8", errors="replace", newline="") as f:
        refs = {row[0]: row[1:4] for row in csv.reader(f)}
    with (folder / "subtaskC_test_data.csv").open(encoding="utf-8", newline="") as f:
        preds = {row["id"]: row["FalseSent"] for row in csv.DictReader(f)}
    r = subtask_c_bleu(refs, preds)
    assert len(refs) == 1000
    assert f"{r.bleu * 100:.4f}" == "17.2340"
    assert r.bleu == pytest.approx(0.17233992235000792, abs=1e-15)


def test_length_normalised_choice_divides_by_characters_by_hand():
    # totals prefer the short option; per character (-6/3 = -2, -10/10 = -1, -9/4 = -2.25)
    # the long one, as lm-evaluation-harness's acc_norm would
    scores, texts = [-6.0, -10.0, -9.0], ["abc", "abcdefghij", "abcd"]
    assert length_normalised_choice(scores, texts) == 1
    assert length_normalised_choice(scores, texts, lowest=True) == 2  # subtask A: the least likely
    assert length_normalised_choice([-2.0, -4.0], ["ab", "abcd"]) == 0  # a tie goes to the first
    with pytest.raises(ValueError, match="one score per text"):
        length_normalised_choice([-1.0], ["a", "b"])


def test_subtask_b_sentence_and_perplexity_as_the_papers_write_them():
    from evaluation.metrics.comve import COMVE_RULES, explanation_sentence, lowest, perplexity

    # Wang et al. 2019 section 4's example, built exactly
    assert (
        explanation_sentence("he put an elephant into the fridge", "an elephant cannot eat a fridge")
        == '"he put an elephant into the fridge" is against common sense because an elephant cannot eat a fridge'
    )
    # exp of the negative mean log-probability: -6 over 3 tokens -> e^2
    assert perplexity(-6.0, 3) == pytest.approx(math.exp(2.0))
    with pytest.raises(ValueError, match="at least one token"):
        perplexity(-1.0, 0)
    assert lowest([3.0, 1.0, 1.0]) == 1  # ties: the first
    assert set(COMVE_RULES["a"]) == {"perplexity", "total", "per_character"}
    assert set(COMVE_RULES["b"]) == {"perplexity", "continuation", "continuation_per_character"}
