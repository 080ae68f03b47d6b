"""Evaluation runs: the names callers used when one module held them all.

A run's lifecycle lives in ``evaluation.runs`` (``create``: validate and store a queued
run; ``execute``: hold its lease, score, write its files; ``progress``: the lease and the
progress columns; ``errors``), and each data set's evaluation in ``evaluation.evaluators``
(one evaluator per data set, keyed by the data-set enum). New code imports from there.
"""

from evaluation.runs.create import (
    evaluation_run_create,
    evaluation_run_start,
    method_unfit,
    release_folder_published,
    release_locate,
    runs_root,
)
from evaluation.runs.errors import EvaluationError, PredictionsRefused
from evaluation.runs.execute import (
    PREDICTIONS_FILE,
    RESULTS_FILE,
    evaluation_run,
    evaluation_run_claim_fields,
)
from evaluation.runs.progress import EVALUATION_RUN_JOB, RunProgress

__all__ = [
    "EVALUATION_RUN_JOB",
    "PREDICTIONS_FILE",
    "RESULTS_FILE",
    "EvaluationError",
    "PredictionsRefused",
    "RunProgress",
    "evaluation_run",
    "evaluation_run_claim_fields",
    "evaluation_run_create",
    "evaluation_run_start",
    "method_unfit",
    "release_folder_published",
    "release_locate",
    "runs_root",
]
