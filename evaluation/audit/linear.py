"""Many L2-regularised logistic regressions trained at once (torch; no Django).

The models share one feature matrix and differ in which items they train on: a
``(m, N)`` boolean mask. Their weights are one tensor, ``(D, m*K)``, so every evaluation
is one matrix product ``X @ W`` over all N items (memory-light: no per-model copy of the
training rows) and one ``X^T G`` for the gradient; the loss of item i for model j counts
only where ``train[j, i]``. Each model minimises scikit-learn's ``LogisticRegression``
objective (lbfgs, L2) divided by ``C * t_j``: the mean log loss over its ``t_j`` training
items plus ``|W_j|^2 / (2 C t_j)``, the intercept unpenalised.

The optimiser is L-BFGS run for every model at once but **per model**: each keeps its own
curvature pairs, step length (backtracking to the Armijo condition) and stopping test
(its largest gradient entry below ``tol``), as m separate scikit-learn fits would; only
the arithmetic is shared. (One L-BFGS over the sum of the m objectives reaches the same
minima but shares one step length and mixes the models' curvature: about three times as
many evaluations.) ``fit_predict`` shortens the path, not the objective: all models start
from a pilot model's weights (or a given start), the iterations run in float32, a float64
stage evaluates the models whose float32 gradient met the test narrowly, and L-BFGS's
initial Hessian is the curvature the models share (the features' weighted
Gram matrix, D x D, factorised once, or taken from an earlier fit on similar items:
AfLite makes it once per run), so the first steps are near-Newton ones. For two classes
or options the loss counts each model's training items gathered from ``X @ W``.

- classification, 2 classes: one weight vector and an intercept (a sigmoid), as
  scikit-learn fits binary problems;
- classification, C > 2: multinomial softmax, weights ``(D, C)`` and ``C`` intercepts;
- multiple choice ``(N, C, D)``: one scorer ``w`` shared by the options, softmax across
  them, no intercept (it would cancel); computed on the differences ``x_c - x_0`` (the
  same softmax, one row fewer per item).

Imported by the audit's functions inside their bodies, so the modules the web process
imports never load torch.
"""

import copy
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import torch

from evaluation.audit.data import Inputs, Task

#: Curvature pairs each model keeps (scipy's L-BFGS-B default, as scikit-learn uses).
HISTORY = 10

#: The pilot's stopping test (largest gradient entry): it only gives the models a start.
PILOT_TOL = 1e-5

#: The pilot trains on every PILOT_STRIDE-th item.
PILOT_STRIDE = 2

#: In float32 the Armijo test allows this much of |f| for the objective's rounding (the
#: float32 gradient is accurate to about 1e-8 here, the objective to about 1e-9 of its
#: size: without the allowance, steps near the minimum look like no decrease).
FLOAT32_SLACK = 1e-7

#: How far below ``tol`` a model's largest float32 gradient entry must be for the float64
#: stage to take it as met without evaluating the model in float64 (`float32_margin`): a
#: share of ``tol`` and at least an absolute amount. The float32 gradient's rounding error
#: (measured against float64 at the same weights) is about 1e-8 at WinoGrande's scale and
#: 3e-8 with t = 100 (tests/evaluation/test_audit_linear.py): at tol 1e-6 the margin is
#: 2.5e-7, at the default 1e-7 it is 5e-8, above the largest error measured.
FLOAT32_GRADIENT_ERROR = 0.25
FLOAT32_GRADIENT_ABSOLUTE = 5e-8


def float32_margin(tol: float) -> float:
    """What a float32 gradient must stay below ``tol`` by for float64 to trust it."""
    return max(FLOAT32_GRADIENT_ERROR * tol, FLOAT32_GRADIENT_ABSOLUTE)


#: Items (at most, evenly spaced) whose features give the pilot's curvature.
PILOT_CURVATURE_ROWS = 10_000

#: Items (at most, evenly spaced) whose features give the shared curvature.
CURVATURE_ROWS = 50_000


