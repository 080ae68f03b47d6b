"""Every data set has an evaluator (evaluation.evaluators) with a results template the run
page can include; a data set added to the enum without them fails here."""

import pytest
from django.template.loader import get_template

from evaluation.evaluators import EVALUATORS, evaluator_for
from evaluation.lm.methods import Method
from evaluation.runs.create import method_unfit
from releases.dataset import Dataset


@pytest.mark.parametrize("dataset", list(Dataset))
def test_every_data_set_has_an_evaluator_and_a_results_template(dataset: Dataset) -> None:
    evaluator = EVALUATORS.get(dataset)
    assert evaluator is not None, f"no evaluator for the data set {dataset.value!r} in evaluation.evaluators"
    assert evaluator.dataset is dataset.reads_as
    assert get_template(evaluator.results_template) is not None
    assert all(isinstance(method, Method) for method in evaluator.unfit)


def test_sen_making_is_evaluated_as_comve() -> None:
    assert evaluator_for("senmaking") is evaluator_for("comve")
    assert method_unfit("partial", "senmaking") == method_unfit("partial", "comve") is not None


def test_a_data_set_without_an_evaluator_is_refused() -> None:
    with pytest.raises(ValueError):
        evaluator_for("cosmosqa")
