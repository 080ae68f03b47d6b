"""Masked LM pseudo-log-likelihood (Salazar et al., 2020): mask each token in turn and sum
log P(true token | the rest). Batched: every masked copy of every text goes into one
length-sorted stream of batches; the output layer runs only at the masked position and the
log-softmax is never materialised (target logit minus logsumexp)."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from evaluation.lm.modeling import LoadedModel
from evaluation.lm.scorers.types import Progress, ScoringError


def _prediction_head(model: LoadedModel):
    """(base model, head) when the MLM head is a separate module; else (None, None)."""
    hf = model.model
    base = getattr(hf, hf.base_model_prefix, None)
    for name in ("cls", "lm_head", "predictions"):
        head = getattr(hf, name, None)
        if isinstance(head, torch.nn.Module) and base is not None:
            return base, head
    return None, None


def _encode(model: LoadedModel, text: str) -> tuple[list[int], list[int]]:
    """(ids with the tokenizer's special tokens, positions of the real tokens)."""
    enc = model.tokenizer(text, add_special_tokens=True, return_special_tokens_mask=True)
    ids = list(enc["input_ids"])
    special = enc["special_tokens_mask"]
    return ids, [i for i, s in enumerate(special) if not s]


def _encode_span(model: LoadedModel, context: str, continuation: str) -> tuple[list[int], list[int]]:
    """Ids of context+continuation and the positions of the continuation's tokens."""
    n_spaces = len(context) - len(context.rstrip())
    if n_spaces:
        continuation = context[-n_spaces:] + continuation
        context = context[:-n_spaces]
    ids, real = _encode(model, context + continuation)
    n_context = len(model.tokenizer(context, add_special_tokens=False)["input_ids"]) if context else 0
    return ids, real[n_context:]


def pll_tokens(
    model: LoadedModel,
    encoded: Sequence[tuple[list[int], list[int]]],
    *,
    batch_size: int = 32,
    progress: Progress | None = None,
) -> list[float]:
    """Sum over the given positions of log P(token | sequence with that token masked)."""
    if model.kind != "masked":
        raise ScoringError("pseudo-log-likelihood needs a masked language model")
    mask_id = model.tokenizer.mask_token_id
    if mask_id is None:
        raise ScoringError("the tokenizer has no mask token")
    pad_id = model.tokenizer.pad_token_id or 0
    # One row per (text, position); sorted by length so batches pad little.
    rows = [(t, pos) for t, (ids, positions) in enumerate(encoded) for pos in positions]
    rows.sort(key=lambda r: len(encoded[r[0]][0]))
    totals = [0.0] * len(encoded)
    remaining = [len(positions) for _, positions in encoded]
    done = sum(1 for r in remaining if r == 0)
    base, head = _prediction_head(model)
    hf = model.model
    with torch.inference_mode():
        for start in range(0, len(rows), batch_size):
            batch = rows[start : start + batch_size]
            width = max(len(encoded[t][0]) for t, _ in batch)
            ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
            attn = torch.zeros((len(batch), width), dtype=torch.long)
            for i, (t, pos) in enumerate(batch):
                seq = encoded[t][0]
                ids[i, : len(seq)] = torch.tensor(seq)
                attn[i, : len(seq)] = 1
                ids[i, pos] = mask_id
            targets = torch.tensor([encoded[t][0][pos] for t, pos in batch])
            where = torch.tensor([pos for _, pos in batch])
            rows_idx = torch.arange(len(batch))
            if head is not None:
                hidden = base(input_ids=ids, attention_mask=attn).last_hidden_state[rows_idx, where]
                logits = head(hidden).float()
            else:
                logits = hf(input_ids=ids, attention_mask=attn).logits[rows_idx, where].float()
            lp = logits.gather(1, targets.unsqueeze(1)).squeeze(1) - torch.logsumexp(logits, dim=1)
            for (t, _), value in zip(batch, lp.double().tolist(), strict=True):
                totals[t] += value
                remaining[t] -= 1
                if remaining[t] == 0:
                    done += 1
            if progress is not None:
                progress(done, len(encoded))
    if progress is not None and not rows:
        progress(len(encoded), len(encoded))
    return totals


def pseudo_log_likelihood(
    model: LoadedModel, texts: Sequence[str], *, batch_size: int = 32, progress: Progress | None = None
) -> list[float]:
    """PLL of each whole text (all tokens but the tokenizer's special ones)."""
    encoded = [_encode(model, text) for text in texts]
    _check_length(model, encoded)
    return pll_tokens(model, encoded, batch_size=batch_size, progress=progress)


def pseudo_log_likelihood_spans(
    model: LoadedModel,
    pairs: Sequence[tuple[str, str]],
    *,
    batch_size: int = 32,
    progress: Progress | None = None,
) -> list[float]:
    """PLL of each continuation's tokens, with the context in the input (unmasked)."""
    encoded = [_encode_span(model, c, x) for c, x in pairs]
    for n, (_, positions) in enumerate(encoded):
        if not positions:
            raise ScoringError(f"request {n}: the continuation {pairs[n][1]!r} has no tokens")
    _check_length(model, encoded)
    return pll_tokens(model, encoded, batch_size=batch_size, progress=progress)


def _check_length(model: LoadedModel, encoded: Sequence[tuple[list[int], list[int]]]) -> None:
    for n, (ids, _) in enumerate(encoded):
        if len(ids) > model.max_length:
            raise ScoringError(
                f"text {n}: {len(ids)} tokens, more than the model's {model.max_length} positions"
            )
