"""Pure metric functions for evaluation runs (DESIGN section 8).

No Django imports here: every function takes plain Python / numpy values and is tested
on hand-computed cases in ``tests/evaluation/test_metrics_*.py``.
"""

from evaluation.metrics.common import Accuracy, accuracy

__all__ = ["Accuracy", "accuracy"]
