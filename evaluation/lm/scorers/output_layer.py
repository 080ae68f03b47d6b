"""The output layer, run only at the rows whose next-token distribution is asked for.

`OutputLayer` wraps a model's head with its logit scale and soft-capping and gives its
logits a vocabulary block at a time; `_score_rows` turns hidden states into log P(target)
and is-greedy with a streaming log-sum-exp over those blocks, never materialising the
log-softmax (docs/scoring.md, "Exactness and speed", point 4; one pass a block with the
native kernels, point 7), or, for a model loaded with ``normalization="lm-eval"``,
`_score_rows_lm_eval` normalises as lm-evaluation-harness does ("Two normalizations").
Split from causal.py, which calls it for every scorer of causal models.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import torch
import torch.nn.functional as F

from evaluation.lm import kernels
from evaluation.lm.modeling import NORMALIZATIONS, LoadedModel
from evaluation.lm.scorers.prepacked import prepacked_weights, product
from evaluation.lm.scorers.types import ScoringError

#: Rows of the output layer computed at once: its weights are read from memory once per
#: this many rows (`_score_rows`).
HEAD_CHUNK_ROWS = 1024
#: Vocabulary entries of one block of logits (HEAD_CHUNK_ROWS x this floats: 8 MB).
HEAD_VOCAB_BLOCK = 2048
#: Rows of one whole-vocabulary call in lm-eval's normalization (100 MB of SmolLM2 logits).
LM_EVAL_ROWS = 512


class OutputLayer:
    """The model's output layer (its head, then any logit scale and soft-capping), to run
    only at the rows that need it. Called on hidden states it returns their logits, the
    whole vocabulary. `blocks` gives the same logits a slice of the vocabulary at a time,
    when the head is a plain linear layer (weight rows = vocabulary), so that scoring works
    each block while it is in the cache: a [rows x vocabulary] buffer (200 MB at 1,024
    rows of SmolLM2) is written to memory and read back four times otherwise."""

    def __init__(self, head: torch.nn.Module, scale: Any, softcap: Any, normalization: str = "exact") -> None:
        if normalization not in NORMALIZATIONS:
            raise ScoringError(
                f"normalization {normalization!r}: one of {', '.join(NORMALIZATIONS)} expected"
            )
        self.normalization = normalization
        self.head = head
        self.scale = scale if isinstance(scale, (int, float)) else None
        self.softcap = softcap or None
        weight = getattr(head, "weight", None)
        linear = isinstance(head, torch.nn.Linear) and isinstance(weight, torch.Tensor) and weight.dim() == 2
        self.weight: torch.Tensor | None = weight if linear else None
        self.bias: torch.Tensor | None = getattr(head, "bias", None) if linear else None
        self._whole: torch.Tensor | None = None  # `whole`'s buffer

    def _finish(self, logits: torch.Tensor) -> torch.Tensor:
        if self.scale is not None:
            logits = logits * self.scale
        if self.softcap:
            logits = torch.tanh(logits / self.softcap) * self.softcap
        return logits

    def __call__(self, hidden: torch.Tensor) -> torch.Tensor:
        return self._finish(self.head(hidden))

    def whole(self, hidden: torch.Tensor) -> torch.Tensor:
        """The logits of the whole vocabulary in the model's dtype, as lm-eval takes them:
        a new tensor, or for a plain linear head a buffer kept by this head (its next call
        overwrites it)."""
        if self.weight is None or self.bias is not None or self.scale is not None or self.softcap:
            return self(hidden)
        rows = hidden.shape[0]
        if self._whole is None or self._whole.shape[0] < rows or self._whole.dtype != hidden.dtype:
            self._whole = hidden.new_empty((rows, self.weight.shape[0]))
        out = self._whole[:rows]
        native = kernels.get() if hidden.stride(-1) == 1 else None
        weight = self.weight
        prepacked = prepacked_weights(self.head, "whole", (weight,), lambda: (weight,), native)
        product(native, hidden, weight.t(), None if prepacked is None else prepacked[0], out)
        return out

    def blocks(self, hidden: torch.Tensor, size: int) -> Iterator[tuple[int, torch.Tensor]]:
        """(first vocabulary index, float32 logits [rows, <= size]) of consecutive
        vocabulary blocks; one block of everything when the head is not a plain linear
        layer. The blocks of a call share one buffer (fresh memory for each would be new
        pages from the system): a block holds its logits until the next one is asked for,
        and its consumer may overwrite it."""
        if self.weight is None:
            yield 0, self(hidden).float()
            return
        vocabulary = self.weight.shape[0]
        full_blocks = self.bias is None and vocabulary >= size
        buffer = hidden.new_empty((hidden.shape[0], size)) if full_blocks else None
        whole = self.weight
        native = kernels.get() if full_blocks and hidden.stride(-1) == 1 else None
        # each whole block's weights packed for the product chosen, once (prepacked.py)
        prepacked = prepacked_weights(
            self.head,
            f"blocks of {size}",
            (whole,),
            lambda: [whole[start : start + size] for start in range(0, vocabulary - size + 1, size)],
            native,
        )
        for start in range(0, vocabulary, size):
            stop = min(start + size, vocabulary)
            weight = self.weight[start:stop]
            if buffer is not None and stop - start == size:
                packed = None if prepacked is None else prepacked[start // size]
                product(native, hidden, weight.t(), packed, buffer)
                logits = buffer
            else:
                logits = F.linear(hidden, weight, None if self.bias is None else self.bias[start:stop])
            yield start, self._finish(logits).float()


def output_layer(model: LoadedModel) -> tuple[Any, OutputLayer]:
    """(base model, its `OutputLayer`) so the head runs only where needed, normalising as
    the model was loaded to (its settings' ``normalization``)."""
    return model_output_layer(model.model, model.settings.get("normalization", "exact"))


def model_output_layer(hf: Any, normalization: str = "exact") -> tuple[Any, OutputLayer]:
    """`output_layer` of a transformers model."""
    head = hf.get_output_embeddings()
    base = getattr(hf, hf.base_model_prefix, None)
    if head is None or base is None:
        raise ScoringError(f"{type(hf).__name__}: cannot find its output layer")
    return base, OutputLayer(
        head,
        getattr(hf, "logit_scale", None),
        getattr(hf.config, "final_logit_softcapping", None),
        normalization,
    )


def _chunks(
    rows: int, targets: torch.Tensor, owner: torch.Tensor | None, size: int
) -> Iterator[tuple[int, torch.Tensor, torch.Tensor, torch.Tensor]]:
    """For each chunk of ``size`` of the ``rows`` rows: (its first row, its targets' places
    in the caller's order, their rows within the chunk, the targets). The targets are
    sorted by row (stably), so each chunk's are one contiguous run; ``owner`` None: target
    i at row i."""
    owner = torch.arange(len(targets)) if owner is None else owner
    order = torch.argsort(owner, stable=True)
    sorted_owner, sorted_targets = owner[order], targets[order]
    cuts = torch.searchsorted(sorted_owner, torch.arange(0, rows + size, size)).tolist()
    for c, start in enumerate(range(0, rows, size)):
        first, end = cuts[c], cuts[c + 1]
        yield start, order[first:end], sorted_owner[first:end] - start, sorted_targets[first:end]


def _score_rows(
    head: OutputLayer, hidden: torch.Tensor, targets: torch.Tensor, owner: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """log P(target) and is-argmax of each target, at its row of hidden states: row
    ``owner[i]`` for target i (default: row i). A row with several targets (a prefix-tree
    node with several next tokens) goes through the output layer once.

    HEAD_CHUNK_ROWS rows at a time, and over the vocabulary in blocks of HEAD_VOCAB_BLOCK
    (`OutputLayer.blocks`), each block worked in the cache: the targets' logits taken from
    their blocks, the block's maximum, then exp(logit - running maximum) summed in place;
    the running sums are rescaled when the maximum grows (the streaming log-sum-exp). The
    head's weights are read once per HEAD_CHUNK_ROWS rows. A target is greedy when it is
    the first maximum (the argmax), as `argmax` decides ties: its logit is the final
    maximum, every block before its own has a smaller one, and in its own block it is the
    argmax (looked for only where the target is the block's maximum)."""
    if head.normalization == "lm-eval":
        return _score_rows_lm_eval(head, hidden, targets, owner)
    count = len(targets)
    native = kernels.get()  # the fused block pass of kernels.cpp, when built for this machine
    logprobs = torch.empty(count, dtype=torch.float64)
    greedy = torch.empty(count, dtype=torch.bool)
    for start, chosen, row, t in _chunks(len(hidden), targets, owner, HEAD_CHUNK_ROWS):
        h = hidden[start : start + HEAD_CHUNK_ROWS]
        n = len(h)
        target_logit = torch.empty(len(t))
        top = torch.full((n,), float("-inf"))
        total = torch.zeros(n)
        # each target: the largest logit of its row before the target's block, and whether
        # the target is the first maximum of its own block
        top_before = torch.empty(len(t))
        first_in_block = torch.zeros(len(t), dtype=torch.bool)
        block_top_out, new_top = torch.empty(n), torch.empty(n)
        for v0, logits in head.blocks(h, HEAD_VOCAB_BLOCK):
            fused = native is not None and logits.stride(-1) == 1
            if fused:
                # the block's maximum, the new running maximum and the rescaled running
                # sum in one pass a row, the logits left as they are (kernels.cpp)
                native.block_lse(logits, top, total, block_top_out, new_top)
                block_top = block_top_out
            else:
                block_top = logits.amax(dim=1)
            inside = (t >= v0) & (t < v0 + logits.shape[1])
            if bool(inside.any()):
                r, column = row[inside], t[inside] - v0
                value = logits[r, column]
                target_logit[inside] = value
                top_before[inside] = top[r]
                # argmax (its first index) only where the target is the block's maximum
                tops = value == block_top[r]
                first = torch.zeros_like(tops)
                if bool(tops.any()):
                    first[tops] = logits[r[tops]].argmax(dim=1) == column[tops]
                first_in_block[inside] = first
            if fused:
                top, new_top = new_top, top  # the old maximum's buffer takes the next block's
                continue
            block_max = torch.maximum(top, block_top)
            block_sum = logits.sub_(block_max.unsqueeze(1)).exp_().sum(dim=1)
            total = total.mul_(torch.exp(top - block_max)).add_(block_sum)
            top = block_max
        row_top = top[row]
        logprobs[chosen] = (target_logit - (row_top + total.log()[row])).double()
        greedy[chosen] = (target_logit == row_top) & (top_before < target_logit) & first_in_block
    return logprobs, greedy


@functools.cache
def torch_lanes() -> int | None:
    """The floats of the vector torch's float32 log_softmax adds a row's terms in: 16 where
    it runs its AVX-512 kernels, 8 for AVX2; None elsewhere (the native `lm_eval_targets`
    then does not stand in for it)."""
    return {"AVX512": 16, "AVX2": 8}.get(torch.backends.cpu.get_cpu_capability())


def _score_rows_lm_eval(
    head: OutputLayer, hidden: torch.Tensor, targets: torch.Tensor, owner: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """`_score_rows` as lm-evaluation-harness's `HFLM` normalises: ``F.log_softmax`` of each
    row's whole float32 logits, the target's entry, greedy when the target is the row's
    argmax of those. torch's float32 log-softmax adds a row's 49,152 terms in its vector
    lanes one after another, which leaves it biased by +7e-6 to +2.5e-5 nats a token
    depending on the host's vector width; this reproduces that, where `_score_rows` is
    exact. LM_EVAL_ROWS rows a call (the whole rows must be in memory at once), into one
    buffer kept by the head for the scoring call (fresh memory of that size is new pages
    from the system each time). With the native kernels, where torch's vector width is
    known (`torch_lanes`), nothing is normalised: `lm_eval_targets` reads each row twice
    (its maximum, then its sum in torch's order of additions) and computes the targets'
    entries alone, which are torch's to a unit or two in the last place (exp and log are
    glibc's, not torch's SLEEF), and whether each is its row's first maximum. Else the rows
    are normalised in place (the same numbers as into new memory), and each target's entry
    and argmax test come from `target_rank` (native) or from indexing, the argmax looked for
    only in rows whose target is their maximum (`amax` is a third of `argmax`'s time)."""
    count = len(targets)
    native = kernels.get() if hidden.dtype == torch.float32 else None
    lanes = torch_lanes()
    logprobs = torch.empty(count, dtype=torch.float64)
    greedy = torch.zeros(count, dtype=torch.bool)
    for start, chosen, row, t in _chunks(len(hidden), targets, owner, LM_EVAL_ROWS):
        if len(t) == 0:
            continue
        logits = head.whole(hidden[start : start + LM_EVAL_ROWS])
        if native is not None and lanes and logits.dtype == torch.float32 and logits.stride(-1) == 1:
            # the normalised entries at the targets only, as torch computes them, and the
            # argmax test, reading the rows twice and writing nothing (`lm_eval_targets`)
            value, first = torch.empty(len(t)), torch.empty(len(t), dtype=torch.bool)
            native.lm_eval_targets(logits, row.contiguous(), t.contiguous(), lanes, value, first)
            logprobs[chosen], greedy[chosen] = value.double(), first
            continue
        rows = torch.log_softmax(logits, dim=-1, out=logits)
        if native is not None and rows.dtype == torch.float32 and rows.stride(-1) == 1:
            # each target's entry and whether it is its row's first maximum, reading each
            # row only as far as it takes to decide (kernels.cpp `target_rank`)
            value, first = torch.empty(len(t)), torch.empty(len(t), dtype=torch.bool)
            native.target_rank(rows, row.contiguous(), t.contiguous(), value, first)
            logprobs[chosen], greedy[chosen] = value.double(), first
            continue
        value = rows[row, t]
        logprobs[chosen] = value.double()
        top = value == rows.amax(dim=-1)[row]
        if bool(top.any()):
            greedy[chosen[top]] = rows[row[top]].argmax(dim=-1) == t[top]
    return logprobs, greedy
