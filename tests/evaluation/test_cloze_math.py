"""The cloze equations on hand-computed vectors (no model, no database)."""

import math

import numpy as np
import pytest
import scipy.stats

from evaluation.cloze import math as cm
from evaluation.cloze.text import STOP_WORDS, content_word_indexes, pair_diff, sentence_length, split_words

W = np.array([1.0, 0.0])
R1 = np.array([1.0, 0.0])
R2 = np.array([0.0, 1.0])


def test_cosine_of_parallel_orthogonal_and_zero_vectors():
    assert cm.cosine(np.array([2.0, 0.0]), np.array([5.0, 0.0])) == pytest.approx(1.0)
    assert cm.cosine(R1, R2) == pytest.approx(0.0)
    assert cm.cosine(np.array([1.0, 1.0]), np.array([-1.0, -1.0])) == pytest.approx(-1.0)
    assert cm.cosine(np.zeros(2), R1) == 0.0


def test_uniform_accuracy_is_the_plain_mean_of_the_cosines_to_the_masked_word():
    # cos(r1, w) = 1, cos(r2, w) = 0 -> 0.5
    assert cm.accuracy(W, [R1, R2]) == pytest.approx(0.5)


def test_weighted_accuracy_as_written_puts_each_probability_in_place_of_1_over_k():
    # Qasemi et al. eq. 1 with p_i for 1/k: 0.3 * cos(r1, w) + 0.1 * cos(r2, w) = 0.3 * 1 + 0.1 * 0
    assert cm.accuracy(W, [R1, R2], [0.3, 0.1]) == pytest.approx(0.3)
    assert cm.accuracy(W, [R1, R2], [0.75, 0.25]) == pytest.approx(0.75)


def test_renormalised_weighted_accuracy_divides_by_the_sum_of_the_probabilities():
    assert cm.accuracy(W, [R1, R2], [0.3, 0.1], renormalise=True) == pytest.approx(0.75)


def test_uniform_precision_is_the_mean_cosine_to_the_replacements_mean():
    # mean = (0.5, 0.5); cos of each unit axis to it = 1/sqrt(2)
    assert cm.precision([R1, R2]) == pytest.approx(1 / math.sqrt(2))


def test_weighted_precision_as_written_weights_the_cosines_to_the_plain_mean():
    # eq. 2 with p_i for 1/k, around mean(r_m) = (0.5, 0.5): 0.3/sqrt(2) + 0.1/sqrt(2)
    assert cm.precision([R1, R2], [0.3, 0.1]) == pytest.approx(0.4 / math.sqrt(2))
    # three replacements, by hand: r = (1,0), (0,1), (1,1); mean = (2/3, 2/3) along (1,1)
    r3 = np.array([1.0, 1.0])
    expected = 0.5 * (1 / math.sqrt(2)) + 0.2 * (1 / math.sqrt(2)) + 0.1 * 1.0
    assert cm.precision([R1, R2, r3], [0.5, 0.2, 0.1]) == pytest.approx(expected)


def test_renormalised_weighted_precision_uses_the_weighted_mean_and_weighted_average():
    # m_p = (0.75, 0.25), |m_p| = sqrt(0.625); cos(r1, m_p) = 0.75/|m_p|, cos(r2, m_p) = 0.25/|m_p|
    norm = math.sqrt(0.625)
    expected = 0.75 * (0.75 / norm) + 0.25 * (0.25 / norm)
    assert expected == pytest.approx(0.790569, abs=1e-6)
    assert cm.precision([R1, R2], [0.75, 0.25], renormalise=True) == pytest.approx(expected)
    assert cm.precision([R1, R2], [0.3, 0.1], renormalise=True) == pytest.approx(expected)


def test_the_two_named_equations_differ_only_in_the_weighted_scores():
    probs = [0.3, 0.1]
    paper = cm.dispersion_scores(W, [R1, R2], probs)
    renormalised = cm.dispersion_scores(W, [R1, R2], probs, equations="renormalised")
    assert paper["accuracy_uniform"] == renormalised["accuracy_uniform"] == pytest.approx(0.5)
    assert paper["precision_uniform"] == renormalised["precision_uniform"]
    assert paper["accuracy_weighted"] == pytest.approx(0.3)
    assert renormalised["accuracy_weighted"] == pytest.approx(0.75)
    with pytest.raises(ValueError, match="paper, renormalised"):
        cm.dispersion_scores(W, [R1, R2], probs, equations="mine")


