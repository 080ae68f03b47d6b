"""Many L2-regularised logistic regressions trained at once (torch; no Django).

The models share one feature matrix and differ in which items they train on: a
``(m, N)`` boolean mask. Their weights are one tensor, ``(D, m*K)``, so every step is one
matrix product ``X @ W`` over all N items (memory-light: no per-model copy of the
training rows), and the loss of item i for model j counts only where ``train[j, i]``.
Each model minimises scikit-learn's ``LogisticRegression`` objective (lbfgs, L2), divided
by ``C * t_j``: the mean log loss over its ``t_j`` training items plus
``|W_j|^2 / (2 C t_j)``, the intercept unpenalised; the models are independent, so the
sum of their objectives has each one's minimum. One full-batch L-BFGS (strong-Wolfe line
search) minimises the sum until the largest gradient entry is below ``tol``.

- classification, 2 classes: one weight vector and an intercept (a sigmoid), as
  scikit-learn fits binary problems;
- classification, C > 2: multinomial softmax, weights ``(D, C)`` and ``C`` intercepts;
- multiple choice ``(N, C, D)``: one scorer ``w`` shared by the options, softmax across
  them, no intercept (it would cancel).

Imported by the audit's functions inside their bodies, so the modules the web process
imports never load torch.
"""

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import torch

from evaluation.audit.data import Inputs, Task


@dataclass(frozen=True)
class Fitted:
    """Per model (rows) and item (columns): the predicted class or option, and the
    probability the model gives the gold label. ``steps``: L-BFGS iterations run."""

    predictions: npt.NDArray[np.int64]
    gold_probability: npt.NDArray[np.float32]
    steps: int


def fit_predict(
    inputs: Inputs,
    train: npt.NDArray[np.bool_],
    *,
    c: float = 1.0,
    max_iter: int = 500,
    tol: float = 1e-5,
) -> Fitted:
    """Train one model per row of ``train`` (``(m, N)``, True where the item is in that
    model's training set) and predict every item with every model."""
    model = _Batched(inputs, train, c=c)
    optimizer = torch.optim.LBFGS(
        model.parameters,
        lr=1.0,
        max_iter=max_iter,
        max_eval=max_iter * 2,
        tolerance_grad=tol,
        tolerance_change=0.0,
        history_size=20,
        line_search_fn="strong_wolfe",
    )

    def closure() -> torch.Tensor:
        optimizer.zero_grad()
        loss = model.objective()
        loss.backward()
        return loss

    optimizer.step(closure)
    steps = int(optimizer.state[optimizer._params[0]].get("n_iter", 0))
    with torch.no_grad():
        logits = model.logits()  # (N, m, C)
        predictions = logits.argmax(-1).T.contiguous()
        gold = torch.softmax(logits, -1).gather(-1, model.gold).squeeze(-1).T.contiguous()
    return Fitted(
        predictions=predictions.numpy().astype(np.int64),
        gold_probability=gold.numpy().astype(np.float32),
        steps=steps,
    )


class _Batched:
    """The parameters and objective of m models on one feature matrix."""

    def __init__(self, inputs: Inputs, train: npt.NDArray[np.bool_], *, c: float) -> None:
        x = torch.from_numpy(np.ascontiguousarray(inputs.features))
        n = inputs.n
        m = int(train.shape[0])
        d = int(x.shape[-1])
        self.n, self.m, self.task, self.classes = n, m, inputs.task, inputs.classes
        mask = torch.from_numpy(np.ascontiguousarray(train.T)).to(torch.float32)  # (N, m)
        counts = mask.sum(0).clamp(min=1.0)  # t_j
        self.weight = mask / counts  # the mean over each model's training items
        self.penalty = 1.0 / (2.0 * c * counts)  # (m,)
        self.gold = torch.from_numpy(inputs.labels).view(n, 1, 1).expand(n, m, 1).contiguous()
        if inputs.task is Task.MULTIPLE_CHOICE:
            self.k = 1
            self.x = x.reshape(n * inputs.classes, d)
            self.w = torch.zeros(d, m, dtype=torch.float32, requires_grad=True)
            self.parameters = [self.w]
            self.b: torch.Tensor | None = None
        else:
            self.k = 1 if inputs.classes == 2 else inputs.classes
            self.x = x
            self.w = torch.zeros(d, m * self.k, dtype=torch.float32, requires_grad=True)
            self.b = torch.zeros(m, self.k, dtype=torch.float32, requires_grad=True)
            self.parameters = [self.w, self.b]

    def logits(self) -> torch.Tensor:
        scores = self.x @ self.w
        if self.task is Task.MULTIPLE_CHOICE:
            return scores.view(self.n, self.classes, self.m).permute(0, 2, 1)
        assert self.b is not None
        z = scores.view(self.n, self.m, self.k) + self.b
        if self.k == 1:  # binary: the sigmoid is a softmax over (0, z)
            z = torch.cat([torch.zeros_like(z), z], dim=-1)
        return z

    def objective(self) -> torch.Tensor:
        log_p = torch.log_softmax(self.logits(), dim=-1).gather(-1, self.gold).squeeze(-1)  # (N, m)
        loss = -(log_p * self.weight).sum()
        squares = (self.w * self.w).view(self.w.shape[0], self.m, self.k).sum(dim=(0, 2))
        return loss + (squares * self.penalty).sum()
