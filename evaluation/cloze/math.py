"""The equations of the cloze analysis (Qasemi et al.; DESIGN section 8). numpy (and SciPy's Pearson r).

Experiment 1, for a masked word with vector ``w`` and top-k replacements ``r_i`` with
model probabilities ``p_i``:

    accuracy_uniform   = 1/k sum_i cos(r_i, w)
    accuracy_weighted  = sum_i p_i cos(r_i, w) / sum_i p_i
    precision_uniform  = 1/k sum_i cos(r_i, m),  m = 1/k sum_i r_i
    precision_weighted = sum_i p_i cos(r_i, m_p) / sum_i p_i,  m_p = sum_i p_i r_i / sum_i p_i

Experiment 2, for the word choices ``w`` of a pair, the candidates grouped into clusters
``c`` with centres ``mu_c`` and ``P(c)`` = summed probability of the candidates in ``c``:

    confidence(w) = sum_c (1 - dist(w, mu_c) / sum_{w'} dist(w', mu_c)) * P(c)

where ``w'`` ranges over the choices and ``dist`` is the Euclidean distance.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.stats
from numpy.typing import NDArray

Vector = NDArray[np.float64]


def cosine(a: Vector, b: Vector) -> float:
    """Cosine similarity; 0.0 when either vector is zero."""
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(np.dot(a, b) / (na * nb))


def _weights(probs: Sequence[float] | None, n: int) -> Vector:
    if probs is None:
        return np.full(n, 1.0 / n)
    p = np.asarray(probs, dtype=np.float64)
    if p.shape != (n,):
        raise ValueError(f"expected {n} probabilities, got {p.shape}")
    if np.any(p < 0):
        raise ValueError("probabilities must not be negative")
    total = float(p.sum())
    if total <= 0:
        return np.full(n, 1.0 / n)
    return p / total


def accuracy(word: Vector, replacements: Sequence[Vector], probs: Sequence[float] | None = None) -> float:
    """Mean cosine of the replacements to the masked word (weighted by ``probs`` if given)."""
    if len(replacements) == 0:
        raise ValueError("no replacements")
    weights = _weights(probs, len(replacements))
    return float(sum(wt * cosine(r, word) for wt, r in zip(weights, replacements, strict=True)))


def precision(replacements: Sequence[Vector], probs: Sequence[float] | None = None) -> float:
    """Mean cosine of the replacements to their mean (both weighted by ``probs`` if given)."""
    if len(replacements) == 0:
        raise ValueError("no replacements")
    weights = _weights(probs, len(replacements))
    matrix = np.vstack([np.asarray(r, dtype=np.float64) for r in replacements])
    centre = weights @ matrix
    return float(sum(wt * cosine(r, centre) for wt, r in zip(weights, matrix, strict=True)))


def dispersion_scores(
    word: Vector, replacements: Sequence[Vector], probs: Sequence[float]
) -> dict[str, float]:
    """The four scores of one masked word."""
    return {
        "accuracy_uniform": accuracy(word, replacements),
        "accuracy_weighted": accuracy(word, replacements, probs),
        "precision_uniform": precision(replacements),
        "precision_weighted": precision(replacements, probs),
    }


def confidences(
    choices: Sequence[Vector], centres: Sequence[Vector], cluster_probs: Sequence[float]
) -> list[float]:
    """Confidence of each word choice (see the module docstring).

    When every choice sits exactly on a centre (the distances sum to 0) that cluster
    cannot tell them apart and each gets ``1 - 1/n`` of its term.
    """
    if len(centres) != len(cluster_probs):
        raise ValueError("one probability per cluster")
    if len(choices) < 2:
        raise ValueError("need at least two choices")
    result = [0.0] * len(choices)
    for centre, p_c in zip(centres, cluster_probs, strict=True):
        dists = [float(np.linalg.norm(np.asarray(w) - np.asarray(centre))) for w in choices]
        total = sum(dists)
        for i, d in enumerate(dists):
            share = d / total if total > 0 else 1.0 / len(choices)
            result[i] += (1.0 - share) * float(p_c)
    return result


def pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Pearson's r (SciPy's ``pearsonr``); None when fewer than 3 points or a constant series."""
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError("series of different lengths")
    if a.size < 3 or np.ptp(a) == 0.0 or np.ptp(b) == 0.0:
        return None
    return float(scipy.stats.pearsonr(a, b).statistic)


def cluster_candidates(
    vectors: Sequence[Vector], probs: Sequence[float], *, seed: int = 0, covariance_type: str = "diag"
) -> tuple[list[Vector], list[float], list[int]]:
    """Two-component Gaussian mixture over the candidates' vectors.

    Returns the cluster centres (the mixture means), ``P(c)`` = summed probability of the
    candidates assigned to each cluster (probabilities renormalised over the candidates,
    so the ``P(c)`` sum to 1), and each candidate's cluster. With fewer than two distinct
    vectors there is nothing to split: one cluster, the mean, ``P = 1``.
    """
    from sklearn.mixture import GaussianMixture

    if len(vectors) == 0:
        raise ValueError("no candidates")
    matrix = np.vstack([np.asarray(v, dtype=np.float64) for v in vectors])
    weights = _weights(probs, len(vectors))
    if len(np.unique(matrix, axis=0)) < 2:
        return [matrix.mean(axis=0)], [1.0], [0] * len(vectors)
    mixture = GaussianMixture(n_components=2, covariance_type=covariance_type, random_state=seed)
    labels = [int(x) for x in mixture.fit_predict(matrix)]
    centres = [np.asarray(m, dtype=np.float64) for m in mixture.means_]
    cluster_probs = [float(weights[[i for i, lab in enumerate(labels) if lab == c]].sum()) for c in range(2)]
    return centres, cluster_probs, labels
