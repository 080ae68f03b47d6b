"""The equations of the cloze analysis (Qasemi et al.; DESIGN section 8). numpy, SciPy, scikit-learn.

Two named sets of equations (``EQUATIONS``); ``paper`` is the default.

``paper``: Qasemi et al. as written. Experiment 1, for a masked word ``w`` and its top-k
replacements ``r_i`` with model probabilities ``p_i`` (equations 1-2; the weighted forms
"replace the uniform weight (the 1/k factor) with the model's confidence for each word"):

    accuracy_uniform   = 1/k sum_i cos(r_i, w)
    accuracy_weighted  =     sum_i p_i cos(r_i, w)
    precision_uniform  = 1/k sum_i cos(r_i, m),  m = 1/k sum_i r_i  (the plain mean)
    precision_weighted =     sum_i p_i cos(r_i, m)

The weights are not renormalised: with top-k probabilities summing to less than 1 the
weighted scores are smaller than a weighted mean would be. Experiment 2, for the word
choices ``w`` of a pair and the candidates grouped by a two-component Gaussian mixture
(scikit-learn's defaults: full covariances) into clusters ``c`` with centres ``mu_c``
(equations 3-5):

    dD(c, w)  = 1 - dist(w, mu_c) / sum_{w'} dist(w', mu_c),  dist = SciPy's cosine distance
    conf(w)   = sum_c dD(c, w) * P(c),   P(c) = sum of the probabilities of the words in c

``renormalised``: Winnow's first reading (before 23 Nov 2026), kept by name: weighted
forms divide by ``sum_i p_i`` and precision uses the weighted mean ``sum_i p_i r_i /
sum_i p_i``; ``dist`` is the Euclidean distance, ``P(c)`` is renormalised over the
candidates so that the clusters' probabilities sum to 1, diagonal covariances.

One fixed point in both: the mixture is seeded (``random_state``), so a run can be
repeated; scikit-learn's default would draw a new initialisation each time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.stats
from numpy.typing import NDArray
from scipy.spatial import distance as scipy_distance

Vector = NDArray[np.float64]


@dataclass(frozen=True)
class Equations:
    """One reading of the paper's equations (see the module docstring)."""

    name: str
    renormalise: bool  # weighted scores divided by sum p; weighted mean as the centre
    distance: str  # "cosine" (SciPy) or "euclidean", equation 3
    cluster_probability: str  # "sum" (equation 5) or "renormalised" (sums to 1)
    covariance_type: str  # the Gaussian mixture's covariances
    description: str


EQUATIONS: dict[str, Equations] = {
    "paper": Equations(
        name="paper",
        renormalise=False,
        distance="cosine",
        cluster_probability="sum",
        covariance_type="full",
        description="Qasemi et al. as written: p_i in place of 1/k, the plain mean, SciPy's cosine "
        "distance, P(c) the plain sum, scikit-learn's default (full) covariances",
    ),
    "renormalised": Equations(
        name="renormalised",
        renormalise=True,
        distance="euclidean",
        cluster_probability="renormalised",
        covariance_type="diag",
        description="weights divided by their sum, the weighted mean, Euclidean distance, P(c) "
        "summing to 1, diagonal covariances (Winnow before 23 Nov 2026)",
    ),
}
DEFAULT_EQUATIONS = "paper"


def equations_get(name: str) -> Equations:
    try:
        return EQUATIONS[name]
    except KeyError:
        raise ValueError(f"equations are one of {', '.join(EQUATIONS)}, not {name!r}") from None


def cosine(a: Vector, b: Vector) -> float:
    """Cosine similarity; 0.0 when either vector is zero."""
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(np.dot(a, b) / (na * nb))


def _probabilities(probs: Sequence[float], n: int) -> Vector:
    p = np.asarray(probs, dtype=np.float64)
    if p.shape != (n,):
        raise ValueError(f"expected {n} probabilities, got {p.shape}")
    if np.any(p < 0):
        raise ValueError("probabilities must not be negative")
    return p


def _weights(probs: Sequence[float] | None, n: int, *, renormalise: bool) -> Vector:
    """1/k each without ``probs``; else the probabilities as given (the paper) or divided by their sum."""
    if probs is None:
        return np.full(n, 1.0 / n)
    p = _probabilities(probs, n)
    if not renormalise:
        return p
    total = float(p.sum())
    if total <= 0:
        return np.full(n, 1.0 / n)
    return p / total


