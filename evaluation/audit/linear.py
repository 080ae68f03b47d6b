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
  them, no intercept (it would cancel); computed on the differences ``x_c - x_0`` (the
  same softmax, one row fewer per item).

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
    float64: bool = True,
) -> Fitted:
    """Train one model per row of ``train`` (``(m, N)``, True where the item is in that
    model's training set) and predict every item with every model. ``float64``: compute
    in double precision (as scikit-learn does on float64 input), so an item a hair from a
    model's decision boundary gets the same prediction; float32 is about twice as fast."""
    model = _Batched(inputs, train, c=c, dtype=torch.float64 if float64 else torch.float32)
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
    optimizer.step(model.objective)
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
    """The parameters of m models on one feature matrix, and their summed objective with
    its gradient written out (no autograd: the elementwise work stays a few passes over an
    (N, m) array)."""

    def __init__(self, inputs: Inputs, train: npt.NDArray[np.bool_], *, c: float, dtype: torch.dtype) -> None:
        x = torch.from_numpy(np.ascontiguousarray(inputs.features)).to(dtype)
        n = inputs.n
        m = int(train.shape[0])
        d = int(x.shape[-1])
        self.n, self.m, self.task, self.classes = n, m, inputs.task, inputs.classes
        mask = torch.from_numpy(np.ascontiguousarray(train.T)).to(dtype)  # (N, m)
        counts = mask.sum(0).clamp(min=1.0)  # t_j
        self.weight = mask / counts  # the mean over each model's training items
        labels = torch.from_numpy(inputs.labels)
        self.gold = labels.view(n, 1, 1).expand(n, m, 1).contiguous()
        if inputs.task is Task.MULTIPLE_CHOICE:
            # The softmax of scores w.x_c equals that of w.(x_c - x_0) with a 0 for option 0:
            # the same function on C - 1 rows per item instead of C.
            self.k = 1
            self.x = (x[:, 1:, :] - x[:, :1, :]).reshape(n * (inputs.classes - 1), d)
            self.w = torch.zeros(d, m, dtype=dtype)
            self.b: torch.Tensor | None = None
            self.binary = inputs.classes == 2
        else:
            self.k = 1 if inputs.classes == 2 else inputs.classes
            self.x = x
            self.w = torch.zeros(d, m * self.k, dtype=dtype)
            self.b = torch.zeros(m, self.k, dtype=dtype)
            self.binary = inputs.classes == 2
        self.parameters = [self.w] if self.b is None else [self.w, self.b]
        for p in self.parameters:
            p.grad = torch.zeros_like(p)
        self.penalty = (1.0 / (2.0 * c * counts)).repeat_interleave(self.k)  # per column of w
        if self.binary:
            self.positive = (labels == 1).to(dtype).view(n, 1)  # gold is class/option 1
        else:
            self.onehot = torch.zeros(n, m, self.classes, dtype=dtype).scatter_(-1, self.gold, 1.0)

    def logits(self) -> torch.Tensor:
        """(N, m, C): every model's logits for every item."""
        scores = self.x @ self.w
        if self.task is Task.MULTIPLE_CHOICE:
            others = scores.view(self.n, self.classes - 1, self.m).permute(0, 2, 1)
            return torch.cat([torch.zeros_like(others[..., :1]), others], dim=-1)
        assert self.b is not None
        z = scores.view(self.n, self.m, self.k) + self.b
        if self.k == 1:  # binary: the sigmoid is a softmax over (0, z)
            z = torch.cat([torch.zeros_like(z), z], dim=-1)
        return z

    @torch.no_grad()
    def objective(self) -> torch.Tensor:
        """The summed objective; leaves its gradient in each parameter's ``grad``."""
        scores = self.x @ self.w
        if self.binary:
            z = scores if self.b is None else scores + self.b.view(1, self.m)  # (N, m)
            loss = (self.weight * (torch.nn.functional.softplus(z) - self.positive * z)).sum(
                dtype=torch.float64
            )
            dz = (torch.sigmoid(z) - self.positive).mul_(self.weight)
            dscores = dz
            db = dz.sum(0).view(self.m, 1)
        else:
            logits = self.logits()
            log_p = torch.log_softmax(logits, dim=-1)
            loss = -(log_p.gather(-1, self.gold).squeeze(-1) * self.weight).sum(dtype=torch.float64)
            dlogits = (log_p.exp_() - self.onehot).mul_(self.weight.unsqueeze(-1))  # (N, m, C)
            if self.task is Task.MULTIPLE_CHOICE:
                dscores = dlogits[..., 1:].permute(0, 2, 1).reshape(-1, self.m)
            else:
                dscores = dlogits.reshape(self.n, self.m * self.k)
            db = dlogits.sum(0)
        assert self.w.grad is not None
        torch.mm(self.x.T, dscores, out=self.w.grad)
        self.w.grad.add_(self.w * (2.0 * self.penalty))
        if self.b is not None:
            assert self.b.grad is not None
            self.b.grad.copy_(db)
        return loss + (self.w * self.w * self.penalty).sum(dtype=torch.float64)
