"""What every data set's evaluator provides (evaluation.evaluators registers one per data set)."""

from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from evaluation import release_data
from evaluation.lm.methods import Method
from evaluation.models import EvaluationRun
from evaluation.runs.progress import RunProgress
from releases.dataset import Dataset

# (metrics, per-item records, SemEval submission rows by file name, items scored)
Evaluated = tuple[dict[str, Any], list[dict[str, Any]], dict[str, list[tuple[str, str | int]]], int]


class Evaluator(ABC):
    """One data set's evaluation.

    ``dataset``: the kind of release files it reads; ``unfit``: the methods that do not
    apply to it, and why (refused when a run is created); ``results_template``: the part
    of the run page that shows its figures; ``predictions_check``: read an uploaded
    predictions file as the run will (raises on a file the run could not use);
    ``evaluate``: score the release and compute its metrics.
    """

    dataset: ClassVar[Dataset]
    unfit: ClassVar[Mapping[Method, str]] = {}
    results_template: ClassVar[str]

    @abstractmethod
    def predictions_check(self, folder: release_data.ReleaseFolder, path: Path) -> None: ...

    @abstractmethod
    def evaluate(
        self, *, run: EvaluationRun, folder: release_data.ReleaseFolder, model: Any, writer: RunProgress
    ) -> Evaluated: ...
