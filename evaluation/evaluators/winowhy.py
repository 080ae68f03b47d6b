"""WinoWhy: each reason scored alone, accuracy at the best threshold (overall and per
knowledge type), and five-fold cross-validation on a model's frozen features."""

import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from evaluation import release_data
from evaluation.evaluators.base import Evaluated, Evaluator
from evaluation.lm.methods import TEXT_METHODS, Method
from evaluation.metrics.significance import wilson_interval
from evaluation.metrics.winowhy import CLASSIFIERS, cross_validate, winowhy_metrics
from evaluation.models import EvaluationRun
from evaluation.predictions_io import read_label_predictions
from evaluation.runs.errors import EvaluationError
from evaluation.runs.progress import RunProgress
from releases.dataset import Dataset


class WinowhyEvaluator(Evaluator):
    dataset = Dataset.WINOWHY
    unfit = {
        Method.PARTIAL: "scores WSC candidates after the pronoun; WinoWhy reasons have none",
        Method.FIRST: "picks a WSC or ComVE candidate; WinoWhy reasons have none",
    }
    results_template = "evaluation/results/winowhy.html"

    def predictions_check(self, folder: release_data.ReleaseFolder, path: Path) -> None:
        read_label_predictions(path)

    def evaluate(
        self, *, run: EvaluationRun, folder: release_data.ReleaseFolder, model: Any, writer: RunProgress
    ) -> Evaluated:
        all_rows = release_data.read_winowhy(folder)
        rows = [r for r in all_rows if r.positive is not None]
        limit = run.settings.get("limit")
        if limit:
            rows = rows[:limit]
        if not rows:
            raise EvaluationError(
                f"{folder.path / 'winowhy.jsonl'}: no positive or negative reasons to evaluate"
            )
        writer.total = len(rows)
        seed = int(run.settings.get("seed") or 0)
        method = run.method
        if method in TEXT_METHODS:
            from evaluation.lm.scorers import score_continuations

            scores = score_continuations(
                model,
                [(r.context, r.continuation) for r in rows],
                method=method,
                batch_size=int(run.settings.get("batch_size") or 32),
                progress=writer.stage(0, len(rows)),
            )
        elif method == Method.RANDOM:
            rng = random.Random(seed)
            scores = [rng.random() for _ in rows]
        elif method == Method.MAJORITY:
            scores = [0.0 for _ in rows]  # one score for all: the best threshold is the majority label
        elif method == Method.PREDICTIONS:
            uploaded = read_label_predictions(run.predictions_path)
            scores = [_reason_score(uploaded, r.id, run.predictions_path) for r in rows]
            extra = sorted(set(uploaded) - {r.id for r in rows})
            if extra and not limit:
                raise EvaluationError(
                    f"{run.predictions_path}: ids not among the evaluated reasons: {', '.join(extra[:5])}"
                )
        else:
            raise EvaluationError(
                f"method {method!r} does not apply to WinoWhy reasons; use full, pll, random, majority or predictions"
            )
        writer(len(rows))
        labels = [bool(r.positive) for r in rows]
        types = [r.knowledge_types for r in rows]
        metrics: dict[str, Any] = winowhy_metrics(scores, labels, types)
        best = metrics["best_threshold"]
        metrics["significance"] = {
            "best_threshold": {"wilson_95": list(wilson_interval(best["correct"], best["n"]))}
        }
        metrics["summary"] = {"accuracy": best["accuracy"], "n": best["n"]}
        metrics["cross_validation"] = _winowhy_cross_validation(model, rows, labels, seed)
        metrics["reasons_in_release"] = dict(
            Counter(
                "positive" if r.positive else "negative" if r.positive is False else "other" for r in all_rows
            )
        )
        threshold = best["threshold"] if best["threshold"] is not None else float("inf")
        records = [
            {
                "id": r.id,
                "variant": "reason",
                "question_id": r.question_id,
                "scores": [s],
                "prediction": "positive" if s >= threshold else "negative",
                "gold": "positive" if y else "negative",
                "correct": (s >= threshold) == y,
            }
            for r, s, y in zip(rows, scores, labels, strict=True)
        ]
        return metrics, records, {}, len(rows)


def _reason_score(uploaded: dict[str, str], reason_id: str, path: str) -> float:
    if reason_id not in uploaded:
        raise EvaluationError(f"{path}: no prediction for reason {reason_id!r}")
    value = uploaded[reason_id].lower()
    if value in ("positive", "plausible", "true"):
        return 1.0
    if value in ("negative", "implausible", "false"):
        return 0.0
    try:
        return float(value)
    except ValueError:
        raise EvaluationError(
            f"{path}: reason {reason_id!r}, field 'prediction': {value!r} is not a score or positive/negative"
        ) from None


def _winowhy_cross_validation(
    model: Any, rows: Sequence[Any], labels: list[bool], seed: int
) -> dict[str, Any]:
    """Five-fold CV of a classifier on the model's frozen features (mean last hidden state)."""
    if model is None:
        return {"computed": False, "reason": "needs a model's frozen features"}
    # imported here, not at the top: it imports torch, which the web process need not load
    from evaluation.lm.features import mean_hidden_states as extract

    name = "mean of the last hidden states over the text's tokens"
    questions = [r.question_id for r in rows]
    if len(set(questions)) < 5 or len(rows) < 5:
        return {"computed": False, "reason": "fewer than five questions: five folds cannot be filled"}
    features = extract(model, [r.context + r.continuation for r in rows])

    def both(classifier: Literal["feedforward", "logistic"]) -> dict[str, Any]:
        return {
            split: cross_validate(
                features, labels, questions, split=split, classifier=classifier, seed=seed
            ).as_dict()
            for split in ("question", "reason")
        }

    feedforward, logistic = both("feedforward"), both("logistic")
    # Table 7's setting (the feed-forward network) at the top, the logistic regression beside it
    return {
        "computed": True,
        "features": name,
        "classifier": CLASSIFIERS["feedforward"],
        "by_question": feedforward["question"],
        "by_reason": feedforward["reason"],
        "logistic": {
            "classifier": CLASSIFIERS["logistic"],
            "by_question": logistic["question"],
            "by_reason": logistic["reason"],
        },
    }


# --- ComVE ------------------------------------------------------------------------------