def test_identical_replacements_are_perfectly_precise_but_not_necessarily_accurate():
    r = np.array([0.0, 3.0])
    scores = cm.dispersion_scores(W, [r, r, r], [0.5, 0.3, 0.2])
    assert scores["precision_uniform"] == pytest.approx(1.0)
    assert scores["precision_weighted"] == pytest.approx(1.0)
    assert scores["accuracy_uniform"] == pytest.approx(0.0)
    assert scores["accuracy_weighted"] == pytest.approx(0.0)


def test_dispersion_scores_reject_bad_input():
    with pytest.raises(ValueError, match="no replacements"):
        cm.accuracy(W, [])
    with pytest.raises(ValueError, match="probabilities"):
        cm.accuracy(W, [R1, R2], [1.0])
    with pytest.raises(ValueError, match="negative"):
        cm.precision([R1, R2], [1.0, -0.5])


def test_confidence_as_written_uses_scipys_cosine_distance():
    # choices w1 = (1, 0), w2 = (0, 1); clusters at (1, 1) with P = 0.5 and (1, 0) with P = 0.3
    # cluster 1: cosine distances 1 - 1/sqrt(2) each -> dD = 1/2 each
    # cluster 2: distances 0 and 1 -> dD = 1 - 0/1 = 1 and 1 - 1/1 = 0
    # w1 = 0.5 * 0.5 + 1 * 0.3 = 0.55;  w2 = 0.5 * 0.5 + 0 * 0.3 = 0.25 (P(c) not renormalised)
    conf = cm.confidences([R1, R2], [np.array([1.0, 1.0]), np.array([1.0, 0.0])], [0.5, 0.3])
    assert conf == pytest.approx([0.55, 0.25])
    from scipy.spatial.distance import cosine as scipy_cosine

    a, b, c = np.array([0.3, -1.2, 2.0]), np.array([1.5, 0.2, -0.4]), np.array([0.9, 0.9, 0.1])
    da, db = scipy_cosine(a, c), scipy_cosine(b, c)
    assert cm.confidences([a, b], [c], [0.8]) == pytest.approx(
        [(1 - da / (da + db)) * 0.8, (1 - db / (da + db)) * 0.8]
    )


def test_renormalised_confidence_uses_the_euclidean_distance():
    # choices w1 = (0, 0), w2 = (4, 0); clusters at (1, 0) with P = 0.6 and (4, 3) with P = 0.4
    # cluster 1: d = 1 and 3 -> 1 - 1/4 = 0.75, 1 - 3/4 = 0.25
    # cluster 2: d = 5 and 3 -> 1 - 5/8 = 0.375, 1 - 3/8 = 0.625
    # w1 = 0.75*0.6 + 0.375*0.4 = 0.6;  w2 = 0.25*0.6 + 0.625*0.4 = 0.4
    conf = cm.confidences(
        [np.array([0.0, 0.0]), np.array([4.0, 0.0])],
        [np.array([1.0, 0.0]), np.array([4.0, 3.0])],
        [0.6, 0.4],
        distance="euclidean",
    )
    assert conf == pytest.approx([0.6, 0.4])


def test_two_choices_confidences_sum_to_the_total_cluster_probability():
    rng = np.random.default_rng(3)
    choices = [rng.normal(size=5) for _ in range(2)]
    centres = [rng.normal(size=5) for _ in range(2)]
    assert sum(cm.confidences(choices, centres, [0.7, 0.3])) == pytest.approx(1.0)
    assert sum(cm.confidences(choices, centres, [0.5, 0.2])) == pytest.approx(0.7)
    assert sum(cm.confidences(choices, centres, [0.7, 0.3], distance="euclidean")) == pytest.approx(1.0)


def test_a_cluster_that_cannot_tell_the_choices_apart_splits_its_probability():
    same = np.array([1.0, 1.0])
    assert cm.confidences([same, same], [same], [1.0]) == pytest.approx([0.5, 0.5])


def test_confidence_rejects_mismatched_clusters_and_single_choices():
    with pytest.raises(ValueError, match="one probability per cluster"):
        cm.confidences([R1, R2], [R1], [0.5, 0.5])
    with pytest.raises(ValueError, match="two choices"):
        cm.confidences([R1], [R1], [1.0])


