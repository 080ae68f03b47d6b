"""Dataset cartography (Swayamdipta et al., "Dataset Cartography: Mapping and Diagnosing
Datasets with Training Dynamics", EMNLP 2020) on frozen features (no Django; torch only
inside ``cartography``).

A linear classifier (the audit's model family, ``evaluation.audit.linear``'s shapes) is
trained on all items for ``epochs`` epochs of shuffled mini-batches (Adam). As in the
authors' code, an item's record for an epoch is the softmax of the logits the model gave
it in that epoch's training forward pass: the gold-label probability and whether the
arg-max was the gold label. Per item: ``confidence`` = mean of the gold probabilities
over epochs, ``variability`` = their standard deviation (population, ``np.std``),
``correctness`` = the share of epochs it was predicted right.

Regions, from the paper's three 33% subsets: ``easy-to-learn`` the third with the highest
confidence, ``hard-to-learn`` the third with the lowest confidence, ``ambiguous`` the
third with the highest variability. An item in two subsets takes the confidence one: on
the map (variability on x, confidence on y) easy-to-learn sits top left, hard-to-learn
bottom left and ambiguous to the right at middling confidence, and a classifier that
learns steadily gives its easiest and hardest items high variability too. Items in no
subset are ``other``.
"""

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np
import numpy.typing as npt

from evaluation.audit.data import Task, check_inputs
from evaluation.audit.errors import AuditInputError

#: The share of items in each region (the paper's 33% subsets).
REGION_SHARE = 0.33


class Region(StrEnum):
    EASY = "easy-to-learn"
    AMBIGUOUS = "ambiguous"
    HARD = "hard-to-learn"
    OTHER = "other"


@dataclass(frozen=True)
class CartographyResult:
    """Per item (input order): ``probabilities`` (N, E) gold-label probability per epoch,
    ``correct`` (N, E), ``confidence``, ``variability``, ``correctness`` (share of epochs
    right) and ``regions`` (``Region`` values)."""

    probabilities: npt.NDArray[np.float64]
    correct: npt.NDArray[np.bool_]
    confidence: npt.NDArray[np.float64]
    variability: npt.NDArray[np.float64]
    correctness: npt.NDArray[np.float64]
    regions: list[Region]
    params: dict[str, Any]

    def region_counts(self) -> dict[str, int]:
        return {r.value: sum(1 for x in self.regions if x is r) for r in Region}

    def summary(self) -> dict[str, Any]:
        """What a run records beside the per-item arrays (JSON-ready)."""
        return {
            "params": self.params,
            "items": int(self.confidence.size),
            "regions": self.region_counts(),
            "mean_confidence": float(self.confidence.mean()),
            "mean_variability": float(self.variability.mean()),
            "mean_correctness": float(self.correctness.mean()),
        }


def regions(
    confidence: npt.NDArray[np.float64], variability: npt.NDArray[np.float64], share: float = REGION_SHARE
) -> list[Region]:
    """Each item's region: the top ``share`` by confidence (easy-to-learn), else the
    bottom ``share`` by confidence (hard-to-learn), else among the top ``share`` by
    variability (ambiguous), else other; ties by input order."""
    n = confidence.size
    size = int(round(share * n))
    out = [Region.OTHER] * n
    by_variability = np.argsort(-variability, kind="stable")[:size]
    by_confidence = np.argsort(-confidence, kind="stable")
    for i in by_variability:
        out[i] = Region.AMBIGUOUS
    for i in by_confidence[::-1][:size]:
        out[i] = Region.HARD
    for i in by_confidence[:size]:
        out[i] = Region.EASY
    return out


def cartography(
    features: Any,
    labels: Any,
    *,
    epochs: int = 6,
    seed: int = 0,
    batch_size: int = 32,
    lr: float = 1e-2,
    weight_decay: float = 0.0,
    standardize: bool = True,
) -> CartographyResult:
    """Train a linear classifier on ``features`` ((N, D) or (N, C, D)) for ``epochs``
    epochs and map every item by its training dynamics."""
    import torch  # only on the worker that runs the audit

    if epochs < 2:
        raise AuditInputError(f"epochs: variability needs at least 2 epochs, got {epochs}")
    if batch_size < 1:
        raise AuditInputError(f"batch_size: must be at least 1, got {batch_size}")
    if lr <= 0:
        raise AuditInputError(f"lr: the learning rate must be positive, got {lr}")
    inputs = check_inputs(features, labels, standardize=standardize)
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    x = torch.from_numpy(inputs.features)
    y = torch.from_numpy(inputs.labels)
    n, d = inputs.n, int(x.shape[-1])
    if inputs.task is Task.MULTIPLE_CHOICE:
        model = torch.nn.Linear(d, 1, bias=False)  # one score per option
    else:
        model = torch.nn.Linear(d, inputs.classes)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.zero_()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    probabilities = np.zeros((n, epochs), dtype=np.float64)
    correct = np.zeros((n, epochs), dtype=bool)
    for epoch in range(epochs):
        order = torch.randperm(n, generator=generator)
        for start in range(0, n, batch_size):
            batch = order[start : start + batch_size]
            logits = model(x[batch])
            if inputs.task is Task.MULTIPLE_CHOICE:
                logits = logits.squeeze(-1)  # (B, C): one score per option
            loss = torch.nn.functional.cross_entropy(logits, y[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                p = torch.softmax(logits.detach(), dim=-1)
                idx = batch.numpy()
                probabilities[idx, epoch] = p.gather(1, y[batch].unsqueeze(1)).squeeze(1).double().numpy()
                correct[idx, epoch] = (p.argmax(-1) == y[batch]).numpy()
    confidence = probabilities.mean(axis=1)
    variability = probabilities.std(axis=1)
    correctness = correct.mean(axis=1)
    return CartographyResult(
        probabilities=probabilities,
        correct=correct,
        confidence=confidence,
        variability=variability,
        correctness=correctness,
        regions=regions(confidence, variability),
        params={
            "epochs": epochs,
            "seed": seed,
            "batch_size": batch_size,
            "lr": lr,
            "weight_decay": weight_decay,
            "standardize": standardize,
            "region_share": REGION_SHARE,
            "task": str(inputs.task),
        },
    )
