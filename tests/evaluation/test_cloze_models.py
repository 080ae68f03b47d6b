"""Replacement proposals and both experiments with tiny random masked and causal models."""

import json
import math
from typing import Any

import numpy as np
import pytest
import torch

from evaluation.cloze import math as cm
from evaluation.cloze.candidates import CAUSAL, MASKED, ModelLoadError, load_cloze_model
from evaluation.cloze.data import PairFileError, read_pairs, statements_of
from evaluation.cloze.embeddings import EmbeddingFileError, GloveVectors, ModelInputVectors
from evaluation.cloze.experiments import Pair, Statement, confidence_pair, dispersion_statement
from tests.evaluation.cloze_models import CORPUS, build_causal, build_masked


@pytest.fixture(scope="module")
def masked(tmp_path_factory):
    return load_cloze_model(build_masked(tmp_path_factory.mktemp("masked")))


@pytest.fixture(scope="module")
def causal(tmp_path_factory):
    return load_cloze_model(build_causal(tmp_path_factory.mktemp("causal")))


@pytest.fixture
def glove(tmp_path):
    """A GloVe file with a seeded random vector for every word of the tiny corpus (lower case)."""
    rng = np.random.default_rng(0)
    words = sorted({w.lower() for line in CORPUS for w in line.replace(".", " ").split()})
    path = tmp_path / "glove.txt"
    path.write_text("".join(f"{w} {' '.join(f'{x:.5f}' for x in rng.normal(size=6))}\n" for w in words))
    return GloveVectors(path)


def test_a_bert_folder_loads_as_masked_and_a_llama_folder_as_causal_with_a_start_token(masked, causal):
    assert masked.kind == MASKED
    assert causal.kind == CAUSAL
    assert causal.start_token_id == causal.tokenizer.bos_token_id
    assert causal._ids("He drinks milk.")[0] == causal.tokenizer.bos_token_id


def test_loading_a_missing_or_foreign_path_says_why(tmp_path):
    with pytest.raises(ModelLoadError, match="no such file"):
        load_cloze_model(tmp_path / "nothing")
    stray = tmp_path / "model.bin"
    stray.write_bytes(b"x")
    with pytest.raises(ModelLoadError, match="not a GGUF file"):
        load_cloze_model(stray)


def test_masked_replacements_are_the_top_whole_words_with_the_probabilities_at_the_mask(masked):
    left, right = "He poured ", " on his cereal."
    (candidates,) = masked.fill([(left, right)], k=5)
    batch = masked.tokenizer([left + masked.tokenizer.mask_token + right], return_tensors="pt")
    with torch.no_grad():
        logits = masked.model(**batch).logits[0]
    position = int((batch["input_ids"][0] == masked.tokenizer.mask_token_id).nonzero()[0, 0])
    probs = torch.softmax(logits[position], dim=-1)
    vocab = masked.tokenizer.get_vocab()
    words = [w for w in vocab if w.isalpha()]
    best = sorted(words, key=lambda w: float(probs[vocab[w]]), reverse=True)[:5]
    assert [c.word for c in candidates] == best
    for c in candidates:
        assert c.prob == pytest.approx(float(probs[vocab[c.word]]), rel=1e-5)
    assert all(c.word.isalpha() and not c.word.startswith("[") for c in candidates)


