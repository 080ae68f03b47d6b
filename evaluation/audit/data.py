"""Input checks and the shared preparation of frozen features (no Django, no torch).

Two shapes of ``features`` (float, finite):

- ``(N, D)``: classification; ``labels`` are classes ``0..C-1`` (C >= 2, taken as
  ``labels.max() + 1``);
- ``(N, C, D)``: multiple choice, one row per option; ``labels`` index the right option.
  The classifier is one linear scorer shared by the options, softmax across them.
"""

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np
import numpy.typing as npt

from evaluation.audit.errors import AuditInputError


class Task(StrEnum):
    CLASSIFICATION = "classification"
    MULTIPLE_CHOICE = "multiple_choice"


@dataclass(frozen=True)
class Inputs:
    """Checked inputs: ``features`` float32 (standardised if asked), ``labels`` int64."""

    features: npt.NDArray[np.float32]
    labels: npt.NDArray[np.int64]
    task: Task
    classes: int

    @property
    def n(self) -> int:
        return int(self.labels.shape[0])


def check_inputs(features: Any, labels: Any, *, standardize: bool = True) -> Inputs:
    """Refuse what cannot be audited, with a message naming the input; return the
    features as float32 (z-scored per dimension over the whole set when ``standardize``:
    a fixed change of representation done once, before any split) and labels as int64."""
    if labels is None:
        raise AuditInputError("labels: none given; the audit needs the gold label of every item")
    x = np.asarray(features)
    if x.ndim not in (2, 3):
        raise AuditInputError(
            f"features: expected shape (N, D) or (N, C, D) for multiple choice, got {x.shape}"
        )
    if not np.issubdtype(x.dtype, np.floating) and not np.issubdtype(x.dtype, np.integer):
        raise AuditInputError(f"features: expected numbers, got dtype {x.dtype}")
    x = x.astype(np.float32, copy=True)
    y = np.asarray(labels)
    if y.ndim != 1 or y.shape[0] != x.shape[0]:
        raise AuditInputError(f"labels: expected shape ({x.shape[0]},) to match features, got {y.shape}")
    if y.size == 0:
        raise AuditInputError("labels: the set is empty")
    if not np.issubdtype(y.dtype, np.integer):
        if np.issubdtype(y.dtype, np.floating) and np.all(np.isfinite(y)) and np.all(y == np.round(y)):
            y = y.astype(np.int64)
        else:
            raise AuditInputError(f"labels: expected integer class indices, got dtype {y.dtype}")
    y = y.astype(np.int64)
    if x.shape[-1] == 0:
        raise AuditInputError("features: D is 0 (no feature dimensions)")
    if not np.all(np.isfinite(x)):
        raise AuditInputError("features: contain NaN or infinite values")
    if y.min() < 0:
        raise AuditInputError(f"labels: must be 0 or more, got {int(y.min())}")
    if x.ndim == 3:
        task, classes = Task.MULTIPLE_CHOICE, int(x.shape[1])
        if classes < 2:
            raise AuditInputError(f"features: multiple choice needs at least 2 options, got {classes}")
        if y.max() >= classes:
            raise AuditInputError(f"labels: must index one of the {classes} options, got {int(y.max())}")
    else:
        task, classes = Task.CLASSIFICATION, int(y.max()) + 1
        if np.unique(y).size < 2:
            raise AuditInputError("labels: all items have the same label; a classifier needs two classes")
    if standardize:
        x = standardized(x)
    return Inputs(features=x, labels=y, task=task, classes=classes)


def standardized(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Each feature dimension to mean 0, standard deviation 1 over all items (and options);
    constant dimensions become 0."""
    flat = x.reshape(-1, x.shape[-1])
    mean = flat.mean(axis=0, dtype=np.float64)
    std = flat.std(axis=0, dtype=np.float64)
    # below float32's resolution of the values: a constant dimension
    std[std <= 1e-6 * np.maximum(1.0, np.abs(mean))] = 1.0
    out = x - mean.astype(np.float32)
    out /= std.astype(np.float32)
    return out


def check_groups(groups: Any, n: int) -> npt.NDArray[np.int64] | None:
    """Group keys (any hashable values) as dense int codes, or None."""
    if groups is None:
        return None
    g = np.asarray(groups)
    if g.ndim != 1 or g.shape[0] != n:
        raise AuditInputError(f"groups: expected shape ({n},) to match features, got {g.shape}")
    _, codes = np.unique(g.astype(str) if g.dtype == object else g, return_inverse=True)
    return codes.astype(np.int64)