def accuracy(
    word: Vector,
    replacements: Sequence[Vector],
    probs: Sequence[float] | None = None,
    *,
    renormalise: bool = False,
) -> float:
    """Equation 1: mean cosine of the replacements to the masked word; with ``probs``, each
    cosine weighted by its probability (divided by their sum when ``renormalise``)."""
    if len(replacements) == 0:
        raise ValueError("no replacements")
    weights = _weights(probs, len(replacements), renormalise=renormalise)
    return float(sum(wt * cosine(r, word) for wt, r in zip(weights, replacements, strict=True)))


def precision(
    replacements: Sequence[Vector], probs: Sequence[float] | None = None, *, renormalise: bool = False
) -> float:
    """Equation 2: mean cosine of the replacements to their plain mean; with ``probs``, each
    cosine weighted by its probability. ``renormalise``: weights divided by their sum and
    the centre the weighted mean."""
    if len(replacements) == 0:
        raise ValueError("no replacements")
    weights = _weights(probs, len(replacements), renormalise=renormalise)
    matrix = np.vstack([np.asarray(r, dtype=np.float64) for r in replacements])
    centre = weights @ matrix if (renormalise and probs is not None) else matrix.mean(axis=0)
    return float(sum(wt * cosine(r, centre) for wt, r in zip(weights, matrix, strict=True)))


def dispersion_scores(
    word: Vector,
    replacements: Sequence[Vector],
    probs: Sequence[float],
    *,
    equations: str = DEFAULT_EQUATIONS,
) -> dict[str, float]:
    """The four scores of one masked word."""
    renormalise = equations_get(equations).renormalise
    return {
        "accuracy_uniform": accuracy(word, replacements),
        "accuracy_weighted": accuracy(word, replacements, probs, renormalise=renormalise),
        "precision_uniform": precision(replacements),
        "precision_weighted": precision(replacements, probs, renormalise=renormalise),
    }


def _distance(a: Vector, b: Vector, kind: str) -> float:
    if kind == "cosine":
        if not np.any(a) or not np.any(b):
            return 1.0  # SciPy gives nan for a zero vector: no direction, no similarity
        return float(scipy_distance.cosine(a, b))
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)))


def confidences(
    choices: Sequence[Vector],
    centres: Sequence[Vector],
    cluster_probs: Sequence[float],
    *,
    distance: str = "cosine",
) -> list[float]:
    """Equations 3-4: the confidence of each word choice.

    When every choice sits at distance 0 from a centre (the distances sum to 0) that
    cluster cannot tell them apart and each gets ``1 - 1/n`` of its term.
    """
    if distance not in ("cosine", "euclidean"):
        raise ValueError(f"distance is cosine or euclidean, not {distance!r}")
    if len(centres) != len(cluster_probs):
        raise ValueError("one probability per cluster")
    if len(choices) < 2:
        raise ValueError("need at least two choices")
    result = [0.0] * len(choices)
    for centre, p_c in zip(centres, cluster_probs, strict=True):
        dists = [_distance(np.asarray(w), np.asarray(centre), distance) for w in choices]
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
    vectors: Sequence[Vector],
    probs: Sequence[float],
    *,
    seed: int = 0,
    covariance_type: str = "full",
    renormalise: bool = False,
) -> tuple[list[Vector], list[float], list[int]]:
    """Two-component Gaussian mixture over the candidates' vectors (scikit-learn).

    Returns the cluster centres (the mixture means), ``P(c)`` = summed probability of the
    candidates assigned to each cluster (equation 5; divided by the candidates' total when
    ``renormalise``, so the ``P(c)`` sum to 1), and each candidate's cluster. With fewer
    than two distinct vectors there is nothing to split: one cluster, the mean.
    """
    from sklearn.mixture import GaussianMixture

    if len(vectors) == 0:
        raise ValueError("no candidates")
    matrix = np.vstack([np.asarray(v, dtype=np.float64) for v in vectors])
    weights = _weights(probs, len(vectors), renormalise=renormalise)
    if len(np.unique(matrix, axis=0)) < 2:
        return [matrix.mean(axis=0)], [float(weights.sum())], [0] * len(vectors)
    mixture = GaussianMixture(n_components=2, covariance_type=covariance_type, random_state=seed)
    labels = [int(x) for x in mixture.fit_predict(matrix)]
    centres = [np.asarray(m, dtype=np.float64) for m in mixture.means_]
    cluster_probs = [float(weights[[i for i, lab in enumerate(labels) if lab == c]].sum()) for c in range(2)]
    return centres, cluster_probs, labels