@dataclass(frozen=True)
class Design:
    """The inputs as the models compute on them: per item its rows of the design matrix
    (the features; for multiple choice the differences ``x_c - x_0``, ``C - 1`` rows) in
    float32 and, when ``float64``, in float64 (the exact differences of the float32
    features), with the labels. Made once (``of``); a loop over subsets of the items
    (AfLite's passes) only selects rows (``select``) instead of converting again. A
    selection keeps the whole float64 array and the items' ``index`` in it, and copies
    float64 rows only when asked (``rows64_of``, ``x``)."""

    rows32: npt.NDArray[np.float32]  # (N, rows per item, D)
    rows64: npt.NDArray[np.float64] | None  # every item's, when ``index`` is given
    labels: npt.NDArray[np.int64]
    task: Task
    classes: int
    index: npt.NDArray[np.int64] | None = None  # this design's items in ``rows64``

    @classmethod
    def of(cls, inputs: Inputs, *, float64: bool = True) -> "Design":
        features = np.ascontiguousarray(inputs.features, dtype=np.float32)
        if inputs.task is Task.MULTIPLE_CHOICE:
            # The softmax of scores w.x_c equals that of w.(x_c - x_0) with a 0 for option 0:
            # the same function on C - 1 rows per item instead of C.
            head, rest = features[:, :1, :], features[:, 1:, :]
            rows32 = np.subtract(rest, head, dtype=np.float32)
            rows64 = np.subtract(rest, head, dtype=np.float64) if float64 else None
        else:
            rows32 = features[:, None, :]
            rows64 = features[:, None, :].astype(np.float64) if float64 else None
        return cls(
            rows32=rows32, rows64=rows64, labels=inputs.labels, task=inputs.task, classes=inputs.classes
        )

    @property
    def n(self) -> int:
        return int(self.labels.shape[0])

    def select(self, items: npt.NDArray[np.int64], *, float64: bool = True) -> "Design":
        """The same for the ``items`` listed (in that order); without ``float64`` the
        float64 rows are left out."""
        keep = self.rows64 is not None and float64
        return Design(
            rows32=np.take(self.rows32, items, axis=0),
            rows64=self.rows64 if keep else None,
            labels=self.labels[items],
            task=self.task,
            classes=self.classes,
            index=(items if self.index is None else self.index[items]) if keep else None,
        )

    def rows64_of(self, items: npt.NDArray[np.int64] | None = None) -> npt.NDArray[np.float64]:
        """``(len(items), rows per item, D)`` float64 rows of the ``items`` listed (all
        when None); converted from the float32 rows when none were made."""
        if self.rows64 is None:
            rows = self.rows32 if items is None else self.rows32[items]
            return rows.astype(np.float64)
        if self.index is None:
            return self.rows64 if items is None else self.rows64[items]
        return np.take(self.rows64, self.index if items is None else self.index[items], axis=0)

    def x(self, dtype: torch.dtype) -> torch.Tensor:
        """``(N * rows per item, D)`` in ``dtype``."""
        if dtype == torch.float64:
            return torch.from_numpy(self.rows64_of()).reshape(-1, self.rows32.shape[-1])
        return torch.from_numpy(self.rows32).reshape(-1, self.rows32.shape[-1])


@dataclass(frozen=True)
class Fitted:
    """Per model (rows) and item (columns): the predicted class or option, and the
    probability the model gives the gold label. ``steps``: L-BFGS iterations run (the
    slowest model's); ``evaluations``: batched objective evaluations; ``mean``: the mean
    of the models' parameters (a start for a later fit on similar items);
    ``float64_models``: how many models the float64 stage evaluated; ``curvature``: the
    H0 the stages used (for a later fit on similar items)."""

    predictions: npt.NDArray[np.int64]
    gold_probability: npt.NDArray[np.float32]
    steps: int
    evaluations: int
    mean: npt.NDArray[np.float64]
    float64_models: int
    curvature: "Precondition"


