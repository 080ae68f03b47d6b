"""One scorer per kind of language model (``scorer_for``), and the method enum it is chosen by."""

import pytest

from evaluation.lm.methods import MODEL_METHODS, Method, default_method
from evaluation.lm.scorers import SCORERS, ScoringError, score_texts, scorer_for


def test_every_model_method_has_the_scorer_of_its_kind() -> None:
    assert {m.model_kind for m in MODEL_METHODS} == set(SCORERS)
    assert all(m.model_kind is None for m in Method if m not in MODEL_METHODS)
    assert (default_method("causal"), default_method("masked")) == (Method.FULL, Method.PLL)


def test_a_model_gets_the_scorer_of_its_kind(tiny_causal, tiny_masked) -> None:
    assert scorer_for(tiny_causal) is SCORERS["causal"] is scorer_for(tiny_causal, "partial")
    assert scorer_for(tiny_masked) is SCORERS["masked"] is scorer_for(tiny_masked, Method.PLL)
    texts = ["The trophy did not fit in the suitcase."]
    assert scorer_for(tiny_causal).texts(tiny_causal, texts, batch_size=4, progress=None) == score_texts(
        tiny_causal, texts
    )


def test_a_method_of_another_kind_or_without_a_model_is_refused(tiny_causal, tiny_masked) -> None:
    with pytest.raises(ScoringError, match="method 'pll' needs a masked language model"):
        scorer_for(tiny_causal, "pll")
    with pytest.raises(ScoringError, match="method 'full' needs a causal language model"):
        scorer_for(tiny_masked, "full")
    with pytest.raises(ScoringError, match="scores without a language model"):
        scorer_for(tiny_causal, "random")
    with pytest.raises(ScoringError, match="not 'partial'"):
        score_texts(tiny_causal, ["a text"], method="partial")
