"""WSC: two candidates per schema, the switched variant where Trichelair et al. label one
(accuracy, the switch protocol, associative and knowledge-type subsets, significance)."""

from pathlib import Path
from typing import Any

from evaluation import release_data
from evaluation.evaluators.base import Evaluated, Evaluator
from evaluation.lm.methods import Method
from evaluation.metrics.adversarial import AdversarialOutcome, adversarial_metrics
from evaluation.metrics.significance import accuracy_significance
from evaluation.metrics.wsc import WscOutcome, wsc_metrics
from evaluation.models import EvaluationRun
from evaluation.runs.progress import RunProgress
from releases.dataset import Dataset


class WscEvaluator(Evaluator):
    dataset = Dataset.WSC
    results_template = "evaluation/results/wsc.html"

    def predictions_check(self, folder: release_data.ReleaseFolder, path: Path) -> None:
        from evaluation.lm.scorers import read_predictions

        read_predictions(path, [r.item for r in release_data.read_wsc(folder)])

    def evaluate(
        self, *, run: EvaluationRun, folder: release_data.ReleaseFolder, model: Any, writer: RunProgress
    ) -> Evaluated:
        from evaluation.lm.scorers import read_predictions, score_wsc

        rows = release_data.read_wsc(folder, limit=run.settings.get("limit"))
        items = [r.item for r in rows]
        writer.total = len(items)  # schemas: a scorer's requests (variants, candidates) map onto them
        predictions = (
            read_predictions(run.predictions_path, items) if run.method == Method.PREDICTIONS else None
        )
        scores = score_wsc(
            model,
            items,
            run.method,
            seed=int(run.settings.get("seed") or 0),
            predictions=predictions,
            batch_size=int(run.settings.get("batch_size") or 32),
            progress=writer.stage(0, writer.total),
        )
        by_key = {(s.id, s.variant): s for s in scores}
        outcomes = []
        for r in rows:
            original = by_key[(r.item.id, "original")]
            switched = by_key.get((r.item.id, "switched"))
            outcomes.append(
                WscOutcome(
                    item_id=r.item.id,
                    gold=original.answer,
                    predicted=original.prediction,
                    # without switched predictions (e.g. an upload of originals only) the
                    # switch protocol cannot be computed: leave the label out
                    switchable=r.switchable if switched is not None or not r.switchable else None,
                    switched_predicted=switched.prediction if switched is not None else None,
                    associative=r.associative,
                    knowledge_types=r.knowledge_types,
                )
            )
        metrics: dict[str, Any] = wsc_metrics(outcomes)
        metrics["significance"] = {
            "all": accuracy_significance(metrics["all"]["correct"], metrics["all"]["n"]),
        }
        sw = metrics["switchable"]
        if sw["n"]:
            metrics["significance"]["switchable_after"] = accuracy_significance(sw["correct_after"], sw["n"])
        metrics["summary"] = {"accuracy": metrics["all"]["accuracy"], "n": metrics["all"]["n"]}
        # an adversarial release: accuracy per round, on fooling and non-fooling items, per split
        written = adversarial_metrics(
            AdversarialOutcome(
                round=r.written.round if r.written else None,
                fooling=bool(r.written and r.written.fooling),
                split=r.written.split if r.written else None,
                correct=by_key[(r.item.id, "original")].correct,
            )
            for r in rows
        )
        if written is not None:
            metrics["adversarial"] = written
        candidates = {r.item.id: list(r.item.candidates) for r in rows}
        records = [
            {
                "id": s.id,
                "variant": s.variant,
                "candidates": candidates[s.id],
                "scores": list(s.scores),
                "prediction": s.prediction,
                "gold": s.answer,
                "correct": s.correct,
            }
            for s in scores
        ]
        return metrics, records, {}, len(scores)
