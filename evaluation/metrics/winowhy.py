"""WinoWhy metrics (Zhang et al., ACL 2020, section 4 and table 6).

The reasons of WinoWhy are scored by a model (e.g. the log probability of the reason
after the question); a reason is predicted *plausible* when its score is at least a
threshold, and the threshold that gives the best accuracy is reported. Only positive
(at least 4 of 5 votes plausible) and negative (at most 1 of 5) reasons are used:
2,865 of the 4,095 (1,270 positive, 1,595 negative), so always answering "negative"
(the majority baseline) scores 1,595 / 2,865 = 55.67%.

The supervised setting trains a classifier on frozen model features (e.g. a mean hidden
state, given by the caller) with five-fold cross-validation, split either by question
(all reasons of a question in the same fold, so the classifier never sees the question
it is tested on) or by reason (reasons shuffled freely). Table 7's classifier is "a
two-layer feed-forward neural network ... trained for ten epochs", reported as the mean
accuracy over the folds with its standard deviation: ``classifier="feedforward"`` (one
hidden layer of ``FEEDFORWARD_HIDDEN`` ReLU units, Adam in batches of 32, ten epochs: the
paper gives neither width nor batch size, so 300, the one hidden size it names, and 32). ``classifier="logistic"`` is a logistic
regression, kept beside it.
"""

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from evaluation.metrics.common import Accuracy, knowledge_type_order

CLASSIFIERS = {
    "feedforward": "two-layer feed-forward network (300 ReLU hidden units, Adam, batches of 32, ten epochs) on "
    "standardised features (scikit-learn's MLPClassifier), as Zhang et al. Table 7",
    "logistic": "logistic regression on standardised features (scikit-learn)",
}
FEEDFORWARD_HIDDEN = 300
FEEDFORWARD_EPOCHS = 10
FEEDFORWARD_BATCH = 32


