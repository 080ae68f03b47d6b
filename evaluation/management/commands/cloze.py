"""manage.py cloze: the cloze-test analysis (Qasemi et al.) of a local model on ComVE."""

from __future__ import annotations

import signal
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.cloze.math import DEFAULT_EQUATIONS, EQUATIONS
from evaluation.cloze.services import (
    ClozeError,
    ClozeSettings,
    cloze_rescore,
    cloze_results_combine,
    cloze_run,
)
from evaluation.lm.scorers.types import START_HELP
from evaluation.selectors import model_get


class Command(BaseCommand):
    help = (
        "Cloze-test analysis of a model (Qasemi et al.): experiment 1, dispersion of the "
        "replacements of every content word of the first --limit statements; experiment 2, "
        "confidence on the first --pairs ComVE subtask-A pairs. Writes results.json, "
        "dispersion.jsonl and confidence.jsonl into --out and records the run. --equations paper "
        "(the default) uses Qasemi et al.'s equations as written; --rescore DIR scores a finished "
        "run's stored replacements again with other equations, without running the model."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--release",
            help="NAME@VERSION of a published ComVE release (its files checked against its manifest); "
            "also a file comve_a.jsonl, a folder holding one, or a raw ComVE split folder such as "
            "../shared/data/comve/train (subtaskA_*data*.csv + subtaskA_*answer*.csv)",
        )
        parser.add_argument(
            "--model",
            help="a name of the server's model registry (`manage.py models`), or a local folder or .gguf file",
        )
        parser.add_argument(
            "--embeddings",
            help="GloVe-format text file of word vectors (default: the model's input embeddings)",
        )
        parser.add_argument("--limit", type=int, help="statements for experiment 1 (default: all)")
        parser.add_argument(
            "--offset", type=int, default=0, help="experiment 1 starts at this statement (default 0)"
        )
        parser.add_argument(
            "--combine",
            nargs="+",
            metavar="DIR",
            help="instead of running: combine the output folders of runs of the same model and "
            "settings on parts of the data (e.g. --offset 0 and --offset 500) into --out",
        )
        parser.add_argument(
            "--rescore",
            metavar="DIR",
            help="instead of running: score the stored replacements and candidates of the finished run "
            "in DIR again with --equations into --out (loads --model, or the model the run recorded, "
            "for its input embeddings only; a run that used --embeddings needs that file again)",
        )
        parser.add_argument(
            "--equations",
            choices=list(EQUATIONS),
            default=DEFAULT_EQUATIONS,
            help="; ".join(f"{name}: {eq.description}" for name, eq in EQUATIONS.items())
            + f" (default {DEFAULT_EQUATIONS})",
        )
        parser.add_argument(
            "--no-paper-examples",
            action="store_true",
            help="skip experiment 1 on the six sentences of Qasemi et al. Tables 1-2 (run by default)",
        )
        parser.add_argument("--pairs", type=int, default=100, help="pairs for experiment 2 (default 100)")
        parser.add_argument(
            "--k", type=int, default=10, help="replacements kept per masked word (default 10)"
        )
        parser.add_argument(
            "--propose",
            type=int,
            default=30,
            help="causal LMs: next-word proposals re-ranked by sentence probability (default 30)",
        )
        parser.add_argument("--seed", type=int, default=0, help="Gaussian mixture seed (default 0)")
        parser.add_argument(
            "--max-span", type=int, default=3, help="longest differing span in words (default 3)"
        )
        parser.add_argument("--kind", choices=["masked", "causal"], help="force the model kind of a folder")
        parser.add_argument("--start-token", default=None, help=START_HELP)
        parser.add_argument("--threads", type=int, help="torch threads (default: torch's choice)")
        parser.add_argument("--out", required=True, help="output folder")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["combine"]:
            try:
                run = cloze_results_combine(parts=options["combine"], out_dir=options["out"])
            except ClozeError as exc:
                raise CommandError(str(exc)) from exc
            self._report(run)
            return
        if options["rescore"]:
            try:
                run = cloze_rescore(
                    folder=options["rescore"],
                    out_dir=options["out"],
                    equations=options["equations"],
                    model_path=options["model"],
                    embeddings=options["embeddings"],
                )
            except ClozeError as exc:
                raise CommandError(str(exc)) from exc
            self._report(run)
            return
        if not options["release"] or not options["model"]:
            raise CommandError("--release and --model are required (unless --combine or --rescore)")
        if options["threads"]:
            import torch

            torch.set_num_threads(options["threads"])
        settings = ClozeSettings(
            k=options["k"],
            propose_n=options["propose"],
            seed=options["seed"],
            max_span_words=options["max_span"],
            limit=options["limit"],
            offset=options["offset"],
            pairs=options["pairs"],
            kind=options["kind"],
            start_token=options["start_token"],
            equations=options["equations"],
            paper_examples=not options["no_paper_examples"],
        )
        verbose = options["verbosity"] >= 2

        def stop(signum: int, frame: Any) -> None:
            raise KeyboardInterrupt  # the experiments keep what they did (results marked interrupted)

        signal.signal(signal.SIGTERM, stop)

        def progress(stage: str, n: int, total: int) -> None:
            if verbose or n == total or n % 50 == 0:
                sys.stderr.write(f"{stage}: {n}/{total}\n")

        try:
            run = cloze_run(
                release=options["release"],
                model_path=_registry_path(options["model"]),
                out_dir=options["out"],
                embeddings=options["embeddings"],
                settings=settings,
                progress=progress if options["verbosity"] >= 1 else None,
            )
        except ClozeError as exc:
            raise CommandError(str(exc)) from exc
        self._report(run)

    def _report(self, run: Any) -> None:
        d, c = run.results["dispersion"], run.results["confidence"]
        start = run.results.get("start_token")
        conditioned = f"; start token {start!r}" if start else ""
        self.stdout.write(f"cloze run #{run.pk}: {run.method}{conditioned}; vectors: {run.embeddings}")
        equations = run.results.get("equations") or {"name": "renormalised"}
        self.stdout.write(f"equations: {equations['name']}")
        self.stdout.write(
            f"experiment 1: {d['scored']}/{d['statements']} statements, "
            f"r(acc, prec) uniform {d['pearson_accuracy_precision_uniform']}, "
            f"weighted {d['pearson_accuracy_precision_weighted']}"
        )
        self.stdout.write(
            f"experiment 2: {c['correct']} of {c['encoded']} encoded pairs right "
            f"({c['encoded']} of {c['pairs']} encoded), accuracy {c['accuracy']}"
        )
        if run.results.get("interrupted"):
            self.stdout.write(
                f"interrupted: {d['statements']} of {d['requested']} statements, "
                f"{c['pairs']} of {c['requested']} pairs done"
            )
        self.stdout.write(f"written to {run.out_dir}")


def _registry_path(model: str) -> str:
    """A registry name as the path of its model; anything else as given (a path)."""
    entry = model_get(name=model) if "/" not in model else None
    return str(entry.path) if entry is not None else model