def test_mixture_splits_two_obvious_groups_and_sums_their_probabilities():
    vectors = [np.array([0.0, 0.0]), np.array([0.1, 0.0]), np.array([10.0, 10.0]), np.array([10.1, 10.0])]
    for covariance in ("full", "diag"):
        centres, probs, labels = cm.cluster_candidates(
            vectors, [0.2, 0.1, 0.15, 0.05], seed=0, covariance_type=covariance
        )
        assert labels[0] == labels[1] != labels[2] == labels[3]
        near = labels[0]
        # equation 5: P(c) is the plain sum of the words' probabilities (0.2 + 0.1, 0.15 + 0.05)
        assert probs[near] == pytest.approx(0.3)
        assert probs[1 - near] == pytest.approx(0.2)
        assert np.allclose(centres[near], [0.05, 0.0], atol=1e-3)
    _, renormalised, labels = cm.cluster_candidates(vectors, [0.2, 0.1, 0.15, 0.05], seed=0, renormalise=True)
    assert renormalised[labels[0]] == pytest.approx(0.6)


def test_the_default_mixture_is_scikit_learns_default_with_two_components():
    from sklearn.mixture import GaussianMixture

    rng = np.random.default_rng(7)
    vectors = [rng.normal(size=4) for _ in range(10)]
    centres, _, labels = cm.cluster_candidates(vectors, [0.1] * 10, seed=3)
    reference = GaussianMixture(n_components=2, random_state=3)
    assert reference.covariance_type == "full"
    assert labels == [int(x) for x in reference.fit_predict(np.vstack(vectors))]
    assert np.allclose(np.vstack(centres), reference.means_)


def test_mixture_of_identical_candidates_is_one_cluster():
    v = np.array([1.0, 2.0])
    centres, probs, labels = cm.cluster_candidates([v, v, v], [0.2, 0.2, 0.1], seed=0)
    assert len(centres) == 1 and probs == pytest.approx([0.5]) and labels == [0, 0, 0]


def test_pearson_matches_scipy_and_is_none_when_undefined():
    x = [0.1, 0.5, 0.2, 0.9, 0.4]
    y = [0.3, 0.4, 0.1, 0.8, 0.7]
    assert cm.pearson(x, y) == pytest.approx(scipy.stats.pearsonr(x, y).statistic)
    assert cm.pearson([1, 2], [2, 3]) is None
    assert cm.pearson([1, 1, 1], [1, 2, 3]) is None


def test_content_words_leave_out_stop_words_and_punctuation():
    words = split_words("He poured orange juice on his cereal.")
    assert [w.text for w in words] == ["He", "poured", "orange", "juice", "on", "his", "cereal", "."]
    assert [words[i].text for i in content_word_indexes(words)] == ["poured", "orange", "juice", "cereal"]
    assert sentence_length(words) == 7
    assert {"the", "he", "on", "his", "is"} <= STOP_WORDS


def test_split_words_keeps_offsets_so_a_word_can_be_cut_out():
    text = "I don't like it, Sam."
    words = split_words(text)
    assert [w.text for w in words] == ["I", "don't", "like", "it", ",", "Sam", "."]
    assert all(text[w.start : w.end] == w.text for w in words)


def test_pair_diff_finds_a_one_word_difference_at_the_same_position():
    diff, reason = pair_diff("He drinks apple.", "He drinks milk.")
    assert reason == ""
    assert diff is not None
    assert diff.choices == ("apple", "milk")
    assert (diff.prefix, diff.suffix) == ("He drinks ", ".")
    assert diff.word_position == 2


def test_pair_diff_finds_a_phrase_and_ignores_case_in_the_shared_part():
    diff, _ = pair_diff("He poured orange juice on his cereal.", "he poured milk on his cereal.")
    assert diff is not None
    assert diff.choices == ("orange juice", "milk")
    assert diff.choice_words == (("orange", "juice"), ("milk",))
    assert diff.suffix == " on his cereal."


def test_pair_diff_refuses_what_cannot_be_masked_as_one_span():
    assert pair_diff("A dog barks.", "A dog barks.") == (None, "identical")
    assert pair_diff("A dog barks.", "A big dog barks.") == (None, "insertion")
    assert pair_diff("A dog barks.", "A dog barks!") == (None, "punctuation")
    assert pair_diff("I eat a very big red apple", "I eat nothing", max_span_words=3) == (
        None,
        "span too long",
    )
    one, _ = pair_diff("I like summer", "I like a winter", max_span_words=2)
    assert one is not None and one.choices == ("summer", "a winter")
