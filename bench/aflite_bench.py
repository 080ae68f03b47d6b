"""Time AfLite at WinoGrande's scale: Winnow's batched models against the plain scikit-learn loop.

Run: .venv/bin/python bench/aflite_bench.py [--reference-iterations 2] [--items 40398]

Synthetic features (evaluation.audit.synthetic, seeded): ITEMS two-option items, DIM
dimensions of Gaussian noise per option plus a token dimension that marks the right option
on a LEAK share of them (WinoGrande is two-option multiple choice; 576 is SmolLM2-135M's
hidden size). AfLite with m=64, t=10,000, k=500, tau=0.75 (WinoGrande's settings; the
target size defaults to a quarter of the set).

In the same run, on the same features, partitions and seed:
- Winnow: evaluation.audit.aflite (the 64 logistic regressions of an iteration as one
  batched model, full-batch L-BFGS, float64), run to the end, each iteration timed;
- the reference: evaluation.audit.reference (one scikit-learn LogisticRegression per
  partition in a Python loop). A full reference run takes hours on 2 cores, so by default
  it runs the first REFERENCE_ITERATIONS iterations; Winnow runs the same first iterations
  again alone for the item-by-item comparison (scores, removals), and the full
  reference time is EXTRAPOLATED from its measured iterations (clearly marked).
  --reference-iterations 0 runs the reference to the end instead.

The thread pools: torch gets --threads (default 2); OMP_WAIT_POLICY=PASSIVE (unless set)
keeps its idle threads from spinning on a shared machine. The load average is printed.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from evaluation.audit.aflite import AfliteParams, aflite  # noqa: E402
from evaluation.audit.reference import aflite_reference  # noqa: E402
from evaluation.audit.synthetic import leaky_set  # noqa: E402


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=40_398)
    parser.add_argument("--dim", type=int, default=576)
    parser.add_argument("--options", type=int, default=2)
    parser.add_argument("--leak", type=float, default=0.1)
    parser.add_argument("--m", type=int, default=64)
    parser.add_argument("--t", type=int, default=10_000)
    parser.add_argument("--k", type=int, default=500)
    parser.add_argument("--tau", type=float, default=0.75)
    parser.add_argument("--target-n", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--reference-iterations", type=int, default=2)
    args = parser.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    data = leaky_set(args.items, dim=args.dim - 1, leak=args.leak, options=args.options, seed=args.seed)
    params = AfliteParams(m=args.m, t=args.t, k=args.k, tau=args.tau, target_n=args.target_n, seed=args.seed)
    print(
        f"features {data.features.shape} float32, {int(data.leaked.sum())} items with the token; "
        f"torch threads {torch.get_num_threads()}, OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}"
    )
    print(f"load average before: {load()}")

    start = time.perf_counter()  # torch's first-call set-up, once per worker process
    small = leaky_set(300, dim=8, options=args.options, seed=1)
    aflite(small.features, small.labels, params=AfliteParams(t=30, target_n=100))
    print(f"warm-up (first call in the process, not counted): {time.perf_counter() - start:.1f} s")

    stamps: list[float] = []
    start = time.perf_counter()
    full = aflite(
        data.features, data.labels, params=params, on_iteration=lambda _: stamps.append(time.perf_counter())
    )
    winnow_total = time.perf_counter() - start
    per_iteration = np.diff([start, *stamps])
    print(
        f"\nWinnow, full run: {winnow_total:.1f} s, {len(full.iterations)} iterations, stopped {full.stopped}"
    )
    print(f"  params: {full.params}")
    for it, seconds in zip(full.iterations, per_iteration, strict=True):
        print(
            f"  iteration {it.iteration}: {it.items_in} in, {it.at_or_above_tau} >= tau, removed {it.removed}, {seconds:.1f} s"
        )
    print(
        f"  removed {int((~full.kept).sum())}: {(~full.kept[data.leaked]).mean():.1%} of the token items, "
        f"{(~full.kept[~data.leaked]).mean():.1%} of the others"
    )

    limit = args.reference_iterations or None
    start = time.perf_counter()
    reference = aflite_reference(data.features, data.labels, params=params, max_iterations=limit)
    reference_time = time.perf_counter() - start
    done = len(reference.iterations)
    print(f"\nscikit-learn loop: {reference_time:.1f} s for {done} iteration(s), stopped {reference.stopped}")
    if limit is None:
        same = np.array_equal(full.removed_in, reference.removed_in)
        diff = float(np.abs(full.scores - reference.scores).max())
        winnow_same_work = winnow_total
    else:
        start = time.perf_counter()
        first = aflite(data.features, data.labels, params=params, max_iterations=done)
        winnow_same_work = time.perf_counter() - start
        same = np.array_equal(first.removed_in, reference.removed_in)
        diff = float(np.abs(first.scores - reference.scores).max())
        print(f"Winnow, the same {done} iteration(s) again: {winnow_same_work:.1f} s")
    print(f"  same removals: {same}; largest score difference: {diff:.4f}")
    print(f"\nspeed-up on the same iterations: {reference_time / winnow_same_work:.1f}x")
    if limit is not None and done < len(full.iterations):
        estimate = reference_time / done * len(full.iterations)
        print(
            f"EXTRAPOLATED full scikit-learn run: {estimate:.0f} s ({reference_time / done:.1f} s an iteration "
            f"x {len(full.iterations)} iterations; measured only the first {done}) against Winnow's "
            f"{winnow_total:.1f} s: {estimate / winnow_total:.1f}x"
        )
    print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
