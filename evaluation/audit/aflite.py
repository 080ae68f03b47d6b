"""AfLite: Algorithm 1 of Le Bras et al., "Adversarial Filters of Dataset Biases" (ICML
2020), on a pre-computed representation (no Django; torch only inside ``aflite``).

While the set S holds more than ``target_n`` items: draw ``m`` random partitions of S,
each with a training part of ``t`` items; train a linear classifier on each training part
(all ``m`` at once, ``evaluation.audit.linear``) and let it predict the items it did not
see; an item's predictability score is the share of correct predictions among the models
that held it out; remove the (up to) ``k`` items with the highest scores among those
scoring at least ``tau``; stop early when fewer than ``k`` reached ``tau`` (after removing
those). The loop does not stop part-way through a slice, so the set can end up to
``k - 1`` items below ``target_n``, as in the paper.

Partitions ignore groups (twin pairs may be split between training and held-out parts):
Algorithm 1 draws plain random partitions, and so does this. Ties in score at the edge of
a slice are broken by a seeded random key, not by item order.

Everything random comes from ``numpy.random.default_rng(seed)`` in one fixed order (per
iteration: the m partitions, then the tie keys), so the same inputs and parameters give
the same removals; ``evaluation.audit.reference`` draws the same partitions.
docs/filtering.md quotes the paper's algorithm and WinoGrande's settings.
"""

from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from evaluation.audit.data import Inputs, check_inputs
from evaluation.audit.errors import AuditInputError

#: The training-set size WinoGrande used; smaller sets get a smaller default (``resolved``).
WINOGRANDE_T = 10_000


