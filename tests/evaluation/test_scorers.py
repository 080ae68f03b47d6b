"""Scorers on tiny random models, checked against naive one-sequence-at-a-time references."""

from __future__ import annotations

import math

import pytest
import torch

from evaluation.lm.scorers import (
    ItemScore,
    ScoringError,
    WscItem,
    WscText,
    causal,
    output_layer,
    score_continuations,
    score_texts,
    score_wsc,
)
from evaluation.lm.scorers.causal import encode_pair, encode_pairs, loglikelihood, loglikelihood_tokens
from evaluation.lm.scorers.masked import pseudo_log_likelihood, pseudo_log_likelihood_spans
from evaluation.lm.scorers.wsc import substitute

ITEMS = [
    WscItem(
        "q0",
        "The city councilmen refused the demonstrators a permit because",
        "they",
        "feared violence.",
        ("The city councilmen", "The demonstrators"),
        0,
        switched=WscText(
            "The demonstrators refused the city councilmen a permit because", "they", "feared violence."
        ),
    ),
    WscItem(
        "q1",
        "The city councilmen refused the demonstrators a permit because",
        "they",
        "advocated violence.",
        ("The city councilmen", "The demonstrators"),
        1,
    ),
    WscItem(
        "q2",
        "The trophy doesn't fit into the brown suitcase because",
        "it",
        "is too large.",
        ("the trophy", "the suitcase"),
        0,
    ),
    WscItem("q3", "The man couldn't lift", "his", "son because he was so weak.", ("The man", "the son"), 0),
    WscItem(
        "q4",
        "There is a gap in the wall. You can see the garden through",
        "it",
        ".",
        ("the gap", "the wall"),
        0,
    ),
]

REQUESTS = [
    (
        "The city councilmen refused the demonstrators a permit because the city councilmen",
        " feared violence.",
    ),
    ("The city councilmen refused the demonstrators a permit because the demonstrators", " feared violence."),
    ("", "The trophy doesn't fit into the brown suitcase because it is too large."),
    ("", "The trophy doesn't fit into the brown suitcase because it is too small."),
    ("Joan made sure to thank Susan ", "for all the help she had given."),  # trailing space moves
    ("Paul tried to call George", " on the phone"),
    ("Paul tried to call George", " on the phone"),  # a duplicate
    ("Jim", " comforted Kevin because he was so upset."),
    ("", "fish"),
]


def naive_loglikelihood(model, context: str, continuation: str) -> tuple[float, bool]:
    """One sequence, the model's full logits, a full log-softmax: the textbook computation."""
    ctx, cont = encode_pair(model, context, continuation)
    ids = torch.tensor([ctx + cont])
    with torch.no_grad():
        logprobs = torch.log_softmax(model.model(ids).logits[0].double(), dim=-1)
    rows = logprobs[len(ctx) - 1 : len(ctx) + len(cont) - 1]
    total = sum(rows[i, t].item() for i, t in enumerate(cont))
    greedy = all(rows[i].argmax().item() == t for i, t in enumerate(cont))
    return total, greedy


def naive_pll(model, ids: list[int], positions: list[int]) -> float:
    total = 0.0
    for pos in positions:
        masked = list(ids)
        masked[pos] = model.tokenizer.mask_token_id
        with torch.no_grad():
            logits = model.model(torch.tensor([masked])).logits[0, pos].double()
        total += torch.log_softmax(logits, dim=-1)[ids[pos]].item()
    return total


# -- causal log-likelihoods -------------------------------------------------------------


@pytest.mark.parametrize("fixture", ["tiny_causal", "tiny_gpt2"])
def test_loglikelihood_equals_the_naive_computation(fixture: str, request: pytest.FixtureRequest) -> None:
    model = request.getfixturevalue(fixture)
    got = loglikelihood(model, REQUESTS, batch_size=4)
    for (context, continuation), (lp, greedy) in zip(REQUESTS, got, strict=True):
        ref_lp, ref_greedy = naive_loglikelihood(model, context, continuation)
        assert lp == pytest.approx(ref_lp, abs=1e-4), (context, continuation)
        assert greedy == ref_greedy
        assert lp < 0


