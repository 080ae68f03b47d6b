"""Time AfLite at WinoGrande's scale: Winnow's batched models against the plain scikit-learn loop.

Run: .venv/bin/python bench/aflite_bench.py [--reference-iterations 1] [--full] [--threads 2]

Synthetic features (evaluation.audit.synthetic, seeded): ITEMS two-option items, DIM
dimensions of Gaussian noise per option plus a token dimension that marks the right option
on a LEAK share of them (WinoGrande is two-option multiple choice; 576 is SmolLM2-135M's
hidden size). AfLite with m=64, t=10,000, k=500, tau=0.75 (WinoGrande's settings; the
target size defaults to a quarter of the set).

In the same run, on the same features, partitions and seed:
- the reference: evaluation.audit.reference (one scikit-learn LogisticRegression per
  partition in a Python loop). A full reference run takes most of an hour on 2 cores, so
  by default it runs the first --reference-iterations (1) iterations; --full runs it to
  the end (the same as --reference-iterations 0);
- Winnow: evaluation.audit.aflite (the 64 logistic regressions of an iteration as one
  batched model: float32 then float64 L-BFGS, evaluation.audit.linear) on the same
  iterations right after it: scores and removals compared item by item, wall-clock and
  CPU (process) times; CPU time is the fairer figure when other jobs share the machine;
- Winnow again, to the end, each iteration timed; unless --full, the full reference time
  is EXTRAPOLATED from its measured iterations (printed as such).

The thread pools: torch gets --threads (default 2), and so does the BLAS that numpy and
scikit-learn call (threadpoolctl); OMP_WAIT_POLICY=PASSIVE (unless set) keeps idle
threads from spinning on a shared machine. The load average (as `uptime` prints it) is
printed beside every figure.
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
from evaluation.audit.aflite import AfliteIteration, AfliteParams, aflite  # noqa: E402
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
    parser.add_argument("--reference-iterations", type=int, default=1)
    parser.add_argument("--full", action="store_true", help="run the scikit-learn loop to the end too")
    args = parser.parse_args()

    import torch
    from threadpoolctl import threadpool_info, threadpool_limits

    torch.set_num_threads(args.threads)
    threadpool_limits(args.threads, user_api="blas")
    blas = ", ".join(
        f"{p['internal_api']} {p['num_threads']}" for p in threadpool_info() if p["user_api"] == "blas"
    )
    data = leaky_set(args.items, dim=args.dim - 1, leak=args.leak, options=args.options, seed=args.seed)
    params = AfliteParams(m=args.m, t=args.t, k=args.k, tau=args.tau, target_n=args.target_n, seed=args.seed)
    print(
        f"features {data.features.shape} float32, {int(data.leaked.sum())} items with the token; "
        f"threads: torch {torch.get_num_threads()}, BLAS ({blas}); OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}"
    )
    print(f"load average before: {load()}")

    start = time.perf_counter()  # torch's first-call set-up, once per worker process
    small = leaky_set(300, dim=8, options=args.options, seed=1)
    aflite(small.features, small.labels, params=AfliteParams(t=30, target_n=100))
    print(f"warm-up (first call in the process, not counted): {time.perf_counter() - start:.1f} s")

    limit = None if args.full else (args.reference_iterations or None)

    # 1. the scikit-learn loop on the first iterations (or all), then Winnow on the same
    # iterations right after it, so both meet about the same load on a shared machine
    wall, cpu = time.perf_counter(), time.process_time()
    reference = aflite_reference(data.features, data.labels, params=params, max_iterations=limit)
    reference_wall, reference_cpu = time.perf_counter() - wall, time.process_time() - cpu
    done = len(reference.iterations)
    print(
        f"\nscikit-learn loop: {reference_wall:.1f} s ({reference_cpu:.1f} s CPU) for {done} iteration(s), "
        f"stopped {reference.stopped}; load average {load()}"
    )
    wall, cpu = time.perf_counter(), time.process_time()
    first = aflite(data.features, data.labels, params=params, max_iterations=limit)
    winnow_wall, winnow_cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(
        f"Winnow, the same {done} iteration(s): {winnow_wall:.1f} s ({winnow_cpu:.1f} s CPU); load average {load()}"
    )
    same = np.array_equal(first.removed_in, reference.removed_in)
    diff = float(np.abs(first.scores - reference.scores).max())
    print(f"  same removals: {same}; largest score difference: {diff:.4f}")
    for a, b in zip(first.iterations, reference.iterations, strict=True):
        print(
            f"  iteration {a.iteration}: Winnow {a.at_or_above_tau} >= tau, removed {a.removed}; scikit-learn {b.at_or_above_tau}, {b.removed}"
        )
    print(
        f"speed-up on the same iterations: {reference_wall / winnow_wall:.1f}x wall clock, "
        f"{reference_cpu / winnow_cpu:.1f}x CPU time"
    )

    # 2. Winnow to the end
    stamps: list[tuple[float, float]] = []

    def progress(it: AfliteIteration) -> None:
        stamps.append((time.perf_counter(), time.process_time()))
        before = stamps[-2] if len(stamps) > 1 else (wall, cpu)
        print(
            f"  iteration {it.iteration}: {it.items_in} in, {it.at_or_above_tau} >= tau, removed {it.removed}, "
            f"{stamps[-1][0] - before[0]:.1f} s ({stamps[-1][1] - before[1]:.1f} s CPU); load average {load()}",
            flush=True,
        )

    print("\nWinnow, full run:", flush=True)
    wall, cpu = time.perf_counter(), time.process_time()
    full = aflite(data.features, data.labels, params=params, on_iteration=progress)
    total_wall, total_cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(
        f"  {total_wall:.1f} s ({total_cpu:.1f} s CPU), {len(full.iterations)} iterations, stopped {full.stopped}; "
        f"load average {load()}"
    )
    print(f"  params: {full.params}")
    print(
        f"  removed {int((~full.kept).sum())}: {(~full.kept[data.leaked]).mean():.1%} of the token items, "
        f"{(~full.kept[~data.leaked]).mean():.1%} of the others"
    )
    if limit is None:
        print(
            f"  same removals as the full scikit-learn run: {np.array_equal(full.removed_in, reference.removed_in)}"
        )
        print(
            f"whole run: scikit-learn {reference_wall:.1f} s ({reference_cpu:.1f} s CPU) against Winnow's "
            f"{total_wall:.1f} s ({total_cpu:.1f} s CPU): {reference_wall / total_wall:.1f}x wall clock, "
            f"{reference_cpu / total_cpu:.1f}x CPU time"
        )
    elif done < len(full.iterations):
        estimate = reference_wall / done * len(full.iterations)
        estimate_cpu = reference_cpu / done * len(full.iterations)
        print(
            f"EXTRAPOLATED full scikit-learn run: {estimate:.0f} s wall, {estimate_cpu:.0f} s CPU "
            f"({reference_wall / done:.1f} s, {reference_cpu / done:.1f} s CPU an iteration x {len(full.iterations)} "
            f"iterations; measured only the first {done}) against Winnow's {total_wall:.1f} s ({total_cpu:.1f} s CPU): "
            f"{estimate / total_wall:.1f}x wall clock, {estimate_cpu / total_cpu:.1f}x CPU time (extrapolated)"
        )
    print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