@dataclass(frozen=True)
class AfliteParams:
    """Algorithm 1's parameters (defaults: WinoGrande's, docs/filtering.md) and the
    classifier's.

    ``t`` None: ``min(10,000, target_n - 1)``. ``target_n`` None: a quarter of the set
    (at least 2). ``c``: inverse L2 strength, as scikit-learn's ``C``. ``max_iter`` and
    ``tol``: the L-BFGS limits. ``standardize``: z-score each feature dimension over the
    whole input set once, before the first partition. ``float64``: check and finish the
    float32 solution in double precision and predict in it (``evaluation.audit.linear``)."""

    m: int = 64
    t: int | None = None
    k: int = 500
    tau: float = 0.75
    target_n: int | None = None
    seed: int = 0
    c: float = 1.0
    max_iter: int = 500
    tol: float = 1e-7
    standardize: bool = True
    float64: bool = True

    def resolved(self, n_items: int) -> "AfliteParams":
        """The parameters with ``target_n`` and ``t`` filled in for a set of ``n_items``,
        checked; refuses (naming the setting) what Algorithm 1 cannot run with."""
        if self.m < 1:
            raise AuditInputError(f"m: the number of partitions must be at least 1, got {self.m}")
        if self.k < 1:
            raise AuditInputError(f"k: the slice size must be at least 1, got {self.k}")
        if not 0.0 < self.tau <= 1.0:
            raise AuditInputError(f"tau: the threshold must be in (0, 1], got {self.tau}")
        if self.c <= 0:
            raise AuditInputError(f"c: the inverse regularisation strength must be positive, got {self.c}")
        if self.max_iter < 1:
            raise AuditInputError(f"max_iter: must be at least 1, got {self.max_iter}")
        target_n = self.target_n if self.target_n is not None else max(2, n_items // 4)
        if target_n >= n_items:
            raise AuditInputError(
                f"target_n: the target size ({target_n}) must be smaller than the set ({n_items} items)"
            )
        t = self.t if self.t is not None else min(WINOGRANDE_T, target_n - 1)
        if t < 1:
            raise AuditInputError(
                f"t: the training size must be at least 1; the set ({n_items} items) is too small "
                f"for target_n={target_n}"
            )
        if t >= target_n:
            raise AuditInputError(
                f"t: the training size ({t}) must be smaller than target_n ({target_n}) "
                f"so every partition holds items out (Algorithm 1: t < n)"
            )
        return replace(self, t=t, target_n=target_n)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class AfliteIteration:
    """One pass of the while loop: ``items_in`` = |S| before it, ``at_or_above_tau`` items
    scored >= tau, ``removed`` how many left (min(k, at_or_above_tau))."""

    iteration: int
    items_in: int
    at_or_above_tau: int
    removed: int
    mean_score: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class AfliteResult:
    """Per item (input order): ``kept``; ``removed_in`` the iteration (1, 2, ...) that
    removed it, 0 for kept items; ``scores`` its last predictability score (the one it
    was removed with, or the last iteration's for kept items). ``params``: every
    parameter as run (``t`` and ``target_n`` resolved), the seed included. ``stopped``:
    ``"early"`` (fewer than k reached tau), ``"target"`` (|S| <= target_n) or
    ``"max_iterations"`` (cut short by the caller)."""

    kept: npt.NDArray[np.bool_]
    removed_in: npt.NDArray[np.int64]
    scores: npt.NDArray[np.float64]
    iterations: list[AfliteIteration]
    params: dict[str, Any]
    stopped: str

    @property
    def removed(self) -> npt.NDArray[np.int64]:
        """Indices of the removed items, in input order."""
        return np.flatnonzero(~self.kept).astype(np.int64)

    def summary(self) -> dict[str, Any]:
        """What a run records beside the per-item arrays (JSON-ready)."""
        return {
            "params": self.params,
            "items": int(self.kept.size),
            "kept": int(self.kept.sum()),
            "removed": int((~self.kept).sum()),
            "stopped": self.stopped,
            "iterations": [it.as_dict() for it in self.iterations],
        }


def draw_partitions(rng: np.random.Generator, size: int, m: int, t: int) -> npt.NDArray[np.bool_]:
    """``(m, size)``: row j marks the ``t`` items of partition j's training part: the
    ``t`` smallest of a random key per item (on equal keys, the earlier items first, as a
    stable sort takes them)."""
    keys = rng.random((m, size))
    kth = np.partition(keys, t - 1, axis=1)[:, t - 1 : t]  # each row's t-th smallest key
    train = keys < kth
    edge = keys == kth
    if np.array_equal(edge.sum(axis=1), t - train.sum(axis=1)):  # no tie cut at the edge
        return train | edge
    order = np.argsort(keys, axis=1, kind="stable")[:, :t]
    train = np.zeros((m, size), dtype=bool)
    np.put_along_axis(train, order, True, axis=1)
    return train


def draw_tie_keys(rng: np.random.Generator, size: int) -> npt.NDArray[np.float64]:
    """A random key per item that orders equal scores at the edge of a slice."""
    return rng.random(size)


def predictability(
    predictions: npt.NDArray[np.int64], labels: npt.NDArray[np.int64], train: npt.NDArray[np.bool_]
) -> npt.NDArray[np.float64]:
    """Share of correct predictions among the models that held each item out (0 for an
    item no partition held out)."""
    held = ~train
    correct = ((predictions == labels[None, :]) & held).sum(axis=0)
    counts = held.sum(axis=0)
    return np.where(counts > 0, correct / np.maximum(counts, 1), 0.0)


#: ``fit(items, train)``: the m models of a pass, on the ``items`` listed (indices into
#: the inputs; ``train`` is ``(m, len(items))``) -> ``(m, len(items))`` predictions.
Fit = Callable[[npt.NDArray[np.int64], npt.NDArray[np.bool_]], npt.NDArray[np.int64]]


def aflite(
    features: Any,
    labels: Any,
    *,
    params: AfliteParams | None = None,
    max_iterations: int | None = None,
    on_iteration: Callable[[AfliteIteration], None] | None = None,
) -> AfliteResult:
    """Run Algorithm 1 on ``features`` ((N, D) or (N, C, D), see ``evaluation.audit.data``)
    and ``labels``; the m classifiers of an iteration train together as one batched model.
    ``max_iterations`` stops after that many passes of the while loop (not part of the
    algorithm: the bench compares the first passes with the scikit-learn loop);
    ``on_iteration`` is called after each pass (progress for a job, timing for the bench)."""
    from evaluation.audit import linear  # torch: only on the worker that runs the audit

    p = params or AfliteParams()
    inputs = check_inputs(features, labels, standardize=p.standardize)
    p = p.resolved(inputs.n)
    design = linear.Design.of(inputs, float64=p.float64)  # once: each pass selects its rows
    starts: list[linear.Fitted] = []

    def fit(items: npt.NDArray[np.int64], train: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
        # a pass after the first starts its m models at the mean of the last pass's (the
        # first pass, at a pilot model's): the path to the minima, not the minima
        fitted = linear.fit_predict(
            inputs,
            train,
            c=p.c,
            max_iter=p.max_iter,
            tol=p.tol,
            float64=p.float64,
            design=design.select(items),
            start=starts[-1].mean if starts else None,
            curvature=starts[-1].curvature if starts else None,
        )
        starts[:] = [fitted]
        return fitted.predictions

    return run(inputs, p, fit, max_iterations=max_iterations, on_iteration=on_iteration)


def run(
    inputs: Inputs,
    p: AfliteParams,
    fit: Fit,
    *,
    max_iterations: int | None = None,
    on_iteration: Callable[[AfliteIteration], None] | None = None,
) -> AfliteResult:
    """Algorithm 1's loop around any ``fit`` (m training masks -> m rows of predictions)."""
    assert p.t is not None and p.target_n is not None
    rng = np.random.default_rng(p.seed)
    n = inputs.n
    active = np.arange(n)
    removed_in = np.zeros(n, dtype=np.int64)
    scores = np.zeros(n, dtype=np.float64)
    iterations: list[AfliteIteration] = []
    stopped = "target"
    while active.size > p.target_n:
        if max_iterations is not None and len(iterations) >= max_iterations:
            stopped = "max_iterations"
            break
        train = draw_partitions(rng, active.size, p.m, p.t)
        tie = draw_tie_keys(rng, active.size)
        score = predictability(fit(active, train), inputs.labels[active], train)
        scores[active] = score
        candidates = np.flatnonzero(score >= p.tau)
        ranked = candidates[np.lexsort((tie[candidates], -score[candidates]))]
        chosen = ranked[: p.k]
        number = len(iterations) + 1
        removed_in[active[chosen]] = number
        iterations.append(
            AfliteIteration(
                iteration=number,
                items_in=int(active.size),
                at_or_above_tau=int(candidates.size),
                removed=int(chosen.size),
                mean_score=float(score.mean()),
            )
        )
        active = np.delete(active, chosen)
        if on_iteration is not None:
            on_iteration(iterations[-1])
        if chosen.size < p.k:
            stopped = "early"
            break
    return AfliteResult(
        kept=removed_in == 0,
        removed_in=removed_in,
        scores=scores,
        iterations=iterations,
        params=p.as_dict(),
        stopped=stopped,
    )