@pytest.mark.parametrize("fixture", ["tiny_causal", "tiny_gpt2"])
def test_batch_size_and_prefix_sharing_do_not_change_the_numbers(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    model = request.getfixturevalue(fixture)
    one = loglikelihood(model, REQUESTS, batch_size=1, share_prefixes=False)
    for batch_size, share_prefixes in ((8, True), (8, False), (3, True)):
        other = loglikelihood(model, REQUESTS, batch_size=batch_size, share_prefixes=share_prefixes)
        for (a, ga), (b, gb) in zip(one, other, strict=True):
            assert a == pytest.approx(b, abs=1e-4)
            assert ga == gb


@pytest.mark.parametrize("fixture", ["tiny_causal", "tiny_gpt2"])
def test_packed_rows_give_the_numbers_of_padded_batches(
    fixture: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evaluation.lm.scorers import causal

    model = request.getfixturevalue(fixture)
    assert causal._can_pack(model), model.model.config._attn_implementation
    calls: list[int] = []
    original = causal._run_chunk_packed

    def spy(chunk, *args):
        calls.append(len(chunk))
        return original(chunk, *args)

    monkeypatch.setattr(causal, "_run_chunk_packed", spy)
    packed = loglikelihood(model, REQUESTS, batch_size=8)
    assert calls and max(calls) > 1  # several groups shared one row
    monkeypatch.setattr(causal, "_can_pack", lambda model: False)
    padded = loglikelihood(model, REQUESTS, batch_size=8)
    for (context, continuation), (a, ga), (b, gb) in zip(REQUESTS, packed, padded, strict=True):
        ref, ref_greedy = naive_loglikelihood(model, context, continuation)
        assert a == pytest.approx(ref, abs=1e-4) and b == pytest.approx(ref, abs=1e-4)
        assert ga == gb == ref_greedy


def test_split_by_length_pays_for_a_call_only_when_the_padding_saved_is_worth_more() -> None:
    from evaluation.lm.scorers.causal import _split_by_length

    assert _split_by_length([], 8) == []
    assert _split_by_length([3, 3, 3], 8) == [(0, 3)]
    # one run: 4 x 20 = 80 positions + 8; two runs: 3 x 2 + 20 + 16 = 42
    assert _split_by_length([2, 2, 2, 20], 8) == [(0, 3), (3, 4)]
    # a call costs more than the padding it saves: stay in one run
    assert _split_by_length([2, 3], 8) == [(0, 2)]
    assert _split_by_length([1, 2, 3, 4], 0) == [(0, 1), (1, 2), (2, 3), (3, 4)]


def test_suffixes_split_into_several_calls_give_the_same_numbers(
    tiny_causal, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evaluation.lm.scorers import causal

    shared = "The city councilmen refused the demonstrators a permit because"
    tails = [
        " they feared violence.",
        " they",
        " they advocated violence and were loud about it all day long.",
    ]
    requests = [(shared, t) for t in tails] + [("", shared + t) for t in tails]
    one = loglikelihood(tiny_causal, requests, batch_size=1, share_prefixes=False)
    calls: list[int] = []
    original = causal._split_by_length

    def spy(lengths, cost):
        runs = original(lengths, 0)  # every distinct length in its own call
        calls.append(len(runs))
        return runs

    monkeypatch.setattr(causal, "_split_by_length", spy)
    monkeypatch.setattr(causal, "_can_pack", lambda model: False)  # the padded path
    split = loglikelihood(tiny_causal, requests, batch_size=8)
    assert max(calls) >= 2  # the suffixes did run in separate calls
    for (a, ga), (b, gb) in zip(one, split, strict=True):
        assert a == pytest.approx(b, abs=1e-4)
        assert ga == gb


def test_is_greedy_is_true_exactly_when_the_continuation_is_the_argmax(tiny_causal) -> None:
    ctx, _ = encode_pair(tiny_causal, "The trophy doesn't fit", " into")
    with torch.no_grad():
        logits = tiny_causal.model(torch.tensor([ctx])).logits[0, -1]
    best = int(logits.argmax())
    worst = int(logits.argmin())
    (lp_best, greedy_best), (lp_worst, greedy_worst) = loglikelihood_tokens(
        tiny_causal, [(ctx, [best]), (ctx, [worst])]
    )
    assert greedy_best is True and greedy_worst is False
    assert lp_best == pytest.approx(torch.log_softmax(logits.double(), -1)[best].item(), abs=1e-5)
    assert lp_best > lp_worst


@pytest.mark.parametrize("block", [1, 7, 64, 5000])
@pytest.mark.parametrize("softcap", [None, 3.0])
def test_vocabulary_blocks_give_log_softmax_and_the_first_argmax(block, softcap, monkeypatch) -> None:
    """The output layer a vocabulary block at a time (the streaming log-sum-exp) gives
    log_softmax of the whole row, and a row is greedy only when its target is the FIRST of
    tied maxima, whichever blocks the tied entries fall in."""

    monkeypatch.setattr(output_layer, "HEAD_VOCAB_BLOCK", block)
    monkeypatch.setattr(output_layer, "HEAD_CHUNK_ROWS", 3)
    torch.manual_seed(0)
    vocabulary, width = 300, 16
    linear = torch.nn.Linear(width, vocabulary, bias=True)
    with torch.no_grad():
        linear.weight[250] = linear.weight[40]  # two entries with the same logit
        linear.bias[250] = linear.bias[40]
        linear.weight[40] *= 0.0
        linear.weight[40] += 5.0
        linear.weight[250] = linear.weight[40]
    head = output_layer.OutputLayer(linear, None, softcap)
    hidden = torch.randn(8, width).abs()  # rows with positive entries: 40 and 250 are the top logits
    targets = torch.tensor([40, 250, 3, 299, 0, 40, 250, 128])
    logprobs, greedy = output_layer._score_rows(head, hidden, targets)
    logits = linear(hidden).double()
    if softcap:
        logits = torch.tanh(logits / softcap) * softcap
    expected = torch.log_softmax(logits, -1).gather(1, targets[:, None])[:, 0]
    assert torch.allclose(logprobs, expected, atol=1e-5)
    assert greedy.tolist() == [True, False, False, False, False, True, False, False]
    assert (logits.argmax(-1) == 40).all()


@pytest.mark.parametrize("block", [7, 5000])
def test_several_targets_of_one_row_share_its_output_layer(block, monkeypatch) -> None:
    """Targets given with their rows (`owner`, in any order, a row with several targets)
    get the numbers they get one row each, and the head runs once a row."""

    monkeypatch.setattr(output_layer, "HEAD_VOCAB_BLOCK", block)
    monkeypatch.setattr(output_layer, "HEAD_CHUNK_ROWS", 2)
    torch.manual_seed(2)
    linear = torch.nn.Linear(16, 120, bias=False).requires_grad_(False)
    calls: list[int] = []
    head = output_layer.OutputLayer(linear, None, None)
    original = head.blocks

    def counting(hidden, size):
        calls.append(len(hidden))
        yield from original(hidden, size)

    head.blocks = counting  # type: ignore[method-assign]
    hidden = torch.randn(5, 16)
    owner = torch.tensor([3, 0, 3, 1, 4, 0, 2, 3, 4])
    targets = torch.tensor([5, 7, 119, 0, 64, 7, 33, 6, 65])
    logprobs, greedy = output_layer._score_rows(head, hidden, targets, owner)
    assert sum(calls) == 5  # each of the 5 rows once
    logits = linear(hidden).double()
    expected = torch.log_softmax(logits, -1)[owner, targets]
    assert torch.allclose(logprobs, expected, atol=1e-5)
    assert greedy.tolist() == (logits.argmax(-1)[owner] == targets).tolist()
    one_each, greedy_each = output_layer._score_rows(
        output_layer.OutputLayer(linear, None, None), hidden[owner], targets
    )
    assert torch.equal(logprobs, one_each) and torch.equal(greedy, greedy_each)
    # a target that is its row's argmax is greedy
    best = logits.argmax(-1)
    _, g = output_layer._score_rows(head, hidden, best[[4, 1]], torch.tensor([4, 1]))
    assert g.tolist() == [True, True]


class _NotLinear(torch.nn.Module):
    def __init__(self, linear: torch.nn.Linear) -> None:
        super().__init__()
        self.linear = linear

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.linear(hidden)


def test_a_head_that_is_not_a_linear_layer_is_scored_whole(monkeypatch) -> None:

    monkeypatch.setattr(output_layer, "HEAD_VOCAB_BLOCK", 7)
    torch.manual_seed(1)
    linear = torch.nn.Linear(16, 50, bias=False)
    head = output_layer.OutputLayer(_NotLinear(linear), 0.5, None)
    assert [v0 for v0, _ in head.blocks(torch.randn(2, 16), 7)] == [0]
    hidden = torch.randn(4, 16)
    targets = torch.tensor([1, 2, 3, 49])
    logprobs, greedy = output_layer._score_rows(head, hidden, targets)
    logits = (linear(hidden) * 0.5).double()
    expected = torch.log_softmax(logits, -1).gather(1, targets[:, None])[:, 0]
    assert torch.allclose(logprobs, expected, atol=1e-5)
    assert greedy.tolist() == (logits.argmax(-1) == targets).tolist()


@pytest.mark.parametrize("fixture", ["tiny_causal", "tiny_gpt2"])
def test_requests_tokenized_in_one_batch_get_the_tokens_of_one_at_a_time(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    model = request.getfixturevalue(fixture)
    start = model.tokenizer.convert_ids_to_tokens(model.start_token_id)
    requests = [
        ("The fish ", "ate"),
        ("The fish", " ate the worm."),
        ("", "The fish ate the worm."),
        ("", start + "The fish"),
        ("The fish  ", "ate"),
        ("The fish ", "ate"),
        ("Joan thanked Susan", ""),
    ]
    assert encode_pairs(model, requests) == [encode_pair(model, c, x) for c, x in requests]
    assert encode_pairs(model, []) == []


def test_the_start_token_conditions_every_text(tiny_causal, tiny_gpt2) -> None:
    tok = tiny_causal.tokenizer
    assert tiny_causal.start_token_id == tok.convert_tokens_to_ids("<s>")
    ctx, cont = encode_pair(tiny_causal, "", "The fish")
    assert ctx == [tiny_causal.start_token_id] and cont == tiny_causal.encode("The fish")
    ctx, cont = encode_pair(tiny_causal, "The fish ", "ate")
    assert ctx[0] == tiny_causal.start_token_id and tok.decode(cont).startswith(" ")
    # GPT-2 style vocabulary without BOS: the start token is <|endoftext|>.
    assert tiny_gpt2.settings["start_token"] == "<|endoftext|>"
    assert tiny_gpt2.settings["start_token_source"] == "eos"


def test_empty_continuation_and_masked_model_are_refused(tiny_causal, tiny_masked) -> None:
    with pytest.raises(ScoringError, match="request 1"):
        loglikelihood(tiny_causal, [("a", " b"), ("a", "")])
    with pytest.raises(ScoringError, match="causal"):
        loglikelihood(tiny_masked, [("a", " b")])


def test_progress_reports_every_request_once_and_ends_at_the_total(tiny_causal, monkeypatch) -> None:
    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(causal, "CHUNK_MAX_TOKENS", 8)  # packed chunks of a few positions: several calls
    loglikelihood(tiny_causal, REQUESTS, batch_size=2, progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (len(REQUESTS), len(REQUESTS))
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert len(calls) > 1


# -- WSC scoring ----------------------------------------------------------------------


def test_substitution_follows_lm_eval_wsc273_rules() -> None:
    sub = substitute(ITEMS[0].text, "The city councilmen")
    assert sub.context == "The city councilmen refused the demonstrators a permit because the city councilmen"
    assert sub.continuation == " feared violence."
    possessive = substitute(ITEMS[3].text, "The man")
    assert possessive.sentence == "The man couldn't lift the man's son because he was so weak."
    final = substitute(ITEMS[4].text, "the gap")
    assert final.sentence.endswith("through the gap.") and final.continuation == "."
    start = substitute(WscText("", "He", "left."), "the man")
    assert start.sentence == "The man left."


def test_full_scores_are_log_probabilities_of_the_whole_substituted_sentence(tiny_causal) -> None:
    scores = score_wsc(tiny_causal, ITEMS, "full", batch_size=8)
    assert [(s.id, s.variant) for s in scores] == [
        ("q0", "original"),
        ("q0", "switched"),
        ("q1", "original"),
        ("q2", "original"),
        ("q3", "original"),
        ("q4", "original"),
    ]
    for score in scores:
        item = next(i for i in ITEMS if i.id == score.id)
        text = item.text if score.variant == "original" else item.switched
        assert text is not None
        for k, cand in enumerate(item.candidates):
            ref, _ = naive_loglikelihood(tiny_causal, "", substitute(text, cand).sentence)
            assert score.scores[k] == pytest.approx(ref, abs=1e-4)
        assert score.prediction == (1 if score.scores[1] > score.scores[0] else 0)
    switched = scores[1]
    assert switched.answer == 1 - ITEMS[0].answer


def test_partial_scores_the_same_continuation_after_each_candidate(tiny_causal) -> None:
    scores = score_wsc(tiny_causal, ITEMS, "partial", batch_size=3)
    for score in scores:
        item = next(i for i in ITEMS if i.id == score.id)
        text = item.text if score.variant == "original" else item.switched
        assert text is not None
        subs = [substitute(text, c) for c in item.candidates]
        assert subs[0].continuation == subs[1].continuation
        for k, sub in enumerate(subs):
            ref, _ = naive_loglikelihood(tiny_causal, sub.context, sub.continuation)
            assert score.scores[k] == pytest.approx(ref, abs=1e-4)
        full_ref, _ = naive_loglikelihood(tiny_causal, "", subs[0].sentence)
        assert score.scores[0] > full_ref  # fewer tokens scored than the full sentence


def test_pll_equals_masking_each_token_in_turn(tiny_masked) -> None:
    texts = [
        "The fish ate the worm.",
        "The trophy doesn't fit into the brown suitcase.",
        "Jim comforted Kevin.",
    ]
    got = pseudo_log_likelihood(tiny_masked, texts, batch_size=5)
    for text, value in zip(texts, got, strict=True):
        enc = tiny_masked.tokenizer(text)
        ids = enc["input_ids"]
        assert ids[0] == tiny_masked.tokenizer.cls_token_id and ids[-1] == tiny_masked.tokenizer.sep_token_id
        assert value == pytest.approx(naive_pll(tiny_masked, ids, list(range(1, len(ids) - 1))), abs=1e-4)
    assert pseudo_log_likelihood(tiny_masked, texts, batch_size=1) == pytest.approx(got, abs=1e-4)


def test_pll_of_a_continuation_masks_only_its_tokens(tiny_masked) -> None:
    got = pseudo_log_likelihood_spans(tiny_masked, [("The fish ate", " the worm.")])
    ids = tiny_masked.tokenizer("The fish ate the worm.")["input_ids"]
    n_context = len(tiny_masked.tokenizer("The fish ate", add_special_tokens=False)["input_ids"])
    positions = list(range(1 + n_context, len(ids) - 1))
    assert got[0] == pytest.approx(naive_pll(tiny_masked, ids, positions), abs=1e-4)


def test_wsc_pll_scores_whole_sentences(tiny_masked) -> None:
    scores = score_wsc(tiny_masked, ITEMS[:2], "pll")
    sentences = [substitute(ITEMS[0].text, c).sentence for c in ITEMS[0].candidates]
    # abs=1e-4 as elsewhere here: float32 sums differ in the last bits with the batch's make-up
    assert scores[0].scores == pytest.approx(tuple(pseudo_log_likelihood(tiny_masked, sentences)), abs=1e-4)


def test_methods_refuse_the_wrong_kind_of_model(tiny_causal, tiny_masked) -> None:
    with pytest.raises(ScoringError, match="masked"):
        score_wsc(tiny_causal, ITEMS, "pll")
    with pytest.raises(ScoringError, match="causal"):
        score_wsc(tiny_masked, ITEMS, "partial")
    with pytest.raises(ScoringError, match="needs a model"):
        score_wsc(None, ITEMS, "full")
    with pytest.raises(ScoringError, match="unknown method"):
        score_wsc(tiny_causal, ITEMS, "zero-shot")


def test_bad_items_are_named() -> None:
    bad = WscItem("x", "a", "it", "b", ("c", "d"), 2)
    with pytest.raises(ScoringError, match=r"item 2 \(id 'x'\): answer"):
        score_wsc(None, [ITEMS[0], bad], "first")
    with pytest.raises(ScoringError, match="appears twice"):
        score_wsc(None, [ITEMS[0], ITEMS[0]], "first")


# -- texts and continuations -------------------------------------------------------------


def test_score_texts_is_the_log_probability_after_the_start_token(tiny_causal, tiny_masked) -> None:
    texts = ["The fish ate the worm.", "The worm ate the fish."]
    got = score_texts(tiny_causal, texts)
    assert got == pytest.approx([naive_loglikelihood(tiny_causal, "", t)[0] for t in texts], abs=1e-4)
    assert score_texts(tiny_masked, texts) == pytest.approx(pseudo_log_likelihood(tiny_masked, texts))
    with pytest.raises(ScoringError, match="not 'random'"):
        score_texts(tiny_causal, texts, method="random")


def test_score_continuations_conditions_on_the_context(tiny_causal) -> None:
    pairs = [("The fish ate the worm.", " It was tasty."), ("The fish ate the worm.", " It was hungry.")]
    got = score_continuations(tiny_causal, pairs)
    assert got == pytest.approx([naive_loglikelihood(tiny_causal, c, x)[0] for c, x in pairs], abs=1e-4)
    assert all(math.isfinite(v) for v in got)


# -- baselines -----------------------------------------------------------------------------


def test_random_baseline_is_reproducible_with_a_seed() -> None:
    items = [WscItem(str(i), "A", "it", "b.", ("x", "y"), i % 2) for i in range(200)]
    a = score_wsc(None, items, "random", seed=7)
    b = score_wsc(None, items, "random", seed=7)
    c = score_wsc(None, items, "random", seed=8)
    assert [s.prediction for s in a] == [s.prediction for s in b]
    assert [s.prediction for s in a] != [s.prediction for s in c]
    share = sum(s.prediction for s in a) / len(a)
    assert 0.35 < share < 0.65
    assert all(s.scores[s.prediction] == 1.0 and sum(s.scores) == 1.0 for s in a)


def test_majority_baseline_picks_the_most_frequent_gold_answer() -> None:
    items = [WscItem(str(i), "A", "it", "b.", ("x", "y"), 1 if i < 2 else 0) for i in range(5)]
    assert {s.prediction for s in score_wsc(None, items, "majority")} == {0}
    tie = [WscItem(str(i), "A", "it", "b.", ("x", "y"), i % 2) for i in range(4)]
    assert {s.prediction for s in score_wsc(None, tie, "majority")} == {0}
    items = [WscItem(str(i), "A", "it", "b.", ("x", "y"), 1 if i < 3 else 0) for i in range(4)]
    scores = score_wsc(None, items, "majority")
    assert {s.prediction for s in scores} == {1}
    assert sum(s.correct for s in scores) == 3


def test_first_candidate_baseline_always_answers_zero() -> None:
    scores = score_wsc(None, ITEMS, "first")
    assert all(s.prediction == 0 for s in scores)
    assert [s.correct for s in scores] == [s.answer == 0 for s in scores]
    assert isinstance(scores[0], ItemScore)
