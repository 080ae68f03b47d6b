"""The features job's one forward pass gives what the two functions it replaces give.

``compute_features`` (``evaluation.lm.features.text_features``) computes each text's mean
hidden states, log-likelihood and token count from one packed pass over the texts'
prefix tree; these tests hold it to ``mean_hidden_states``, ``score_texts`` and
``text_token_counts`` called one after the other, on tiny models of each kind: a Llama
(the lean forward SmolLM2 takes), a GPT-2 (transformers' forward with a ready mask) and
a masked LM (the two functions themselves)."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.audit.frozen import compute_features
from evaluation.lm.features import mean_hidden_states, text_features
from evaluation.lm.scorers import score_texts, text_token_counts
from tests.evaluation.tiny_models import SENTENCES

#: Texts sharing beginnings (WinoWhy's reasons share their question, Winograd's views the
#: text before the pronoun), a text that is the beginning of another, a repeated text,
#: one-token and longer texts.
TEXTS = [
    *SENTENCES,
    "The trophy doesn't fit into the brown suitcase",
    "The trophy doesn't fit into the brown suitcase because it is too large. 'it' refers to the trophy",
    "The trophy doesn't fit into the brown suitcase because it is too large. 'it' refers to the suitcase",
    "The",
    "Jim comforted Kevin because he was so upset.",
    "The fish ate the worm.",
]


def _two_passes(model, texts):
    return (
        mean_hidden_states(model, texts, batch_size=4),
        np.asarray(score_texts(model, texts, batch_size=4)),
        np.asarray(text_token_counts(model, texts)),
    )


@pytest.mark.parametrize("name", ["tiny_causal", "tiny_gpt2", "tiny_masked"])
def test_one_pass_gives_the_hidden_states_log_likelihoods_and_token_counts_of_the_two_passes(request, name):
    model = request.getfixturevalue(name)
    hidden, logprobs, tokens = _two_passes(model, TEXTS)
    got = text_features(model, TEXTS, batch_size=3)
    assert got.hidden.shape == hidden.shape and got.hidden.dtype == np.float32
    np.testing.assert_allclose(got.hidden, hidden, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got.logprobs, logprobs, rtol=0, atol=1e-4)
    assert got.tokens.tolist() == tokens.tolist()
    # repeated texts get the very same features
    assert np.array_equal(got.hidden[TEXTS.index("The fish ate the worm.")], got.hidden[-1])
    assert got.logprobs[10] == got.logprobs[-2]


def test_compute_features_reports_progress_to_the_end_and_keeps_the_texts_order(tiny_causal):
    seen: list[tuple[int, int]] = []
    features = compute_features(tiny_causal, TEXTS, batch_size=2, progress=lambda d, n: seen.append((d, n)))
    hidden, logprobs, tokens = _two_passes(tiny_causal, TEXTS)
    assert [f.tokens for f in features] == tokens.tolist()
    for f, h, lp in zip(features, hidden, logprobs, strict=True):
        np.testing.assert_allclose(f.hidden, h, rtol=1e-4, atol=1e-5)
        assert f.logprob == pytest.approx(lp, abs=1e-4)
    assert seen[-1] == (len(TEXTS), len(TEXTS))
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert compute_features(tiny_causal, []) == []