def _full_sentence_logprob(model, text):
    ids = [model.tokenizer.bos_token_id] + model.tokenizer(text, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logits = model.model(torch.tensor([ids])).logits[0]
    logp = torch.log_softmax(logits, dim=-1)
    return sum(float(logp[i, ids[i + 1]]) for i in range(len(ids) - 1))


def test_causal_candidates_are_re_ranked_by_the_probability_of_the_whole_sentence(causal):
    left, right = "He drinks", "."
    (candidates,) = causal.fill([(left + " ", right)], k=4, propose_n=8)
    assert len(candidates) == 4
    full = [_full_sentence_logprob(causal, f"{left} {c.word}{right}") for c in candidates]
    assert full == sorted(full, reverse=True)
    for a, b, la, lb in zip(candidates, candidates[1:], full, full[1:], strict=False):
        # the probabilities are a softmax over the sentence log-probabilities
        assert a.prob / b.prob == pytest.approx(math.exp(la - lb), rel=1e-3)
    # every candidate was proposed by the next-token distribution after the left context
    ids = [causal.tokenizer.bos_token_id] + causal.tokenizer(left, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        next_logits = causal.model(torch.tensor([ids])).logits[0, -1]
    order = torch.argsort(next_logits, descending=True).tolist()
    allowed = [i for i in order if causal.vocab[i][2] and causal.vocab[i][1]][:8]
    assert {c.word for c in candidates} <= {causal.vocab[i][0] for i in allowed}


def test_all_gaps_at_once_give_what_one_gap_at_a_time_gives(causal, monkeypatch):
    # the batched path (two forward passes for all the gaps, right padding, cache rows
    # gathered per continuation, output-layer slices) against the gap-by-gap path
    from evaluation.cloze import candidates as module

    monkeypatch.setattr(module, "HEAD_ROWS_A_SLICE", 7)  # several slices, one cut mid-row
    monkeypatch.setattr(module, "GAPS_A_PASS", 3)  # several passes
    gaps = []
    for text in CORPUS:
        words = text.split(" ")
        for i in range(len(words)):
            gaps.append((" ".join(words[:i]) + (" " if i else ""), text[len(" ".join(words[: i + 1])) :]))
    assert len(gaps) > 3
    causal.pack_gaps = False
    try:
        batched = causal.fill(gaps, k=5, propose_n=9)
        causal.batch_gaps = False
        one_by_one = causal.fill(gaps, k=5, propose_n=9)
    finally:
        causal.batch_gaps, causal.pack_gaps = True, True
    assert [[c.word for c in found] for found in batched] == [[c.word for c in found] for found in one_by_one]
    for found, reference in zip(batched, one_by_one, strict=True):
        # fp32 rounding of other matrix shapes: about 1e-6 apart (records keep 6 decimals)
        assert [c.prob for c in found] == pytest.approx([c.prob for c in reference], abs=1e-5)
        assert [c.logprob for c in found] == pytest.approx([c.logprob for c in reference], abs=1e-4)


@pytest.mark.parametrize("chunk_tokens", [1024, 20])
def test_packed_prefix_trees_give_what_one_gap_at_a_time_gives(causal, monkeypatch, chunk_tokens):
    # the packed path (the left contexts' tree, then every (gap, word) sequence's tree in
    # packed rows, output layer once a (node, next token) pair), in one row or cut into
    # many small ones, against the gap-by-gap path
    from evaluation.cloze import candidates as module

    assert causal.pack_gaps and causal.batch_gaps and causal._can_pack()
    monkeypatch.setattr(module, "CLOZE_CHUNK_TOKENS", chunk_tokens)
    calls: list[tuple] = []
    real = module.ClozeModel._fill_causal_packed

    def counted(self, *args):
        calls.append(args)
        return real(self, *args)

    monkeypatch.setattr(module.ClozeModel, "_fill_causal_packed", counted)
    gaps = []
    for text in CORPUS:
        words = text.split(" ")
        for i in range(len(words)):
            gaps.append((" ".join(words[:i]) + (" " if i else ""), text[len(" ".join(words[: i + 1])) :]))
    packed = causal.fill(gaps, k=5, propose_n=9)
    assert len(calls) == 1
    causal.batch_gaps = False
    try:
        one_by_one = causal.fill(gaps, k=5, propose_n=9)
    finally:
        causal.batch_gaps = True
    assert [[c.word for c in found] for found in packed] == [[c.word for c in found] for found in one_by_one]
    for found, reference in zip(packed, one_by_one, strict=True):
        assert [c.prob for c in found] == pytest.approx([c.prob for c in reference], abs=1e-5)
        assert [c.logprob for c in found] == pytest.approx([c.logprob for c in reference], abs=1e-4)


def test_causal_sentence_scores_can_skip_the_shared_prefix_without_changing_differences(causal):
    texts = ["He drinks milk.", "He drinks apple.", "He drinks the fish."]
    full = causal.sentence_logprobs(texts)
    short = causal.sentence_logprobs(texts, skip_shared_prefix=True)
    assert full[0] == pytest.approx(_full_sentence_logprob(causal, texts[0]), abs=1e-4)
    assert [f - s for f, s in zip(full, short, strict=True)] == pytest.approx(
        [full[0] - short[0]] * 3, abs=1e-4
    )
    assert full[0] - short[0] < 0  # the shared prefix has a cost that was left out


def test_model_input_vector_is_the_mean_of_the_sub_token_embeddings(causal):
    vectors = ModelInputVectors(causal.model, causal.tokenizer, space_prefix=True)
    ids = causal.tokenizer(" cereal", add_special_tokens=False)["input_ids"]
    matrix = causal.model.get_input_embeddings().weight.detach().double().numpy()
    vector = vectors.vector("cereal")
    assert vector is not None
    assert np.allclose(vector, matrix[ids].mean(axis=0))


def test_glove_file_is_read_with_a_lower_case_fallback(glove):
    assert glove.vector("milk") is not None
    assert np.array_equal(glove.vector("Milk"), glove.vector("milk"))
    assert glove.vector("zebra") is None
    assert glove.dim == 6


def test_a_bad_glove_file_names_the_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("milk 0.1 0.2\ncereal 0.3\n")
    with pytest.raises(EmbeddingFileError, match=r"bad.txt, line 2: 1 numbers for 'cereal', expected 2"):
        GloveVectors(path)
    path.write_text("milk 0.1 x\n")
    with pytest.raises(EmbeddingFileError, match="line 1: not a number"):
        GloveVectors(path)


@pytest.mark.parametrize("which", ["masked", "causal"])
def test_dispersion_of_a_statement_follows_the_equations(which, masked, causal, glove):
    model = masked if which == "masked" else causal
    record = dispersion_statement(
        Statement("s", "He poured milk on his cereal.", True), model, glove, k=5, propose_n=10
    )
    assert [m["word"] for m in record["masked"]] + [s["word"] for s in record["skipped"]] == [
        "poured",
        "milk",
        "cereal",
    ]
    assert record["length"] == 6
    for m in record["masked"]:
        target = glove.vector(m["word"])
        reps = [glove.vector(r["word"]) for r in m["replacements"]]
        probs = [r["prob"] for r in m["replacements"]]
        assert m["accuracy_uniform"] == pytest.approx(np.mean([cm.cosine(r, target) for r in reps]), abs=1e-5)
        assert m["accuracy_weighted"] == pytest.approx(cm.accuracy(target, reps, probs), abs=1e-5)
        assert m["precision_weighted"] == pytest.approx(cm.precision(reps, probs), abs=1e-5)
    if record["masked"]:
        assert record["accuracy_weighted"] == pytest.approx(
            np.mean([m["accuracy_weighted"] for m in record["masked"]]), abs=1e-5
        )


@pytest.mark.parametrize("which", ["masked", "causal"])
def test_confidence_of_a_pair_predicts_the_less_confident_choice_as_against_sense(which, masked, causal):
    model = masked if which == "masked" else causal
    vectors = ModelInputVectors(model.model, model.tokenizer, space_prefix=model.space_marked)
    record = confidence_pair(
        Pair("p", "He drinks apple.", "He drinks milk.", 0), model, vectors, k=6, propose_n=12, seed=0
    )
    assert record["encoded"], record.get("reason")
    assert record["choices"] == ["apple", "milk"]
    assert record["context"] == "He drinks ___."
    # equation 5: P(c) sums the candidates' own probabilities, so the clusters together hold
    # the top-k's share of the model's distribution, and two confidences sum to that
    total = sum(c["prob"] for c in record["candidates"])
    assert 0 < total < 1
    assert sum(record["cluster_probs"]) == pytest.approx(total, abs=1e-5)
    assert sum(record["confidence"]) == pytest.approx(total, abs=1e-5)
    low = 0 if record["confidence"][0] < record["confidence"][1] else 1
    assert record["predicted_false_index"] == low
    assert record["correct"] == (low == 0)
    assert record["confidence_correct"] == record["confidence"][1]


def test_a_pair_that_differs_by_an_insertion_is_not_encoded(masked):
    vectors = ModelInputVectors(masked.model, masked.tokenizer, space_prefix=False)
    record = confidence_pair(
        Pair("p", "A dog barks.", "A big dog barks.", 1), masked, vectors, k=4, propose_n=4, seed=0
    )
    assert record["encoded"] is False and record["reason"] == "insertion"


def test_pairs_are_read_from_a_release_file_and_from_a_comve_split_folder(tmp_path):
    release = tmp_path / "comve_a.jsonl"
    release.write_text(
        json.dumps({"id": "7", "sent0": "He drinks apple.", "sent1": "He drinks milk.", "false_index": 0})
        + "\n"
    )
    assert read_pairs(tmp_path) == [Pair("7", "He drinks apple.", "He drinks milk.", 0)]
    split = tmp_path / "train"
    split.mkdir()
    (split / "subtaskA_data_all.csv").write_text("id,sent0,sent1\n3,A b.,A c.\n")
    (split / "subtaskA_answers_all.csv").write_text("3,1\n")
    pairs = read_pairs(split)
    assert pairs == [Pair("3", "A b.", "A c.", 1)]
    assert [(s.id, s.sensible) for s in statements_of(pairs)] == [("3/0", True), ("3/1", False)]


def test_a_bad_pair_file_names_the_row_and_field(tmp_path):
    release = tmp_path / "comve_a.jsonl"
    release.write_text(
        '{"sent0": "a", "sent1": "b", "false_index": 0}\n{"sent0": "a", "sent1": "b", "label": 2}\n'
    )
    with pytest.raises(PairFileError, match=r"comve_a.jsonl, row 2, field label: .* 0 or 1"):
        read_pairs(release)
    release.write_text('{"sent0": "a"}\n')
    with pytest.raises(PairFileError, match="row 1: field sent0/sent1"):
        read_pairs(release)


def test_a_run_stopped_by_hand_keeps_and_summarises_what_it_did(masked):
    from evaluation.cloze.experiments import run_dispersion

    vectors = ModelInputVectors(masked.model, masked.tokenizer, space_prefix=False)
    kept: list[dict[str, Any]] = []

    def stop_after_two(n, total):
        if n == 2:
            raise KeyboardInterrupt

    statements = [Statement(str(i), text) for i, text in enumerate(CORPUS[:5])]
    records, summary = run_dispersion(
        statements, masked, vectors, k=3, progress=stop_after_two, on_record=kept.append
    )
    assert [r["id"] for r in records] == ["0", "1"] == [r["id"] for r in kept]
    assert summary["interrupted"] is True
    assert summary["statements"] == 2 and summary["requested"] == 5
