"""Partial-input baselines: a linear classifier on frozen features of part of the input,
k-fold cross-validated (no Django; torch only inside ``partial_input_baseline``).

The caller computes the features of the partial input (candidates alone, context removed,
reason alone, statement alone); this module asks how well a classifier does on them.
Folds never split a group (a twin pair or a schema): groups are shuffled with the seed
and dealt, largest first, to the fold with the fewest items so far. Every fold of every
repeat trains at once as one batched model (``evaluation.audit.linear``). Beside the
accuracy: the majority baseline (the share of the most frequent label, or of the most
frequent right option), the Wilson 95% interval and the one-sided binomial test of the
correct count against the majority rate (``evaluation.metrics.significance``).
"""

from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import numpy.typing as npt

from evaluation.audit.data import check_groups, check_inputs
from evaluation.audit.errors import AuditInputError
from evaluation.metrics.significance import lucky_draw, wilson_interval


@dataclass(frozen=True)
class BaselineResult:
    """``accuracy``: the mean over repeats of the cross-validated accuracy (``accuracies``
    per repeat); ``correct`` = round(accuracy * n), the count the Wilson interval and the
    binomial test use (exact with one repeat). ``p_value``: P(X >= correct) for
    X ~ Binomial(n, majority_accuracy). Per item (input order): ``right_share`` the share
    of repeats that got it right, ``fold`` its fold in the first repeat."""

    n: int
    folds: int
    repeats: int
    grouped: bool
    accuracy: float
    accuracies: list[float]
    correct: int
    majority_label: int
    majority_accuracy: float
    wilson_low: float
    wilson_high: float
    p_value: float
    right_share: npt.NDArray[np.float64]
    fold: npt.NDArray[np.int64]
    params: dict[str, Any]

    def summary(self) -> dict[str, Any]:
        """Everything but the per-item arrays (JSON-ready)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("right_share", "fold")}


def group_folds(codes: npt.NDArray[np.int64], folds: int, rng: np.random.Generator) -> npt.NDArray[np.int64]:
    """Fold of each item such that a group's items share a fold: groups in a seeded random
    order, stably sorted by size (largest first), each to the fold with the fewest items."""
    sizes = np.bincount(codes)
    order = rng.permutation(sizes.size)
    order = order[np.argsort(-sizes[order], kind="stable")]
    load = np.zeros(folds, dtype=np.int64)
    fold_of_group = np.zeros(sizes.size, dtype=np.int64)
    for g in order:
        f = int(np.argmin(load))
        fold_of_group[g] = f
        load[f] += sizes[g]
    return fold_of_group[codes]


def partial_input_baseline(
    features: Any,
    labels: Any,
    *,
    groups: Any = None,
    folds: int = 5,
    seed: int = 0,
    repeats: int = 1,
    c: float = 1.0,
    max_iter: int = 500,
    tol: float = 1e-5,
    standardize: bool = True,
) -> BaselineResult:
    """Cross-validated accuracy of a logistic regression on ``features`` ((N, D) or
    (N, C, D)), folds grouped by ``groups`` when given, ``repeats`` fold draws (seeds
    ``seed``, then the same generator onwards)."""
    from evaluation.audit import linear  # torch: only on the worker that runs the audit

    inputs = check_inputs(features, labels, standardize=standardize)
    codes = check_groups(groups, inputs.n)
    if folds < 2:
        raise AuditInputError(f"folds: cross-validation needs at least 2 folds, got {folds}")
    if repeats < 1:
        raise AuditInputError(f"repeats: must be at least 1, got {repeats}")
    if codes is None:
        codes = np.arange(inputs.n, dtype=np.int64)
    n_groups = int(codes.max()) + 1
    if n_groups < folds:
        unit = "groups" if groups is not None else "items"
        raise AuditInputError(f"folds: {folds} folds need at least {folds} {unit}, got {n_groups}")
    rng = np.random.default_rng(seed)
    fold_of = np.stack([group_folds(codes, folds, rng) for _ in range(repeats)])  # (R, N)
    train = np.concatenate([fold_of[r][None, :] != np.arange(folds)[:, None] for r in range(repeats)])
    fitted = linear.fit_predict(inputs, train, c=c, max_iter=max_iter, tol=tol)
    rows = np.arange(repeats)[:, None] * folds + fold_of  # the model that held each item out
    predictions = np.take_along_axis(fitted.predictions, rows, axis=0)  # (R, N)
    right = predictions == inputs.labels[None, :]
    accuracies = [float(a) for a in right.mean(axis=1)]
    accuracy = float(np.mean(accuracies))
    counts = np.bincount(inputs.labels, minlength=inputs.classes)
    majority_label = int(np.argmax(counts))
    majority = float(counts[majority_label] / inputs.n)
    correct = int(round(accuracy * inputs.n))
    low, high = wilson_interval(correct, inputs.n)
    return BaselineResult(
        n=inputs.n,
        folds=folds,
        repeats=repeats,
        grouped=groups is not None,
        accuracy=accuracy,
        accuracies=accuracies,
        correct=correct,
        majority_label=majority_label,
        majority_accuracy=majority,
        wilson_low=low,
        wilson_high=high,
        p_value=lucky_draw(correct, inputs.n, majority),
        right_share=right.mean(axis=0).astype(np.float64),
        fold=fold_of[0].astype(np.int64),
        params={
            "folds": folds,
            "seed": seed,
            "repeats": repeats,
            "c": c,
            "max_iter": max_iter,
            "tol": tol,
            "standardize": standardize,
            "grouped": groups is not None,
            "task": str(inputs.task),
        },
    )
