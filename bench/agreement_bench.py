"""Time Winnow's agreement statistics on 1,000,000 synthetic judgments against the references.

Run: .venv/bin/python bench/agreement_bench.py [--items 200000] [--per-item 5]

Synthetic data: ITEMS items, PER_ITEM judgments each (distinct raters drawn from a pool of
RATERS), 3 categories; each item has a "true" category that a rater picks with probability
0.7. Winnow starts from the judgment codes (item, rater, category), as a campaign gives them.
References, in the same run and on the same data:
- Fleiss' kappa: statsmodels `aggregate_raters` (items x raters layout -> count table) +
  `fleiss_kappa(method="fleiss")`;
- Krippendorff's alpha: `krippendorff.alpha(reliability_data=raters x items with NaN)`;
- pairwise agreement: no package computes WinoWhy's IAA, so the reference is the plain
  per-item loop over annotator pairs (itertools.combinations).
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from annotation.agreement import stats as ag  # noqa: E402


def timed(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200_000)
    parser.add_argument("--per-item", type=int, default=5)
    parser.add_argument("--raters", type=int, default=50)
    parser.add_argument("--categories", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import krippendorff
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    rng = np.random.default_rng(args.seed)
    n_items, k, n_cat = args.items, args.per_item, args.categories
    truth = rng.integers(0, n_cat, size=n_items)
    noise = rng.integers(0, n_cat, size=(n_items, k))
    answers = np.where(rng.random((n_items, k)) < 0.7, truth[:, None], noise)  # items x k
    # k distinct raters per item from the pool: a random offset plus a random start
    start = rng.integers(0, args.raters, size=n_items)
    raters = (start[:, None] + np.arange(k)[None, :]) % args.raters
    item_idx = np.repeat(np.arange(n_items), k)
    rater_idx = raters.reshape(-1)
    category_idx = answers.reshape(-1)
    n_judgments = item_idx.size
    print(f"{n_judgments:,} judgments: {n_items:,} items x {k}, {args.raters} raters, {n_cat} categories")
    print(f"numpy {np.__version__}, {os.cpu_count()} CPUs; best of 3 runs each\n")

    # Winnow: from judgment codes, building the table inside the timing.
    def winnow_kappa() -> float:
        return ag.fleiss_kappa(ag.count_table(item_idx, category_idx, n_items, n_cat))

    def winnow_pairwise() -> float:
        return ag.pairwise_agreement(ag.count_table(item_idx, category_idx, n_items, n_cat))

    def winnow_alpha() -> float:
        return ag.krippendorff_alpha_nominal(ag.count_table(item_idx, category_idx, n_items, n_cat))

    # References.
    def sm_kappa() -> float:
        table, _ = aggregate_raters(answers, n_cat=n_cat)
        return float(fleiss_kappa(table, method="fleiss"))

    def loop_pairwise() -> float:
        shares = []
        for row in answers.tolist():
            pairs = list(itertools.combinations(row, 2))
            shares.append(sum(a == b for a, b in pairs) / len(pairs))
        return sum(shares) / len(shares)

    reliability = np.full((args.raters, n_items), np.nan)
    reliability[rater_idx, item_idx] = category_idx

    def kr_alpha() -> float:
        return float(krippendorff.alpha(reliability_data=reliability, level_of_measurement="nominal"))

    rows = [
        ("Fleiss' kappa", winnow_kappa, sm_kappa, "statsmodels aggregate_raters + fleiss_kappa", 1e-12),
        ("pairwise agreement", winnow_pairwise, loop_pairwise, "plain Python loop over pairs", 1e-12),
        ("Krippendorff's alpha", winnow_alpha, kr_alpha, "krippendorff.alpha(reliability_data)", 1e-9),
    ]
    print(f"{'statistic':<22}{'value':>12}{'Winnow s':>11}{'reference s':>13}{'ratio':>9}  reference")
    all_fast = True
    for name, ours, ref, ref_name, tol in rows:
        t_ours, v_ours = timed(ours)
        t_ref, v_ref = timed(ref, repeat=1 if ref is loop_pairwise else 3)
        if abs(v_ours - v_ref) > tol:
            raise SystemExit(f"{name}: Winnow {v_ours!r} differs from the reference {v_ref!r}")
        all_fast &= t_ours < 1.0
        print(f"{name:<22}{v_ours:>12.6f}{t_ours:>11.4f}{t_ref:>13.4f}{t_ref / t_ours:>8.1f}x  {ref_name}")

    table = ag.count_table(item_idx, category_idx, n_items, n_cat)
    t_ours, _ = timed(lambda: ag.fleiss_kappa(table))
    t_ref, _ = timed(lambda: fleiss_kappa(table, method="fleiss"))
    print(
        f"{'  from a ready table':<22}{'':>12}{t_ours:>11.4f}{t_ref:>13.4f}{t_ref / t_ours:>8.1f}x"
        "  statsmodels fleiss_kappa alone"
    )

    t_boot, figures = timed(
        lambda: ag.table_figures(ag.count_table(item_idx, category_idx), resamples=1000), 1
    )
    print(f"\nall three with 1,000 bootstrap resamples each (95% intervals): {t_boot:.3f} s")
    ci = figures.fleiss_kappa_ci
    print(f"  Fleiss' kappa {figures.fleiss_kappa:.4f} [{ci.low:.4f}, {ci.high:.4f}]")
    t_cohen, pairs = timed(lambda: ag.cohen_kappa_pairs(item_idx, rater_idx, category_idx, n_cat), 1)
    print(f"Cohen's kappa for all {len(pairs)} rater pairs: {t_cohen:.3f} s")
    t_major, _ = timed(lambda: ag.majority_agreement(item_idx, rater_idx, category_idx), 1)
    print(f"leave-one-out majority agreement per rater: {t_major:.3f} s")
    print("\ntarget (each of the three under 1 s):", "met" if all_fast else "NOT met")


if __name__ == "__main__":
    main()
