"""AfLite as a plain scikit-learn loop: the yardstick for ``evaluation.audit.aflite``
(no Django, no torch).

Algorithm 1 written out directly, one ``LogisticRegression`` (lbfgs, L2, the same ``C``)
per partition in a Python loop, on the same checked and standardised features, with the
same random partitions and tie keys drawn in the same order from the same seed
(``draw_partitions``, ``draw_tie_keys``), in double precision. Multiple choice with 2 options is the binary
problem on the difference of the two options' features without intercept (the softmax
of a shared scorer over two options is the sigmoid of the score difference); more
options have no scikit-learn counterpart and are refused.
"""

from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression

from evaluation.audit.aflite import (
    AfliteIteration,
    AfliteParams,
    AfliteResult,
    draw_partitions,
    draw_tie_keys,
)
from evaluation.audit.data import Task, check_inputs
from evaluation.audit.errors import AuditInputError


def aflite_reference(
    features: Any,
    labels: Any,
    *,
    params: AfliteParams | None = None,
    max_iterations: int | None = None,
) -> AfliteResult:
    """Algorithm 1 with scikit-learn (``C`` = ``params.c``, ``tol`` = ``params.tol``, the
    stopping test Winnow's solver meets too); ``max_iterations`` stops after that many
    passes of the while loop (the bench times the first passes only at full scale)."""
    p = params or AfliteParams()
    inputs = check_inputs(features, labels, standardize=p.standardize)
    p = p.resolved(inputs.n)
    assert p.t is not None and p.target_n is not None
    x, y = inputs.features.astype(np.float64), inputs.labels
    if inputs.task is Task.MULTIPLE_CHOICE:
        if inputs.classes != 2:
            raise AuditInputError(
                "features: the scikit-learn reference handles multiple choice with 2 options only"
            )
        x = x[:, 1, :] - x[:, 0, :]
    intercept = inputs.task is Task.CLASSIFICATION
    rng = np.random.default_rng(p.seed)
    active = np.arange(inputs.n)
    removed_in = np.zeros(inputs.n, dtype=np.int64)
    scores = np.zeros(inputs.n, dtype=np.float64)
    iterations: list[AfliteIteration] = []
    stopped = "target"
    while active.size > p.target_n:
        if max_iterations is not None and len(iterations) >= max_iterations:
            stopped = "max_iterations"
            break
        size = active.size
        train = draw_partitions(rng, size, p.m, p.t)
        tie = draw_tie_keys(rng, size)
        right = np.zeros(size)
        seen = np.zeros(size)
        for j in range(p.m):
            model = LogisticRegression(C=p.c, fit_intercept=intercept, max_iter=10_000, tol=p.tol)
            model.fit(x[active[train[j]]], y[active[train[j]]])
            held = ~train[j]
            predicted = model.predict(x[active[held]])
            right[held] += predicted == y[active[held]]
            seen[held] += 1
        score = np.where(seen > 0, right / np.maximum(seen, 1), 0.0)
        scores[active] = score
        ranked = sorted((i for i in range(size) if score[i] >= p.tau), key=lambda i: (-score[i], tie[i]))
        chosen = np.array(ranked[: p.k], dtype=np.int64)
        number = len(iterations) + 1
        removed_in[active[chosen]] = number
        iterations.append(
            AfliteIteration(
                iteration=number,
                items_in=int(size),
                at_or_above_tau=len(ranked),
                removed=int(chosen.size),
                mean_score=float(score.mean()),
            )
        )
        active = np.delete(active, chosen)
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
