"""One evaluator per data set, in one registry keyed by the data-set enum.

Each evaluator (evaluation.evaluators.base.Evaluator) holds what differs per data set: the
methods unfit for it, the check of an uploaded predictions file, the evaluation itself and
the template of its results on the run page. A data set's release shape (what a release
holds) is its twin in releases.shapes. tests/evaluation/test_evaluators.py fails when a
data set has no evaluator or its results template is missing.
"""

from evaluation.evaluators.base import Evaluated, Evaluator
from evaluation.evaluators.comve import ComveEvaluator
from evaluation.evaluators.winowhy import WinowhyEvaluator
from evaluation.evaluators.wsc import WscEvaluator
from releases.dataset import Dataset

_COMVE = ComveEvaluator()

#: The evaluator of every data set (Sen-Making's releases are read and scored as ComVE's).
EVALUATORS: dict[Dataset, Evaluator] = {
    Dataset.WSC: WscEvaluator(),
    Dataset.WINOWHY: WinowhyEvaluator(),
    Dataset.COMVE: _COMVE,
    Dataset.SENMAKING: _COMVE,
}


def evaluator_for(dataset: str) -> Evaluator:
    """The evaluator of a data set (a release's or a run's, by its enum value)."""
    return EVALUATORS[Dataset(dataset)]


__all__ = ["EVALUATORS", "Evaluated", "Evaluator", "evaluator_for"]
