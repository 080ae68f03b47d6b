"""Frozen model features for the supervised WinoWhy setting (no Django).

``mean_hidden_states``: the mean of the last layer's hidden states over a text's tokens
(after the start token for causal LMs), one row per text. Texts are batched by length
with padding masked out, under ``torch.inference_mode``; only the base model runs (no
output layer over the vocabulary).

``text_features``: the audit's features job (``evaluation.audit.frozen``), each text's mean
hidden states, log-likelihood and token count from one forward pass of a causal LM.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt


def mean_hidden_states(
    loaded: Any,
    texts: Sequence[str],
    *,
    batch_size: int = 32,
    progress: Callable[[int, int], None] | None = None,
) -> npt.NDArray[np.float32]:
    import torch

    encoded: list[list[int]] = []
    for text in texts:
        ids = loaded.encode(text)
        if loaded.start_token_id is not None:
            ids = [loaded.start_token_id, *ids]
        encoded.append(ids[: loaded.max_length])
    order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
    out: npt.NDArray[np.float32] | None = None
    pad = loaded.tokenizer.pad_token_id if loaded.tokenizer.pad_token_id is not None else 0
    # The base model's last hidden state is the LM's last hidden state (the same tensor,
    # checked for Llama, GPT-2 and BERT); the base alone skips the vocabulary projection.
    base = getattr(loaded.model, loaded.model.base_model_prefix, None)
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            width = max(len(encoded[i]) for i in batch)
            ids = torch.full((len(batch), width), pad, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for row, i in enumerate(batch):
                ids[row, : len(encoded[i])] = torch.tensor(encoded[i])
                mask[row, : len(encoded[i])] = 1
            if base is not None:
                hidden = base(input_ids=ids, attention_mask=mask).last_hidden_state
            else:
                hidden = loaded.model(
                    input_ids=ids, attention_mask=mask, output_hidden_states=True
                ).hidden_states[-1]
            weights = mask.unsqueeze(-1).to(hidden.dtype)
            if loaded.start_token_id is not None:
                weights[:, 0] = 0  # the start token is the same for every text
            means = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1)
            if out is None:
                out = np.zeros((len(texts), means.shape[-1]), dtype=np.float32)
            out[batch] = means.float().numpy()
            if progress is not None:
                progress(min(start + batch_size, len(order)), len(order))
    return out if out is not None else np.zeros((0, 0), dtype=np.float32)


#: Positions of one packed forward call of `text_features` at most (its attention mask is
#: this squared): on ComVE's statements with SmolLM2, 256 and 512 measured within 5% of
#: each other, 1,024 about 20% slower (docs/filtering.md, "The features job, fast").
FEATURE_CHUNK_TOKENS = 512


@dataclass(frozen=True)
class TextFeatureArrays:
    """``hidden`` (N, D) float32 as `mean_hidden_states`; ``logprobs`` (N,) float64 as
    `score_texts`; ``tokens`` (N,) as `text_token_counts`."""

    hidden: npt.NDArray[np.float32]
    logprobs: npt.NDArray[np.float64]
    tokens: npt.NDArray[np.int64]


def text_features(
    loaded: Any,
    texts: Sequence[str],
    *,
    batch_size: int = 32,
    progress: Callable[[int, int], None] | None = None,
) -> TextFeatureArrays:
    """`mean_hidden_states`, `score_texts` and `text_token_counts` of ``texts`` at once.

    A causal LM whose attention takes a ready mask (every Llama-type model, SmolLM2
    included, and transformers' SDPA and eager attention) runs **one** forward pass for
    both: the texts' token sequences (start token, then the text) form a prefix tree
    (`evaluation.lm.scorers.prefix_tree`), every distinct prefix runs once in packed rows
    without padding (as `score_texts` runs them), and from the same last hidden states
    come each text's mean (after the start token) and, through the output layer at the
    (node, next token) pairs only, its log-likelihood. The numbers are those of the two
    functions to float32 rounding (tests/evaluation/test_audit_frozen.py). Other models
    (masked LMs: the pseudo-log-likelihood needs its own masked passes) and texts that do
    not fit the model call the two functions in turn, once for each distinct text.
    """
    n = len(texts)
    if n == 0:
        return TextFeatureArrays(
            np.zeros((0, 0), dtype=np.float32), np.zeros(0, dtype=np.float64), np.zeros(0, dtype=np.int64)
        )
    one_pass: list[int] = []
    sequences: list[list[int]] = []
    if loaded.kind == "causal" and loaded.start_token_id is not None and _packable(loaded):
        from evaluation.lm.scorers.causal import encode_pair

        for i, text in enumerate(texts):
            ids = [loaded.start_token_id, *loaded.encode(text)]
            ctx, cont = encode_pair(loaded, "", text)
            # the same tokens for both functions, and within the model's positions
            if cont and ctx + cont == ids and len(ids) <= loaded.max_length:
                one_pass.append(i)
                sequences.append(ids)
    in_one_pass = set(one_pass)
    rest = [i for i in range(n) if i not in in_one_pass]
    done = 0

    def step(count: int) -> None:
        nonlocal done
        done += count
        if progress is not None:
            progress(done, n)

    hidden: npt.NDArray[np.float32] | None = None
    logprobs = np.zeros(n, dtype=np.float64)
    tokens = np.zeros(n, dtype=np.int64)
    if one_pass:
        h, lp = _one_pass(loaded, sequences, batch_size=batch_size, step=step)
        hidden = np.zeros((n, h.shape[1]), dtype=np.float32)
        hidden[one_pass] = h
        logprobs[one_pass] = lp
        tokens[one_pass] = [len(s) - 1 for s in sequences]
    if rest:
        from evaluation.lm.scorers import score_texts, text_token_counts

        # each distinct text once: a repeated text gets the very same features (in another
        # batch the matrix library may round otherwise: MKL does on AMD processors)
        others = list(dict.fromkeys(texts[i] for i in rest))
        position = {text: j for j, text in enumerate(others)}
        where = [position[texts[i]] for i in rest]
        h = mean_hidden_states(loaded, others, batch_size=batch_size)
        if hidden is None:
            hidden = np.zeros((n, h.shape[1]), dtype=np.float32)
        hidden[rest] = h[where]
        logprobs[rest] = np.asarray(score_texts(loaded, others, batch_size=batch_size), dtype=np.float64)[
            where
        ]
        tokens[rest] = np.asarray(text_token_counts(loaded, others), dtype=np.int64)[where]
        step(len(rest))
    assert hidden is not None
    return TextFeatureArrays(hidden, logprobs, tokens)


def _packable(loaded: Any) -> bool:
    from evaluation.lm.scorers import fast_llama
    from evaluation.lm.scorers.causal import packable

    base = getattr(loaded.model, loaded.model.base_model_prefix, None)
    return base is not None and (fast_llama.supports(base) or packable(loaded.model))


def _one_pass(
    loaded: Any, sequences: list[list[int]], *, batch_size: int, step: Callable[[int], None]
) -> tuple[npt.NDArray[np.float32], list[float]]:
    """Mean hidden states after the start token and log P(text | start token) of token
    sequences that each begin with the start token, from one packed forward pass."""
    import torch

    from evaluation.lm.scorers.causal import new_pairs, packed_hidden, score_pairs
    from evaluation.lm.scorers.output_layer import output_layer
    from evaluation.lm.scorers.prefix_tree import PrefixTree, plan_chunks, scored_in

    tree = PrefixTree(sequences)
    chunks = plan_chunks(tree, max(batch_size, 1), FEATURE_CHUNK_TOKENS)
    base, head = output_layer(loaded)
    means: npt.NDArray[np.float32] | None = None
    logprobs: list[float] = [0.0] * len(sequences)
    done_rows: dict[tuple[int, int], tuple[float, bool]] = {}
    with torch.inference_mode():
        for chunk, members in zip(chunks, scored_in(tree, chunks), strict=True):
            if not members:
                continue
            hidden, row_of = packed_hidden(base, tree, chunk)
            if means is None:
                means = np.zeros((len(sequences), hidden.shape[-1]), dtype=np.float32)
            # the mean of each member's states after the start token
            owner: list[int] = []
            rows: list[int] = []
            for slot, k in enumerate(members):
                path = tree.path[k]
                rows.extend(row_of[node] for node in path[1:])
                owner.extend([slot] * (len(path) - 1))
            sums = torch.zeros((len(members), hidden.shape[-1]), dtype=hidden.dtype)
            sums.index_add_(
                0, torch.tensor(owner, dtype=torch.long), hidden[torch.tensor(rows, dtype=torch.long)]
            )
            counts = torch.tensor([max(len(tree.path[k]) - 1, 1) for k in members], dtype=hidden.dtype)
            means[members] = (sums / counts[:, None]).float().numpy()
            # the log-probability of each (node, next token) pair the members need, once
            pairs = (
                (tree.path[k][j], sequences[k][j + 1]) for k in members for j in range(len(tree.path[k]) - 1)
            )
            score_pairs(head, hidden, row_of, new_pairs(pairs, done_rows), done_rows)
            for k in members:
                path, seq = tree.path[k], sequences[k]
                logprobs[k] = float(sum(done_rows[(path[j], seq[j + 1])][0] for j in range(len(path) - 1)))
            step(len(members))
    assert means is not None
    return means, logprobs
