"""Time AfLite at WinoGrande's scale: Winnow's batched models against the plain scikit-learn loop.

Run: .venv/bin/python bench/aflite_bench.py [--threads 2] [--reference-threads 1] [--reference-iterations N] [--tol T]

Synthetic features (evaluation.audit.synthetic, seeded): ITEMS two-option items, DIM
dimensions of Gaussian noise per option plus a token dimension that marks the right option
on a LEAK share of them (WinoGrande is two-option multiple choice; 576 is SmolLM2-135M's
hidden size). AfLite with m=64, t=10,000, k=500, tau=0.75 (WinoGrande's settings; the
target size defaults to a quarter of the set).

In the same run, on the same features, partitions and seed:
- the reference: evaluation.audit.reference (one scikit-learn LogisticRegression per
  partition in a Python loop), by default to the end (13 iterations: about 2.5 minutes
  at 1 thread and 4 at 2 on a quiet 2-core machine); --reference-iterations N stops it
  after N and the whole loop is then EXTRAPOLATED (printed as such);
- Winnow: evaluation.audit.aflite (the 64 logistic regressions of an iteration as one
  batched model, evaluation.audit.linear) to the end right after it, each iteration
  timed: scores and removals compared item by item, wall-clock and CPU (process) times
  (CPU time is the fairer figure when other jobs share the machine).

The thread pools: torch gets --threads (default 2); the BLAS that numpy and scikit-learn
call (threadpoolctl) gets --reference-threads (default: --threads) while the reference
runs. scikit-learn's loop is fastest at 1 thread (a second OpenBLAS thread slows its
small products down), Winnow's at 2: `--threads 2 --reference-threads 1` compares each at
its best. OMP_WAIT_POLICY=PASSIVE (unless set) keeps idle threads from spinning on a
shared machine. The load average (as `uptime` prints it) is printed beside every figure.
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
    parser.add_argument(
        "--tol",
        type=float,
        default=AfliteParams.tol,
        help="the stopping tolerance (largest gradient entry) of both sides' logistic regressions",
    )
    parser.add_argument("--threads", type=int, default=2, help="torch's threads (Winnow)")
    parser.add_argument(
        "--reference-threads",
        type=int,
        default=None,
        help="BLAS threads for scikit-learn (default: --threads)",
    )
    parser.add_argument(
        "--reference-iterations",
        type=int,
        default=0,
        help="stop the scikit-learn loop after this many iterations and extrapolate (0: run it to the end)",
    )
    args = parser.parse_args()

    import torch
    from threadpoolctl import threadpool_info, threadpool_limits

    reference_threads = args.reference_threads or args.threads
    torch.set_num_threads(args.threads)
    threadpool_limits(args.threads, user_api="blas")
    data = leaky_set(args.items, dim=args.dim - 1, leak=args.leak, options=args.options, seed=args.seed)
    params = AfliteParams(
        m=args.m, t=args.t, k=args.k, tau=args.tau, target_n=args.target_n, seed=args.seed, tol=args.tol
    )
    print(
        f"features {data.features.shape} float32, {int(data.leaked.sum())} items with the token; "
        f"threads: torch {torch.get_num_threads()}, scikit-learn's BLAS {reference_threads}; "
        f"OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}"
    )
    print(f"load average before: {load()}")

    start = time.perf_counter()  # torch's first-call set-up, once per worker process
    small = leaky_set(300, dim=8, options=args.options, seed=1)
    aflite(small.features, small.labels, params=AfliteParams(t=30, target_n=100))
    print(f"warm-up (first call in the process, not counted): {time.perf_counter() - start:.1f} s")

    limit = args.reference_iterations or None

    # 1. the scikit-learn loop, then Winnow right after it, so both meet about the same
    # load on a shared machine
    with threadpool_limits(reference_threads, user_api="blas"):
        blas = ", ".join(
            f"{p['internal_api']} {p['num_threads']}" for p in threadpool_info() if p["user_api"] == "blas"
        )
        wall, cpu = time.perf_counter(), time.process_time()
        reference = aflite_reference(data.features, data.labels, params=params, max_iterations=limit)
        reference_wall, reference_cpu = time.perf_counter() - wall, time.process_time() - cpu
    done = len(reference.iterations)
    print(
        f"\nscikit-learn loop (BLAS: {blas}): {reference_wall:.1f} s ({reference_cpu:.1f} s CPU) for {done} "
        f"iteration(s), stopped {reference.stopped}; load average {load()}",
        flush=True,
    )

    # 2. Winnow to the end, each iteration timed
    stamps: list[tuple[float, float]] = []

    def progress(it: AfliteIteration) -> None:
        stamps.append((time.perf_counter(), time.process_time()))
        before = stamps[-2] if len(stamps) > 1 else (wall, cpu)
        print(
            f"  iteration {it.iteration}: {it.items_in} in, {it.at_or_above_tau} >= tau, removed {it.removed}, "
            f"{stamps[-1][0] - before[0]:.1f} s ({stamps[-1][1] - before[1]:.1f} s CPU); load average {load()}",
            flush=True,
        )

    print(f"\nWinnow ({torch.get_num_threads()} torch threads), the whole run:", flush=True)
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
    compared = full.removed_in.copy()
    if limit is not None:  # Winnow's removals in the iterations the reference ran
        compared[compared > done] = 0
    same = np.array_equal(compared, reference.removed_in)
    print(
        f"  same removals as the scikit-learn loop{'' if limit is None else f' in its {done} iteration(s)'}: {same}"
    )
    for number in range(1, done + 1):  # the first iteration whose removals differ, if any
        ours, theirs = full.removed_in == number, reference.removed_in == number
        if not np.array_equal(ours, theirs):
            print(
                f"  the same removals in iterations 1-{number - 1} ({int(((reference.removed_in > 0) & (reference.removed_in < number)).sum())} "
                f"items); iteration {number}: Winnow removed {int(ours.sum())}, scikit-learn {int(theirs.sum())}, "
                f"{int((ours & theirs).sum())} of them the same items (the later iterations draw their "
                f"partitions over different sets)"
            )
            break
    print(
        f"  scikit-learn removed {int((~reference.kept).sum())}: {(~reference.kept[data.leaked]).mean():.1%} of the "
        f"token items, {(~reference.kept[~data.leaked]).mean():.1%} of the others; items at or above tau per "
        f"iteration: Winnow {[it.at_or_above_tau for it in full.iterations[:done]]}, "
        f"scikit-learn {[it.at_or_above_tau for it in reference.iterations]}"
    )
    if limit is None:
        diff = np.abs(full.scores - reference.scores)
        print(
            f"  score differences (each item's last score): largest {diff.max():.4f}, "
            f"{int((diff > 0).sum())} items differ, {int((diff > 0.02).sum())} by more than 0.02"
        )
        print(
            f"whole run: scikit-learn {reference_wall:.1f} s ({reference_cpu:.1f} s CPU, {reference_threads} BLAS "
            f"thread(s)) against Winnow's {total_wall:.1f} s ({total_cpu:.1f} s CPU, {args.threads} torch "
            f"thread(s)): {reference_wall / total_wall:.1f}x wall clock, {reference_cpu / total_cpu:.1f}x CPU time"
        )
    else:
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
