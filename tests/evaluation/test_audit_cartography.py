"""Dataset cartography (evaluation.audit.cartography): the per-epoch record, its summary
statistics and the three regions. No database."""

import numpy as np
import pytest

from evaluation.audit.cartography import Region, cartography, regions
from evaluation.audit.errors import AuditInputError
from evaluation.audit.synthetic import leaky_set


def _set_with_flipped_labels(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 2, n)
    features = rng.normal(size=(n, 8))
    features[:, 0] += (2 * truth - 1) * 1.5
    flipped = rng.random(n) < 0.1
    return features.astype(np.float32), np.where(flipped, 1 - truth, truth), flipped


def test_items_with_wrong_gold_labels_land_in_hard_to_learn_and_leaked_ones_in_easy():
    features, labels, flipped = _set_with_flipped_labels()
    result = cartography(features, labels, epochs=6, seed=1)
    region = np.array([str(r) for r in result.regions])
    assert (region[flipped] == Region.HARD).mean() >= 0.9
    assert (region[~flipped] == Region.HARD).mean() <= 0.3
    assert result.confidence[flipped].mean() < 0.4 < result.confidence[~flipped].mean()

    data = leaky_set(1000, leak=0.3, options=2, seed=2)
    mc = cartography(data.features, data.labels, seed=3)
    mc_region = np.array([str(r) for r in mc.regions])
    assert (mc_region[data.leaked] == Region.EASY).mean() >= 0.8


def test_confidence_variability_and_correctness_summarise_the_epochs():
    features, labels, _ = _set_with_flipped_labels(300, seed=4)
    result = cartography(features, labels, epochs=4, seed=5)
    assert result.probabilities.shape == (300, 4) and result.correct.shape == (300, 4)
    assert np.allclose(result.confidence, result.probabilities.mean(axis=1))
    assert np.allclose(result.variability, result.probabilities.std(axis=1))
    assert np.allclose(result.correctness, result.correct.mean(axis=1))
    assert ((result.probabilities >= 0) & (result.probabilities <= 1)).all()
    # correct means the gold label had the highest probability: above 1/2 for two classes
    # (the first batch meets the zero weights: 1/2 each, the arg-max takes class 0)
    decided = result.probabilities != 0.5
    assert np.array_equal(result.correct[decided], result.probabilities[decided] > 0.5)
    assert result.params["epochs"] == 4 and result.params["seed"] == 5
    summary = result.summary()
    assert summary["items"] == 300 and sum(summary["regions"].values()) == 300
    assert summary["mean_confidence"] == pytest.approx(result.confidence.mean())


def test_the_same_seed_gives_the_same_map():
    features, labels, _ = _set_with_flipped_labels(200, seed=6)
    a = cartography(features, labels, seed=7)
    b = cartography(features, labels, seed=7)
    assert np.array_equal(a.probabilities, b.probabilities) and a.regions == b.regions


def test_regions_are_the_papers_thirds_with_confidence_first():
    confidence = np.array([0.95, 0.9, 0.85, 0.5, 0.55, 0.6, 0.1, 0.2, 0.3])
    variability = np.array([0.01, 0.3, 0.02, 0.4, 0.35, 0.05, 0.02, 0.3, 0.01])
    got = regions(confidence, variability, share=1 / 3)
    # item 1 is among the most variable too: the confidence region wins
    E, A, H, X = Region.EASY, Region.AMBIGUOUS, Region.HARD, Region.OTHER
    assert got == [E, E, E, A, A, X, H, H, H]


def test_fewer_than_two_epochs_or_no_labels_are_refused():
    features, labels, _ = _set_with_flipped_labels(50)
    with pytest.raises(AuditInputError, match="^epochs:"):
        cartography(features, labels, epochs=1)
    with pytest.raises(AuditInputError, match="^labels:"):
        cartography(features, None)
