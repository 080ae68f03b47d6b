"""Seeded synthetic sets with a planted artifact, for the audit's tests and bench (no
Django, no torch).

Each item has ``dim`` dimensions of Gaussian noise (no information about the label) and
one more "token" dimension per class (classification) or per option row (multiple
choice): on the ``leak`` share of items the token gives the label away (classification:
the token of the item's class is 1; multiple choice: the token is 1 on the right
option's row), elsewhere it is 0. Twin pairs: items 2i and 2i+1 form group i.
"""

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True)
class SyntheticSet:
    features: npt.NDArray[np.float32]
    labels: npt.NDArray[np.int64]
    leaked: npt.NDArray[np.bool_]
    groups: npt.NDArray[np.int64]


def leaky_set(
    n: int, *, dim: int = 32, leak: float = 0.3, classes: int = 2, options: int | None = None, seed: int = 0
) -> SyntheticSet:
    """``n`` items; ``options`` None: classification into ``classes`` classes, features
    (n, dim + classes); else multiple choice, features (n, options, dim + 1)."""
    rng = np.random.default_rng(seed)
    leaked = rng.random(n) < leak
    if options is None:
        labels = rng.integers(0, classes, n)
        noise = rng.normal(size=(n, dim))
        tokens = np.zeros((n, classes))
        tokens[leaked, labels[leaked]] = 1.0
        features = np.concatenate([noise, tokens], axis=1)
    else:
        labels = rng.integers(0, options, n)
        noise = rng.normal(size=(n, options, dim))
        tokens = np.zeros((n, options, 1))
        tokens[leaked, labels[leaked], 0] = 1.0
        features = np.concatenate([noise, tokens], axis=2)
    return SyntheticSet(
        features=features.astype(np.float32),
        labels=labels.astype(np.int64),
        leaked=leaked,
        groups=(np.arange(n) // 2).astype(np.int64),
    )