def fit_predict(
    inputs: Inputs,
    train: npt.NDArray[np.bool_],
    *,
    c: float = 1.0,
    max_iter: int = 500,
    tol: float = 1e-6,
    float64: bool = True,
    design: Design | None = None,
    start: npt.NDArray[np.float64] | None = None,
    curvature: "Precondition | None" = None,
) -> Fitted:
    """Train one model per row of ``train`` (``(m, N)``, True where the item is in that
    model's training set) and predict every item with every model. ``design``: the
    inputs already made into design rows (``Design.of(inputs)``, or a ``select`` of them;
    ``inputs`` is then not read), for a caller that fits many times on the same items.

    The path to the m minima (the objective is each model's own, see the module's doc):

    1. ``start`` (``(P,)``, e.g. the ``mean`` of an earlier fit on similar items) for
       every model, or a **pilot**: one model of the same objective (the models' mean L2
       term) on every other item, alone, in float32 to ``PILOT_TOL``;
    2. the m models in **float32** (matrix products twice as fast as float64) to ``tol``,
       with ``float64`` to ``tol - float32_margin(tol)`` (the margin the float32
       gradient's rounding can be trusted with; one more float32 step is cheaper than a
       float64 evaluation), H0 ``curvature`` (the H0 of an earlier fit on similar items,
       ``Fitted.curvature``) or the shared curvature at the start
       (``_Batched.preconditioner``);
    3. with ``float64`` (the default), **double precision**, as scikit-learn computes on
       float64 input: a model whose largest float32 gradient entry is still above
       ``tol - float32_margin(tol)`` (its float32 line search found no decrease
       before) is evaluated in float64 and finished there (the same H0); the predictions are
       float64's (``_Batched.predict``: for two classes or options the float32 product
       with every score its rounding bound cannot sign computed again in float64), so an
       item a hair from a model's decision boundary gets the same prediction.

    ``steps`` and ``evaluations`` count stages 2 and 3."""
    if design is None:
        design = Design.of(inputs, float64=float64)
    with torch.no_grad():
        fast = _Batched(design, train, c=c, dtype=torch.float32)
        theta = torch.zeros(fast.m, fast.size, dtype=torch.float32)
        if start is not None:
            theta = (
                torch.from_numpy(np.asarray(start, dtype=np.float32))
                .view(1, fast.size)
                .expand(fast.m, -1)
                .clone()
            )
        elif fast.m > 1:
            theta = (
                _pilot(design, fast, max_iter=max_iter, tol=max(tol, PILOT_TOL)).expand(fast.m, -1).clone()
            )
        h0 = curvature if curvature is not None else fast.preconditioner(theta)
        # with the float64 stage, float32 goes on to the margin that float64 trusts
        # without evaluating (float32_margin): one float32 step is cheaper than
        # a float64 evaluation; a model that cannot get there in float32 is finished in float64
        # (below a tol of about 6.7e-8 nothing float32 gives is trusted: every model is
        # evaluated in float64)
        trusted = tol - float32_margin(tol)
        theta, steps, evaluations, largest = lbfgs(
            fast.value_and_grad,
            theta,
            max_iter=max_iter,
            tol=trusted if float64 and trusted > 0 else tol,
            precondition=h0,
        )
        model = fast
        float64_models = 0
        if float64:
            model = fast.to(torch.float64)
            theta = theta.to(torch.float64)
            # The float32 gradient is within float32_margin(tol) of the float64 one:
            # a model whose float32 gradient met tol with that much to spare meets it in
            # float64 too; the others are evaluated (and finished) in float64.
            near = torch.nonzero(largest > trusted).flatten()
            float64_models = int(near.numel())
            if float64_models:

                def objective(rows: torch.Tensor, models: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
                    return model.value_and_grad(rows, near[models])

                finished, more_steps, more_evaluations, _ = lbfgs(
                    objective,
                    theta[near],
                    max_iter=max(1, max_iter - steps),
                    tol=tol,
                    precondition=h0,
                )
                theta = theta.clone()
                theta[near] = finished
                steps += more_steps
                evaluations += int(np.ceil(more_evaluations * float64_models / fast.m))
        predictions, gold = model.predict(theta)
    return Fitted(
        predictions=np.ascontiguousarray(predictions.numpy(), dtype=np.int64),
        gold_probability=np.ascontiguousarray(gold.numpy(), dtype=np.float32),
        steps=steps,
        evaluations=evaluations,
        mean=theta.to(torch.float64).mean(0).numpy(),
        float64_models=float64_models,
        curvature=h0,
    )


def _pilot(design: Design, models: "_Batched", *, max_iter: int, tol: float) -> torch.Tensor:
    """``(1, P)``: the minimum of the models' objective (their mean L2 term) over every
    other item, in float32: near every model's own minimum, so the m start close."""
    rows = np.arange(0, design.n, PILOT_STRIDE)
    sub = design.select(rows, float64=False)
    alone = _Batched(sub, np.ones((1, rows.size), dtype=bool), c=1.0, dtype=torch.float32)
    alone.penalty = models.penalty.mean().view(1)
    start = torch.zeros(1, models.size, dtype=torch.float32)
    theta, _, _, _ = lbfgs(
        alone.value_and_grad,
        start,
        max_iter=max_iter,
        tol=tol,
        precondition=models.preconditioner(start, rows=PILOT_CURVATURE_ROWS),
    )
    return theta


Objective = Callable[[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]


Precondition = Callable[[torch.Tensor], torch.Tensor]


Pairs = list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]  # (s, y, rho) per step, oldest first


def lbfgs(
    fun: Objective,
    theta: torch.Tensor,
    *,
    max_iter: int,
    tol: float,
    precondition: Precondition | None = None,
) -> tuple[torch.Tensor, int, int, torch.Tensor]:
    """Minimise m independent objectives at once: ``fun(theta, models)`` takes the
    ``(len(models), P)`` parameters of the models listed and returns their values and
    ``(len(models), P)`` gradients. Per model: the L-BFGS two-loop direction from its last
    ``HISTORY`` pairs (pairs with s.y <= 0 are dropped) and H0 = ``precondition`` (a
    positive-definite matrix applied to the gradients), or without one gamma * I (gamma
    min(1, 1/|g|_1) at first, then s.y / y.y); a first step of 1, backtracking by halves
    to the Armijo condition (c1 = 1e-4), at most 40 times in float64 and 10 in float32
    (where the objective's rounding can hide a decrease); a model stops when its largest
    gradient entry is at most ``tol`` or its line search cannot decrease the objective
    any more. Only the models still moving are evaluated (a backtracking model does not
    make the others compute again). Returns the parameters, the iterations and the
    evaluations (counted in whole batches of m models)."""
    m = theta.shape[0]
    slack = 0.0 if theta.dtype == torch.float64 else FLOAT32_SLACK
    everyone = torch.arange(m)
    f, g = fun(theta, everyone)
    evaluations = 1.0
    active = g.abs().amax(1) > tol
    pairs: Pairs = []
    gamma = torch.clamp(1.0 / g.abs().sum(1).clamp(min=1e-300), max=1.0)  # H0 = gamma * I
    steps = 0
    while steps < max_iter and bool(active.any()):
        d, slope = _direction(g, pairs, gamma[:, None] if precondition is None else precondition)
        step = torch.ones_like(f)
        trial, f_trial, g_trial = theta.clone(), f.clone(), g.clone()
        pending = everyone[active]
        for _ in range(40 if theta.dtype == torch.float64 else 10):
            trial[pending] = theta[pending] + step[pending, None].to(theta.dtype) * d[pending]
            value, grad = fun(trial[pending], pending)
            evaluations += pending.numel() / m
            f_trial[pending], g_trial[pending] = value, grad
            ok = value <= f[pending] + 1e-4 * step[pending] * slope[pending] + slack * f[pending].abs()
            pending = pending[~ok]
            if pending.numel() == 0:
                break
            step[pending] *= 0.5
        # a model whose line search found no decrease is as converged as its precision allows
        stuck = torch.zeros(m, dtype=torch.bool)
        stuck[pending] = True
        keep = (active & ~stuck)[:, None]
        s_new = torch.where(keep, trial - theta, torch.zeros_like(theta))
        y_new = torch.where(keep, g_trial - g, torch.zeros_like(g))
        theta = torch.where(keep, trial, theta)
        f = torch.where(keep.squeeze(1), f_trial, f)
        g = torch.where(keep, g_trial, g)
        valid = _remember(pairs, s_new, y_new)
        if precondition is None:
            gamma = torch.where(
                valid, (s_new * y_new).sum(1) / (y_new * y_new).sum(1).clamp(min=1e-300), gamma
            )
        active = active & ~stuck & (g.abs().amax(1) > tol)
        steps += 1
    return theta, steps, int(np.ceil(evaluations)), g.abs().amax(1)


def _direction(
    g: torch.Tensor, pairs: Pairs, h0: torch.Tensor | Precondition
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per model (rows): L-BFGS's two-loop direction -H g from ``pairs`` and H0 (a column
    of multiples of the identity, or a preconditioner), and its slope g.d; a direction
    that is not downhill (rounding) is replaced by steepest descent."""
    q = g.clone()
    alphas = []
    for s, y, rho in reversed(pairs):
        a = rho * (s * q).sum(1)
        q -= a[:, None] * y
        alphas.append(a)
    r = h0 * q if isinstance(h0, torch.Tensor) else h0(q)
    for (s, y, rho), a in zip(pairs, reversed(alphas), strict=True):
        b = rho * (y * r).sum(1)
        r += (a - b)[:, None] * s
    d = -r
    slope = (g * d).sum(1)
    uphill = slope >= 0
    d[uphill] = -g[uphill]
    return d, torch.where(uphill, -(g * g).sum(1), slope)


def _remember(pairs: Pairs, s: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Append the step's pair (rho 0 where s.y is not clearly positive: a pair L-BFGS
    skips), keeping the last ``HISTORY``; returns where it was valid."""
    sy = (s * y).sum(1)
    valid = sy > 1e-12 * (s * s).sum(1).sqrt() * (y * y).sum(1).sqrt()
    rho = torch.where(valid, 1.0 / torch.where(valid, sy, torch.ones_like(sy)), torch.zeros_like(sy))
    pairs.append((s, y, rho))
    if len(pairs) > HISTORY:
        pairs.pop(0)
    return valid


def _training_items(
    train: npt.NDArray[np.bool_], away: torch.Tensor, dtype: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """For ``train`` ``(m, N)``: ``(T, m)`` per model (column) the indices of its training
    items in order, T the largest count (shorter columns padded with item 0), their
    weights in its mean (1 / t_j; 0 on the padding) and ``away`` of each (a float per item)."""
    counts = train.sum(axis=1)
    longest = max(int(counts.max()), 1)
    chosen = np.zeros((train.shape[0], longest), dtype=np.int64)
    weight = np.zeros((train.shape[0], longest), dtype=np.float64)
    for j, row in enumerate(train):
        items = np.flatnonzero(row)
        chosen[j, : items.size] = items
        weight[j, : items.size] = 1.0 / max(items.size, 1)
    index = torch.from_numpy(np.ascontiguousarray(chosen.T))
    return index, torch.from_numpy(np.ascontiguousarray(weight.T)).to(dtype), away.to(dtype)[index]


class _Batched:
    """The m models on one feature matrix: parameters as one ``(m, P)`` tensor (per model
    its weights, ``D*K``, then its intercepts, ``K``, for classification), the objective
    and its gradient written out (no autograd: a few passes over an (N, m) array)."""

    def __init__(self, inputs: Design, train: npt.NDArray[np.bool_], *, c: float, dtype: torch.dtype) -> None:
        n = inputs.n
        m = int(train.shape[0])
        d = int(inputs.rows32.shape[-1])
        self.design = inputs
        self.n, self.m, self.d, self.task, self.classes, self.dtype = (
            n,
            m,
            d,
            inputs.task,
            inputs.classes,
            dtype,
        )
        counts = torch.from_numpy(train.sum(axis=1)).to(dtype).clamp(min=1.0)  # t_j
        labels = torch.from_numpy(inputs.labels)
        if inputs.task is Task.MULTIPLE_CHOICE:  # scores of the rows x_c - x_0 (Design)
            self.k = 1
            self.intercept = False
        else:
            self.k = 1 if inputs.classes == 2 else inputs.classes
            self.intercept = True
        self._x: torch.Tensor | None = None  # self.x, made when first needed
        self.scored: tuple[torch.Tensor, torch.Tensor] | None = (
            None  # (theta, X @ W) of the last full evaluation
        )
        self.scored32: tuple[torch.Tensor, torch.Tensor] | None = None
        self.binary = inputs.classes == 2
        self.size = d * self.k + (self.k if self.intercept else 0)
        self.penalty = (1.0 / (2.0 * c * counts)).to(torch.float64)  # (m,)
        if self.binary:
            self.positive = (labels == 1).to(dtype).view(n, 1)  # gold is class/option 1
            self.sign = 2.0 * self.positive.to(torch.float32) - 1.0  # the gold's side of 0
            # The loss counts only a model's training items (t of N): its scores are
            # gathered, ``(T, m)``, T the largest t_j, column j model j's items (padded
            # with item 0 at weight 0), so the elementwise passes run over t_j items, not N.
            self.chosen, self.chosen_weight, self.chosen_away = _training_items(
                train, -self.sign[:, 0], dtype
            )
            self.chosen_flip = self.chosen_away * self.chosen_weight
        else:  # (N, m) per item and model: its weight in the model's mean loss, gold, one-hot
            self.weight = torch.from_numpy(np.ascontiguousarray(train.T)).to(dtype) / counts
            self.gold = labels.view(n, 1, 1).expand(n, m, 1).contiguous()
            self.onehot = torch.zeros(n, m, self.classes, dtype=dtype).scatter_(-1, self.gold, 1.0)

    def to(self, dtype: torch.dtype) -> "_Batched":
        """The same models computed in ``dtype``."""
        other = copy.copy(self)
        other.dtype = dtype
        other._x = self._x if dtype == self.dtype else None
        other.scored = None
        # the float32 product of the last full float32 evaluation, for _binary_float64_predict
        other.scored32 = self.scored if self.dtype == torch.float32 else self.scored32
        if self.binary:
            other.positive = self.positive.to(dtype)
            other.chosen_weight, other.chosen_away = self.chosen_weight.to(dtype), self.chosen_away.to(dtype)
            other.chosen_flip = self.chosen_flip.to(dtype)
        else:
            other.weight, other.onehot = self.weight.to(dtype), self.onehot.to(dtype)
        return other

    @property
    def x(self) -> torch.Tensor:
        """The design rows in the models' dtype, ``(N * rows per item, D)``."""
        if self._x is None:
            self._x = self.design.x(self.dtype)
        return self._x

    def preconditioner(self, theta: torch.Tensor, *, rows: int = CURVATURE_ROWS) -> Precondition:
        """H0 for L-BFGS, one matrix shared by the m models and applied to each class's
        block of parameters: the inverse of the Hessian of the mean log loss over (at
        most ``rows`` evenly spaced) items, with a column of ones for the
        intercept, plus the L2 term. Binary problems take it at ``theta`` (each item's
        curvature p(1 - p) averaged over the m models), others at weights 0 (the
        block-diagonal part of the softmax's). Each model's own Hessian is the same over
        its training items at its own weights: close, so the first steps are near-Newton
        ones and L-BFGS corrects the rest. (Any positive-definite H0 gives the same
        minima: it changes the path, not the objective.)"""
        stride = -(-self.n // rows)
        chosen = self.x.reshape(self.n, -1, self.d)[::stride]  # (R, rows per item, D)
        r = chosen.shape[0]
        dk = self.d * self.k
        if self.binary:
            x = chosen[:, 0, :]
            if bool((theta == theta[:1]).all()):  # the models start alike: one column will do
                theta = theta[:1]
            z = x @ theta[:, :dk].T.to(x.dtype)
            if self.intercept:
                z = z + theta[:, dk:].T.to(x.dtype)
            p = torch.sigmoid(z)
            curvature = (p * (1 - p)).mean(1, keepdim=True)  # (R, 1); 1/4 at weights 0
            if self.intercept:
                x = torch.cat([x, torch.ones(r, 1, dtype=x.dtype)], dim=1)
            gram = (x.T @ (x * curvature)).to(torch.float64) / r
        elif self.task is Task.MULTIPLE_CHOICE:
            # at weights 0 the options are equally likely: the covariance of an item's
            # option rows (x_0 - x_0 = 0 among them), averaged over the items
            flat = chosen.reshape(-1, self.d).to(torch.float64)
            total = chosen.sum(1).to(torch.float64)
            gram = (flat.T @ flat / self.classes - total.T @ total / self.classes**2) / r
        else:
            x = torch.cat([chosen[:, 0, :], torch.ones(r, 1, dtype=chosen.dtype)], dim=1).to(torch.float64)
            gram = (x.T @ x) * ((self.classes - 1) / self.classes**2 / r)
        ridge = torch.full((gram.shape[0],), float(2.0 * self.penalty.mean()), dtype=torch.float64)
        if self.intercept:  # unpenalised: a floor keeps the matrix positive definite
            ridge[-1] = max(float(ridge[0]), 1e-6 * float(gram[-1, -1]))
        factor = torch.linalg.cholesky(gram + torch.diag(ridge))
        d, k, intercept = self.d, self.k, self.intercept
        cache: dict[torch.dtype, torch.Tensor] = {}

        def apply(q: torch.Tensor) -> torch.Tensor:
            lower = cache.setdefault(q.dtype, factor.to(q.dtype))
            count = q.shape[0]
            blocks = q[:, :dk].reshape(count, d, k)
            if intercept:
                blocks = torch.cat([blocks, q[:, dk:].reshape(count, 1, k)], dim=1)
            columns = blocks.permute(1, 0, 2).reshape(-1, count * k)
            solved = torch.cholesky_solve(columns, lower).reshape(-1, count, k).permute(1, 0, 2)
            out = solved[:, :d, :].reshape(count, dk)
            return torch.cat([out, solved[:, d:, :].reshape(count, k)], dim=1) if intercept else out

        return apply

    def predict(self, theta: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(m, N)`` each model's predicted class or option for every item, and the
        probability it gives the gold one."""
        dk = self.d * self.k
        if self.scored is not None and torch.equal(self.scored[0], theta):
            scores = self.scored[1]
        elif self.binary and self.dtype == torch.float64 and self._x is None:
            return self._binary_float64_predict(theta)
        else:
            w = (
                theta[:, :dk]
                .reshape(self.m, self.d, self.k)
                .permute(1, 0, 2)
                .reshape(self.d, self.m * self.k)
            )
            scores = self.x @ w
        if self.binary:  # a softmax over (0, z): option/class 1 wins only when z > 0
            z = scores if not self.intercept else scores + theta[:, dk:].view(1, self.m)
            gold = z.to(torch.float32).mul_(self.sign).sigmoid_()
            return (z > 0).T, gold.T
        if self.task is Task.MULTIPLE_CHOICE:
            others = scores.view(self.n, self.classes - 1, self.m).permute(0, 2, 1)
            logits = torch.cat([torch.zeros_like(others[..., :1]), others], dim=-1)
        else:
            logits = scores.view(self.n, self.m, self.k) + theta[:, dk:]
        gold = torch.softmax(logits, -1).gather(-1, self.gold).squeeze(-1)
        return logits.argmax(-1).T.contiguous(), gold.T.contiguous()

    def _binary_float64_predict(self, theta: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``predict`` for two classes or options at float64 ``theta`` with the float64
        product's signs, without the float64 product: the float32 product, and in float64
        again only the scores it cannot sign. A float32 dot product over D terms is within
        gamma_D * sum_k |x_k w_k| <= gamma_D |x| |w| of the exact one (gamma_n = n u /
        (1 - n u), u = 2^-24: the standard bound, for any order of summation); rounding
        the weights, the rows (differences) and the intercept's addition to float32 adds
        u each: a score whose float32 value, with its intercept, is within twice
        gamma_{D+3} (max_i |x_i| |w| + |b|) of 0 is computed again from the float64 rows
        (about a thousand of WinoGrande's 2.6 million). The gold probabilities are the
        float32 scores' (float32 anyway in ``Fitted``). The float32 product is the last
        full float32 evaluation's (``scored32``) when that was at these weights rounded
        to float32 (the bound holds for any float32 product)."""
        w = theta[:, : self.d].T  # (D, m) float64
        x32 = self.design.x(torch.float32)
        if self.scored32 is not None and torch.equal(self.scored32[0], theta.to(torch.float32)):
            z = self.scored32[1].clone()  # the same float32 product, made by the last evaluation
        else:
            z = x32 @ w.to(torch.float32)
        if self.intercept:
            z += theta[:, self.d :].view(1, self.m).to(torch.float32)
        terms = self.d + 3
        u = 2.0**-24
        gamma = terms * u / (1.0 - terms * u)
        size = float(torch.linalg.vector_norm(x32, dim=1).amax()) * torch.linalg.vector_norm(w, dim=0)
        if self.intercept:
            size += theta[:, self.d :].abs().view(self.m)
        bound = (2.0 * gamma * size).to(torch.float32).view(1, self.m)  # its own rounding: in the 2
        rows, models = torch.nonzero(z.abs() <= bound, as_tuple=True)
        predictions = z > 0
        gold = z.mul_(self.sign).sigmoid_()
        if rows.numel():
            again = torch.from_numpy(self.design.rows64_of(rows.numpy())).reshape(-1, self.d)
            exact = (again * w.T[models]).sum(1)
            if self.intercept:
                exact += theta[models, self.d]
            predictions[rows, models] = exact > 0
            gold[rows, models] = torch.sigmoid(exact * self.sign[rows, 0].to(torch.float64)).to(torch.float32)
        return predictions.T, gold.T

    def value_and_grad(self, theta: torch.Tensor, models: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The objectives (float64) and gradients of the ``models`` listed, whose
        parameters are the rows of ``theta``: only their columns are computed."""
        k, d, count = self.k, self.d, int(models.numel())
        full = count == self.m
        penalty = self.penalty if full else self.penalty[models]
        dk = d * k
        w = theta[:, :dk].reshape(count, d, k).permute(1, 0, 2).reshape(d, count * k)
        scores = self.x @ w
        if full:
            self.scored = (theta.clone(), scores)
        if self.binary:
            # over each model's training items only (``chosen``), with v = z for gold 0 and
            # -z for gold 1: the log loss is softplus(v) and its derivative in z,
            # sigmoid(z) - gold, is sigmoid(v) * (1 or -1); one pass each, without
            # softplus(z) - z's cancellation where the gold is far ahead
            chosen = self.chosen if full else self.chosen[:, models]
            chosen_weight = self.chosen_weight if full else self.chosen_weight[:, models]
            away = self.chosen_away if full else self.chosen_away[:, models]  # -1 where gold is 1, else 1
            v = scores.gather(0, chosen)
            if self.intercept:
                v += theta[:, dk:].view(1, count)
            v.mul_(away)
            loss = torch.nn.functional.softplus(v).mul_(chosen_weight).sum(0, dtype=torch.float64)
            dv = v.sigmoid_().mul_(self.chosen_flip if full else self.chosen_flip[:, models])  # d loss / d z
            db = dv.sum(0).view(count, 1) if self.intercept else dv[:0]
            # X^T G with G (N, count) zero outside the training items, as G^T X: the
            # gradient's (count, D) layout, and the faster product here
            dscores = torch.zeros(self.n, count, dtype=self.dtype).scatter_add_(0, chosen, dv)
            gw = dscores.T @ self.x
        else:
            weight = self.weight if full else self.weight[:, models]
            gold = self.gold if full else self.gold[:, models]
            onehot = self.onehot if full else self.onehot[:, models]
            if self.task is Task.MULTIPLE_CHOICE:
                others = scores.view(self.n, self.classes - 1, count).permute(0, 2, 1)
                logits = torch.cat([torch.zeros_like(others[..., :1]), others], dim=-1)
            else:
                logits = scores.view(self.n, count, k) + theta[:, dk:]
            log_p = torch.log_softmax(logits, dim=-1)
            loss = -(log_p.gather(-1, gold).squeeze(-1) * weight).sum(0, dtype=torch.float64)
            dlogits = (log_p.exp_() - onehot).mul_(weight.unsqueeze(-1))  # (N, count, C)
            if self.task is Task.MULTIPLE_CHOICE:
                dscores = dlogits[..., 1:].permute(0, 2, 1).reshape(-1, count)
            else:
                dscores = dlogits.reshape(self.n, count * k)
            db = dlogits.sum(0)
            gw = (self.x.T @ dscores).view(d, count, k).permute(1, 0, 2).reshape(count, dk)
        wt = theta[:, :dk]
        value = loss + penalty * (wt.to(torch.float64) ** 2).sum(1)
        grad_w = gw + wt * (2.0 * penalty.to(self.dtype))[:, None]
        grad = torch.cat([grad_w, db.to(self.dtype)], dim=1) if self.intercept else grad_w
        return value, grad