@dataclass(frozen=True)
class ThresholdResult:
    """Accuracy of ``score >= threshold`` as the prediction "plausible"."""

    threshold: float
    n: int
    correct: int

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.n if self.n else None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready; an infinite threshold (everything negative) becomes None."""
        threshold = self.threshold if np.isfinite(self.threshold) else None
        return {"threshold": threshold, "n": self.n, "correct": self.correct, "accuracy": self.accuracy}


#: Scores and labels as lists or as the arrays `_as_arrays` makes of them.
Scores = Sequence[float] | npt.NDArray[np.float64]
Labels = Sequence[bool] | npt.NDArray[np.bool_]


def _as_arrays(scores: Scores, labels: Labels) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=bool)
    if s.shape != y.shape or s.ndim != 1:
        raise ValueError(
            f"scores and labels must be two lists of the same length, got {s.shape} and {y.shape}"
        )
    bad = np.flatnonzero(~np.isfinite(s))
    if bad.size:
        raise ValueError(f"score {bad[0]} is not a finite number ({s[bad[0]]})")
    return s, y


def accuracy_at_threshold(scores: Scores, labels: Labels, threshold: float) -> ThresholdResult:
    s, y = _as_arrays(scores, labels)
    correct = int(np.sum((s >= threshold) == y))
    return ThresholdResult(threshold=float(threshold), n=int(s.size), correct=correct)


def best_threshold(scores: Scores, labels: Labels) -> ThresholdResult:
    """The threshold over the scores with the best accuracy (ties: the lowest threshold).

    Candidates are every distinct score and +inf (everything predicted negative); each is
    counted exactly in O(n log n).
    """
    s, y = _as_arrays(scores, labels)
    if s.size == 0:
        return ThresholdResult(threshold=float("inf"), n=0, correct=0)
    candidates = np.append(np.unique(s), np.inf)
    pos = np.sort(s[y])
    neg = np.sort(s[~y])
    # positives with score >= t are right; negatives with score < t are right.
    pos_right = pos.size - np.searchsorted(pos, candidates, side="left")
    neg_right = np.searchsorted(neg, candidates, side="left")
    correct = pos_right + neg_right
    best = int(np.argmax(correct))  # first maximum = lowest threshold
    return ThresholdResult(threshold=float(candidates[best]), n=int(s.size), correct=int(correct[best]))


def majority_baseline(labels: Labels) -> Accuracy:
    """Always answering the more frequent label."""
    y = np.asarray(labels, dtype=bool)
    positives = int(y.sum())
    return Accuracy(n=int(y.size), correct=max(positives, int(y.size) - positives))


def winowhy_metrics(
    scores: Sequence[float],
    labels: Sequence[bool],
    knowledge_types: Sequence[Sequence[str]] | None = None,
) -> dict[str, Any]:
    """Best-threshold accuracy overall and per knowledge type, and the majority baseline.

    ``knowledge_types[i]`` are the types of reason i's question. Per type we report the
    accuracy at the type's own best threshold (``best``) and at the overall threshold
    (``at_overall_threshold``).
    """
    s, y = _as_arrays(scores, labels)
    overall = best_threshold(s, y)
    result: dict[str, Any] = {
        "best_threshold": overall.as_dict(),
        "majority_baseline": majority_baseline(y).as_dict(),
        "positives": int(y.sum()),
        "negatives": int((~y).sum()),
        "knowledge_types": {},
    }
    if knowledge_types is not None:
        if len(knowledge_types) != s.size:
            raise ValueError(f"{len(knowledge_types)} knowledge type lists for {s.size} reasons")
        names = sorted({t for types in knowledge_types for t in types}, key=knowledge_type_order)
        for name in names:
            mask = np.array([name in types for types in knowledge_types], dtype=bool)
            result["knowledge_types"][name] = {
                "best": best_threshold(s[mask], y[mask]).as_dict(),
                "at_overall_threshold": accuracy_at_threshold(s[mask], y[mask], overall.threshold).as_dict(),
                "majority_baseline": majority_baseline(y[mask]).as_dict(),
            }
    return result


@dataclass(frozen=True)
class CrossValidationResult:
    split: str
    classifier: str
    folds: int
    fold_accuracies: tuple[float, ...]
    n: int
    correct: int

    @property
    def accuracy(self) -> float | None:
        """Pooled over the folds: every reason is predicted exactly once."""
        return self.correct / self.n if self.n else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "split": self.split,
            "classifier": self.classifier,
            "folds": self.folds,
            "fold_accuracies": list(self.fold_accuracies),
            "mean_fold_accuracy": float(np.mean(self.fold_accuracies)) if self.fold_accuracies else None,
            "std_fold_accuracy": float(np.std(self.fold_accuracies)) if self.fold_accuracies else None,
            "n": self.n,
            "correct": self.correct,
            "accuracy": self.accuracy,
        }


def cross_validate(
    features: npt.ArrayLike,
    labels: Labels,
    question_ids: Sequence[Hashable] | npt.NDArray[Any],
    *,
    split: Literal["question", "reason"],
    classifier: Literal["feedforward", "logistic"] = "feedforward",
    folds: int = 5,
    seed: int = 0,
) -> CrossValidationResult:
    """Five-fold cross-validation of a classifier (``CLASSIFIERS``) on frozen features.

    ``split="question"`` keeps all reasons of a question in one fold (GroupKFold);
    ``split="reason"`` shuffles reasons freely (KFold). Features are standardised on
    the training folds only (a scikit-learn pipeline), so nothing leaks from the test fold.
    The feed-forward network stops after its ten epochs by design; scikit-learn's warning
    that it has not converged is not shown.
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold, KFold
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    x = np.asarray(features, dtype=np.float64)
    y = np.asarray(labels, dtype=bool)
    groups = np.asarray([str(q) for q in question_ids])
    if x.ndim != 2 or x.shape[0] != y.size or groups.size != y.size:
        raise ValueError(
            f"features must be (reasons, dims) with one label and question id per reason; "
            f"got features {x.shape}, {y.size} labels, {groups.size} question ids"
        )
    if split == "question":
        if np.unique(groups).size < folds:
            raise ValueError(f"{np.unique(groups).size} questions cannot fill {folds} folds")
        splitter: Any = GroupKFold(n_splits=folds, shuffle=True, random_state=seed)
        indices = splitter.split(x, y, groups)
    elif split == "reason":
        if y.size < folds:
            raise ValueError(f"{y.size} reasons cannot fill {folds} folds")
        indices = KFold(n_splits=folds, shuffle=True, random_state=seed).split(x, y)
    else:
        raise ValueError(f"split must be 'question' or 'reason', not {split!r}")
    if classifier not in CLASSIFIERS:
        raise ValueError(f"classifier must be one of {', '.join(CLASSIFIERS)}, not {classifier!r}")

    fold_accuracies: list[float] = []
    correct = 0
    for train, test in indices:
        if np.unique(y[train]).size < 2:
            # A one-class training fold: the classifier can only answer that class.
            predicted = np.full(test.size, y[train][0])
        else:
            estimator: Any = (
                MLPClassifier(
                    hidden_layer_sizes=(FEEDFORWARD_HIDDEN,),
                    max_iter=FEEDFORWARD_EPOCHS,
                    batch_size=min(FEEDFORWARD_BATCH, train.size),
                    random_state=seed,
                )
                if classifier == "feedforward"
                else LogisticRegression(max_iter=1000)
            )
            model = make_pipeline(StandardScaler(), estimator)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                model.fit(x[train], y[train])
            predicted = model.predict(x[test])
        right = int(np.sum(predicted == y[test]))
        correct += right
        fold_accuracies.append(right / test.size)
    return CrossValidationResult(
        split=split,
        classifier=classifier,
        folds=folds,
        fold_accuracies=tuple(fold_accuracies),
        n=int(y.size),
        correct=correct,
    )
