"""Winnow's log-likelihoods equal lm-evaluation-harness's HFLM.loglikelihood on the same pairs.

HFLM gets the very model object Winnow loaded and a copy of its tokenizer that adds the
same start token (`tokenizer_adding_start_token`), so both condition on the same tokens.
"""

from __future__ import annotations

import logging
import os
from dataclasses import replace
from pathlib import Path

import pytest

from evaluation.lm.modeling import (
    SMOLLM2_INSTALL_HINT,
    LoadedModel,
    load_model,
    smollm2_path,
    tokenizer_adding_start_token,
)
from evaluation.lm.scorers.causal import loglikelihood
from evaluation.lm.scorers.sources import wsc_items_from_winowhy
from evaluation.lm.scorers.wsc import substitute


def hflm_loglikelihood(
    model: LoadedModel, requests: list[tuple[str, str]], batch_size: int
) -> list[tuple[float, bool]]:
    logging.getLogger("lm_eval").setLevel(logging.ERROR)
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    lm = HFLM(
        pretrained=model.model,
        tokenizer=tokenizer_adding_start_token(model),
        batch_size=batch_size,
        device="cpu",
        prefix_token_id=model.start_token_id,
    )
    instances = [
        Instance(request_type="loglikelihood", doc={}, arguments=pair, idx=i)
        for i, pair in enumerate(requests)
    ]
    return list(lm.loglikelihood(instances, disable_tqdm=True))


def wsc_requests(items_path: Path, n_questions: int) -> list[tuple[str, str]]:
    """Partial and full requests for the first questions of WSC273 (2 candidates each)."""
    items = wsc_items_from_winowhy(items_path)[:n_questions]
    subs = [substitute(item.text, cand) for item in items for cand in item.candidates]
    return [(s.context, s.continuation) for s in subs] + [("", s.sentence) for s in subs]


TINY_REQUESTS = [
    (
        "The city councilmen refused the demonstrators a permit because the city councilmen",
        " feared violence.",
    ),
    ("The city councilmen refused the demonstrators a permit because the demonstrators", " feared violence."),
    ("", "The trophy doesn't fit into the brown suitcase because it is too large."),
    ("Joan made sure to thank Susan ", "for all the help she had given."),
    ("Paul tried to call George", " on the phone, but he wasn't successful."),
    ("", "fish"),
]


def lm_eval_normalized(model: LoadedModel) -> LoadedModel:
    """The same weights, normalised as lm-eval does (`load_model(normalization="lm-eval")`)."""
    return replace(model, settings={**model.settings, "normalization": "lm-eval"})


@pytest.mark.parametrize("normalization", ["exact", "lm-eval"])
@pytest.mark.parametrize("fixture", ["tiny_causal", "tiny_gpt2"])
def test_tiny_model_loglikelihoods_equal_lm_eval_hflm(
    fixture: str, normalization: str, request: pytest.FixtureRequest
) -> None:
    model = request.getfixturevalue(fixture)
    if normalization == "lm-eval":
        model = lm_eval_normalized(model)
    ours = loglikelihood(model, TINY_REQUESTS, batch_size=4)
    theirs = hflm_loglikelihood(model, TINY_REQUESTS, batch_size=4)
    for (a, greedy_a), (b, greedy_b), pair in zip(ours, theirs, TINY_REQUESTS, strict=True):
        assert a == pytest.approx(b, abs=1e-4), pair
        assert greedy_a == greedy_b, pair


@pytest.fixture(scope="module")
def smollm2() -> LoadedModel:
    path = smollm2_path()
    if path is None:
        message = f"the SmolLM2 wheel is not installed: {SMOLLM2_INSTALL_HINT}"
        if os.environ.get("WINNOW_REQUIRE_SERVICES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return load_model(path)


def test_partial_and_full_requests_of_one_sentence_in_one_call_stay_apart(
    tiny_causal, data_dir: Path
) -> None:
    """Winnow computes a sentence once for its partial and full requests and sums each
    over its own tokens. (lm-eval 0.4.13's one-token logits cache mixes such requests up
    when they share a call, so HFLM gets them in two calls, as two tasks would send them.)"""
    requests = wsc_requests(data_dir / "winowhy" / "winowhy.json", n_questions=6)
    ours = loglikelihood(tiny_causal, requests, batch_size=8)
    half = len(requests) // 2
    theirs = hflm_loglikelihood(tiny_causal, requests[:half], 8) + hflm_loglikelihood(
        tiny_causal, requests[half:], 8
    )
    assert max(abs(a - b) for (a, _), (b, _) in zip(ours, theirs, strict=True)) < 1e-4
    assert ours[0][0] != ours[1][0]  # the two candidates' partial scores differ


@pytest.mark.slow
@pytest.mark.model
@pytest.mark.realdata
def test_smollm2_loglikelihoods_equal_lm_eval_hflm_on_wsc(smollm2: LoadedModel, data_dir: Path) -> None:
    requests = wsc_requests(data_dir / "winowhy" / "winowhy.json", n_questions=10)
    assert len(requests) == 40
    ours = loglikelihood(smollm2, requests, batch_size=16)
    theirs = hflm_loglikelihood(smollm2, requests[:20], batch_size=16)  # partial
    theirs += hflm_loglikelihood(smollm2, requests[20:], batch_size=16)  # full
    worst = max(abs(a - b) for (a, _), (b, _) in zip(ours, theirs, strict=True))
    assert worst < 1e-3
    assert [g for _, g in ours] == [g for _, g in theirs]
    # The numbers are real log-probabilities: partial (fewer tokens) above full for the same sentence.
    assert all(ours[i][0] > ours[20 + i][0] for i in range(20))
    # lm-eval's own normalization (float32 log_softmax of whole rows) gives its numbers to
    # 1e-4 (issue 31): what is left of the difference is the two forwards' float32 rounding
    same = loglikelihood(lm_eval_normalized(smollm2), requests, batch_size=16)
    assert max(abs(a - b) for (a, _), (b, _) in zip(same, theirs, strict=True)) < 1e-4
    assert [g for _, g in same] == [g for _, g in theirs]
