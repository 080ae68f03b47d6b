"""The compute bound of scoring requests with a causal LM on this machine, measured in the run.

Shared by the scoring benches: the work is counted from the requests (their tokens, the
distinct nodes of their prefix tree, the (node, next token) pairs whose log-probability
is needed) and from the model (multiply-adds of its linear layers a token, and of its
output layer a scored row), and the machine's fp32 matrix-product rate is measured with
the model's own weight matrices and row counts. The bound is the time those matrix
products alone take at that rate: attention, norms, activations and Python are extra.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass

#: The block length along k the bound's runs of Winnow's own product use (MKL's on AMD's
#: EPYC; scorers/prepacked.py `order_block`).
ORDER_BLOCK = 192


@dataclass
class Work:
    tokens: int  # tokens of all requests, start token included (what padding-free one-by-one runs)
    nodes: int  # distinct prefixes: positions a prefix tree runs
    rows: int  # distinct nodes whose next-token distribution is needed: output-layer rows
    pairs: int = 0  # distinct (node, next token) pairs scored (a node may have several)


def count_work(loaded, requests: Sequence[tuple[str, str]]) -> Work:
    """Tokens, prefix-tree nodes, output-layer rows (the nodes whose next-token
    distribution a request needs) and scored (node, next token) pairs of (context,
    continuation) requests."""
    from evaluation.lm.scorers.causal import encode_pairs
    from evaluation.lm.scorers.prefix_tree import PrefixTree

    encoded = encode_pairs(loaded, requests)
    seqs = [ctx + cont for ctx, cont in encoded]
    tree = PrefixTree([s[:-1] for s in seqs])
    pairs = set()
    for (ctx, _), seq, path in zip(encoded, seqs, tree.path, strict=True):
        for j in range(len(ctx) - 1, len(seq) - 1):
            pairs.add((path[j], seq[j + 1]))
    rows = {node for node, _ in pairs}
    return Work(tokens=sum(len(s) for s in seqs), nodes=len(tree), rows=len(rows), pairs=len(pairs))


def processor() -> str:
    """This machine's processor as the figures should name it: the model name the kernel
    reports (`kernels.cpu_name`, read where the kernels' build key reads it) and the vector instructions torch's kernels run with (the same code's figures
    differ between hosts: MKL's products ran at 200-390 GFLOP/s on the hosts before 28 Nov
    2026, at 212-233 on an AMD EPYC, where oneDNN's ran at 480-520: docs/scoring.md)."""
    import torch

    from evaluation.lm import kernels

    capability = torch.backends.cpu.get_cpu_capability()
    return f"{kernels.cpu_name()}, {os.cpu_count()} cores, torch CPU capability {capability}"


def linear_weights(hf_model):
    """(weights of the linear layers below the output layer, the output layer's weight)."""
    import torch

    head = hf_model.get_output_embeddings()
    base = getattr(hf_model, hf_model.base_model_prefix)
    body = [m.weight for m in base.modules() if isinstance(m, torch.nn.Linear)]
    # GPT-2 style Conv1D layers hold their weight transposed
    body += [m.weight.t() for m in base.modules() if type(m).__name__ == "Conv1D"]
    return body, head.weight


def flops(hf_model) -> tuple[float, float]:
    """(FLOPs a token in the linear layers below the output layer, FLOPs a scored row in
    the output layer): 2 per multiply-add."""
    body, head = linear_weights(hf_model)
    return 2.0 * sum(w.numel() for w in body), 2.0 * head.numel()


def matmul_rate(hf_model, rows: int, head_rows: int, *, seconds: float = 1.5) -> tuple[float, float]:
    """Measured fp32 FLOP/s of (every linear layer below the output layer on ``rows`` rows,
    the output layer on ``head_rows`` rows, whole or in blocks of HEAD_VOCAB_BLOCK
    vocabulary rows, whichever is faster), with the model's own weights, each product
    into a new tensor or into one kept for its shape, and where the native kernels are
    built also with the weights packed once for MKL's products (kernels.cpp
    `packed_mm`, as Winnow's forward reads them), Winnow's own product (`ordered_mm`) and
    oneDNN's products (`onednn_mm`), whichever is fastest; the best of
    repeats over about ``seconds`` each."""
    import torch
    import torch.nn.functional as F

    from evaluation.lm import kernels
    from evaluation.lm.scorers.output_layer import HEAD_VOCAB_BLOCK

    body, head = linear_weights(hf_model)
    body_flops, head_flops = flops(hf_model)

    def best(fn, budget: float) -> float:
        fn()
        times: list[float] = []
        started = time.perf_counter()
        while time.perf_counter() - started < budget or len(times) < 3:
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        return min(times)

    with torch.inference_mode():
        inputs = {w.shape[1]: torch.randn(rows, w.shape[1]) for w in body}
        x = torch.randn(max(1, head_rows), head.shape[1])

        # each product into a new tensor, and into one kept for its shape (as Winnow's
        # forward does): the faster counts
        outputs = {w.shape[0]: torch.empty(rows, w.shape[0]) for w in body}
        block = torch.empty(max(1, head_rows), HEAD_VOCAB_BLOCK)

        def run_body() -> None:
            for w in body:
                F.linear(inputs[w.shape[1]], w)

        def run_body_kept() -> None:
            for w in body:
                torch.mm(inputs[w.shape[1]], w.t(), out=outputs[w.shape[0]])

        def run_head() -> None:
            F.linear(x, head)

        def run_head_blocks() -> None:
            for start in range(0, head.shape[0], HEAD_VOCAB_BLOCK):
                w = head[start : start + HEAD_VOCAB_BLOCK]
                if w.shape[0] == HEAD_VOCAB_BLOCK:
                    torch.mm(x, w.t(), out=block)
                else:
                    F.linear(x, w)

        t_body = min(best(run_body, seconds / 2), best(run_body_kept, seconds / 2))
        # the output layer whole and in vocabulary blocks (as Winnow runs it): the faster counts
        t_head = min(best(run_head, seconds / 4), best(run_head_blocks, seconds / 4))
        native = kernels.get()
        if native is not None and native.packed_available():
            # and the weights packed for MKL's products once (as Winnow's forward reads
            # them where the native kernels are built): the fastest counts
            packed_body = [native.pack_weight(w.contiguous()) for w in body]
            whole = native.pack_weight(head.contiguous())
            vocabulary = head.shape[0]
            packed_blocks = [
                native.pack_weight(head[start : start + HEAD_VOCAB_BLOCK].contiguous())
                for start in range(0, vocabulary - HEAD_VOCAB_BLOCK + 1, HEAD_VOCAB_BLOCK)
            ]
            whole_out = torch.empty(max(1, head_rows), vocabulary)

            def run_body_packed() -> None:
                for w, p in zip(body, packed_body, strict=True):
                    native.packed_mm(inputs[w.shape[1]], p, w.shape[0], 0.0, outputs[w.shape[0]])

            def run_head_packed() -> None:
                native.packed_mm(x, whole, vocabulary, 0.0, whole_out)

            def run_head_blocks_packed() -> None:
                for p in packed_blocks:
                    native.packed_mm(x, p, HEAD_VOCAB_BLOCK, 0.0, block)

            t_body = min(t_body, best(run_body_packed, seconds / 2))
            t_head = min(
                t_head, best(run_head_packed, seconds / 4), best(run_head_blocks_packed, seconds / 4)
            )
            del packed_body, whole, packed_blocks, whole_out
        if native is not None and native.ordered_available():
            # and Winnow's own product in MKL's order (kernels.cpp `ordered_mm`), at any
            # block length along k (the speed does not depend on which): the fastest counts
            ordered_body = [native.order_pack(w) for w in body]
            whole = native.order_pack(head)
            vocabulary = head.shape[0]
            whole_out = torch.empty(max(1, head_rows), vocabulary)

            def run_body_ordered() -> None:
                for w, p in zip(body, ordered_body, strict=True):
                    out = outputs[w.shape[0]]
                    native.ordered_mm(inputs[w.shape[1]], p, w.shape[0], ORDER_BLOCK, 0.0, out)

            def run_head_ordered() -> None:
                native.ordered_mm(x, whole, vocabulary, ORDER_BLOCK, 0.0, whole_out)

            t_body = min(t_body, best(run_body_ordered, seconds / 2))
            t_head = min(t_head, best(run_head_ordered, seconds / 4))
            del ordered_body, whole, whole_out
        if native is not None and native.onednn_available():
            # and oneDNN's products (as Winnow's forward runs them where they are faster,
            # scorers/prepacked.py `engine`): the fastest counts
            vocabulary = head.shape[0]
            whole_out = torch.empty(max(1, head_rows), vocabulary)

            def run_body_onednn() -> None:
                for w in body:
                    native.onednn_mm(inputs[w.shape[1]], w.t(), 0.0, outputs[w.shape[0]])

            def run_head_onednn() -> None:
                native.onednn_mm(x, head.t(), 0.0, whole_out)

            def run_head_blocks_onednn() -> None:
                for start in range(0, vocabulary - HEAD_VOCAB_BLOCK + 1, HEAD_VOCAB_BLOCK):
                    native.onednn_mm(x, head[start : start + HEAD_VOCAB_BLOCK].t(), 0.0, block)

            t_body = min(t_body, best(run_body_onednn, seconds / 2))
            t_head = min(
                t_head, best(run_head_onednn, seconds / 4), best(run_head_blocks_onednn, seconds / 4)
            )
            del whole_out
    return body_flops * rows / t_body, head_flops * max(1, head_rows) / t_head


def best_matmul_rate(
    hf_model, row_counts: Sequence[int], head_row_counts: Sequence[int], *, seconds: float = 1.5
) -> tuple[float, int, float, int]:
    """The fastest of `matmul_rate` over several row counts: (linear-layer FLOP/s, its row
    count, output-layer FLOP/s, its row count). A bound is the least time the work can take,
    so the rate is the best the machine reaches with the model's weights, whatever row
    count a tool happens to use (a tool cutting its work into small calls must not get a
    looser bound for it)."""
    best_body, best_rows, best_head, best_head_rows = 0.0, 0, 0.0, 0
    for rows, head_rows in zip(row_counts, head_row_counts, strict=True):
        body_rate, head_rate = matmul_rate(hf_model, rows, head_rows, seconds=seconds)
        if body_rate > best_body:
            best_body, best_rows = body_rate, rows
        if head_rate > best_head:
            best_head, best_head_rows = head_rate, max(1, head_rows)
    return best_body, best_rows, best_head, best_head_rows


def bound_seconds(
    work: Work, body_flops: float, head_flops: float, body_rate: float, head_rate: float
) -> float:
    return work.nodes * body_flops / body_rate + work.rows * head_flops / head_rate
