"""python manage.py evaluate --release NAME@VERSION --model NAME|PATH --method partial [...]"""

import signal
import threading
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.lm.modeling import NORMALIZATIONS
from evaluation.lm.scorers.types import START_HELP
from evaluation.metrics.comve import COMVE_RULES
from evaluation.models import Method
from evaluation.runs.create import evaluation_run_create
from evaluation.runs.errors import EvaluationError
from evaluation.runs.execute import evaluation_run
from evaluation.selectors import model_get
from releases.dataset import Dataset


class Command(BaseCommand):
    help = (
        "Score a model (or a baseline, or uploaded predictions) on a release and store the run. "
        "Writes results.json, predictions.jsonl (and SemEval CSVs for ComVE) into the run folder."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--release",
            required=True,
            help="NAME@VERSION of a published release (its files are checked against its manifest), "
            "or the folder of an exported release "
            "(the one holding manifest.json and wsc.jsonl / winowhy.jsonl / comve_*.jsonl)",
        )
        parser.add_argument(
            "--model",
            default="",
            help="model methods: a name of the server's model registry (`manage.py models` lists them), "
            "or a local Hugging Face folder or GGUF file",
        )
        parser.add_argument("--method", required=True, choices=Method.values)
        parser.add_argument(
            "--predictions",
            default="",
            help="uploaded predictions: WSC JSONL/CSV (id, prediction[, variant]); WinoWhy id,score; "
            "ComVE a folder with subtaskA/B/C_answers.csv",
        )
        parser.add_argument("--start-token", default=None, help=START_HELP)
        parser.add_argument(
            "--normalization",
            choices=NORMALIZATIONS,
            default="exact",
            help="how a causal LM's logits become log-probabilities: exact (default; within about 1e-6 "
            "nats a token of the float64 value) or lm-eval (lm-evaluation-harness's float32 log_softmax "
            "of whole rows: its numbers on this machine, rounding bias included; see the docs page "
            "/docs/scoring/#exactness-and-speed)",
        )
        parser.add_argument("--seed", type=int, default=0, help="seed of the random baseline")
        parser.add_argument("--limit", type=int, default=None, help="score only the first N items")
        parser.add_argument("--batch-size", type=int, default=32)
        parser.add_argument(
            "--threads", type=int, default=None, help="torch CPU threads (default: all cores)"
        )
        parser.add_argument(
            "--out", default="", help="run folder (default: MEDIA_ROOT/evaluation/runs/run-ID)"
        )
        parser.add_argument(
            "--generate-explanations",
            action="store_true",
            help="ComVE with a causal LM: generate subtask C explanations (greedy) and score their BLEU",
        )
        parser.add_argument(
            "--name", default="", help="a name for the run, shown beside its number on the pages"
        )
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args: Any, **options: Any) -> None:
        model = options["model"]
        by_name = bool(model) and "/" not in model and model_get(name=model) is not None
        try:
            run = evaluation_run_create(
                release=options["release"],
                method=options["method"],
                model_name=model if by_name else "",
                model_path="" if by_name else model,
                predictions_path=options["predictions"],
                seed=options["seed"],
                limit=options["limit"],
                batch_size=options["batch_size"],
                threads=options["threads"],
                out_dir=options["out"],
                generate_explanations=options["generate_explanations"],
                start_token=options["start_token"],
                normalization=options["normalization"],
                name=options["name"],
            )
        except EvaluationError as exc:
            raise CommandError(str(exc)) from exc

        # SIGTERM (e.g. `timeout`, a stopped container) ends the run as failed, not "running".
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, _terminate)
        bar = None
        progress = None
        if not options["no_progress"]:
            from tqdm import tqdm

            bar = tqdm(total=0, unit="item", desc=f"{run.dataset} {run.method}", file=self.stderr._out)

            def progress(done: int, total: int) -> None:
                if bar.total != total:
                    bar.total = total
                bar.n = done
                bar.refresh()

        try:
            run = evaluation_run(run=run, progress=progress)
        except EvaluationError as exc:
            raise CommandError(f"run #{run.pk} failed: {exc}") from exc
        finally:
            if bar is not None:
                bar.close()
        self.stdout.write(f"run #{run.pk} done: {run.release_label} {run.dataset} {run.method}")
        for line in summary_lines(run.metrics, run.dataset):
            self.stdout.write("  " + line)
        self.stdout.write(f"  files in {run.results_dir}")


def _terminate(signum: int, frame: Any) -> None:
    raise SystemExit(f"terminated by signal {signum}")


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}%"


def summary_lines(metrics: dict[str, Any], dataset: str) -> list[str]:
    lines = []
    if dataset == Dataset.WSC:
        a = metrics["all"]
        lines.append(f"accuracy {_pct(a['accuracy'])} ({a['correct']}/{a['n']})")
        sig = metrics.get("significance", {}).get("all", {})
        if sig.get("n"):
            lines.append(
                f"lucky draw P(random >= this) {_pct(sig['lucky_draw'])}; best of {sig['guessers']}: "
                f"{_pct(sig['lucky_draw_best_of'])}; Wilson 95% [{_pct(sig['wilson_95'][0])}, {_pct(sig['wilson_95'][1])}]"
            )
        s = metrics["switchable"]
        if s["n"]:
            lines.append(
                f"switchable ({s['n']}): before {_pct(s['accuracy_before'])}, after {_pct(s['accuracy_after'])}, "
                f"consistency {_pct(s['consistency'])}"
            )
        lines.append(
            f"associative {_pct(metrics['associative']['accuracy'])} ({metrics['associative']['n']}), "
            f"non-associative {_pct(metrics['non_associative']['accuracy'])} ({metrics['non_associative']['n']})"
        )
        for name, k in metrics["knowledge_types"].items():
            lines.append(f"{name}: {_pct(k['accuracy'])} ({k['correct']}/{k['n']})")
    elif dataset == Dataset.WINOWHY:
        b = metrics["best_threshold"]
        m = metrics["majority_baseline"]
        lines.append(
            f"best-threshold accuracy {_pct(b['accuracy'])} ({b['correct']}/{b['n']}, "
            f"t={'inf' if b['threshold'] is None else format(b['threshold'], '.4g')})"
        )
        lines.append(f"majority baseline {_pct(m['accuracy'])} ({m['correct']}/{m['n']})")
        for name, k in metrics["knowledge_types"].items():
            # Table 6's setting first: the one threshold best over all reasons
            lines.append(
                f"{name}: {_pct(k['at_overall_threshold']['accuracy'])} at the overall threshold, "
                f"{_pct(k['best']['accuracy'])} at its own best (n={k['best']['n']})"
            )
    else:
        for task in ("a", "b"):
            if task in metrics:
                m = metrics[task]
                rules = m.get("rules") or {}
                beside = "".join(
                    f"; {name.replace('_', ' ')} {_pct(r['accuracy'])}"
                    # in COMVE_RULES's order (a JSONB column keeps no key order)
                    for name, r in sorted(rules.items(), key=lambda kv: list(COMVE_RULES[task]).index(kv[0]))
                    if name != m.get("rule")
                )
                headline = f" by {m['rule']}" if m.get("rule") else ""
                lines.append(
                    f"subtask {task.upper()}{headline}: {_pct(m['accuracy'])} ({m['correct']}/{m['n']}){beside}"
                )
        c = metrics.get("c")
        if c:
            lines.append(
                f"subtask C: BLEU {c['bleu_percent']:.4f}"
                if c.get("computed")
                else f"subtask C: {c['reason']}"
            )
    return lines + adversarial_lines(metrics.get("adversarial"))


def adversarial_lines(adversarial: dict[str, Any] | None) -> list[str]:
    """An adversarial release's figures: accuracy per round, on fooling and non-fooling
    items and per ANLI split (none for other releases)."""
    if not adversarial:
        return []

    def figure(f: dict[str, Any]) -> str:
        return f"{_pct(f['accuracy'])} ({f['correct']}/{f['n']})"

    lines = [f"adversarial items: {adversarial['items']}"]
    lines += [f"round {f['round']}: {figure(f)}" for f in adversarial["by_round"]]
    lines.append(
        f"fooled a model of its round: {figure(adversarial['fooling'])}; "
        f"fooled no model: {figure(adversarial['non_fooling'])}"
    )
    if adversarial.get("by_split"):
        lines.append("; ".join(f"split {f['split']}: {figure(f)}" for f in adversarial["by_split"]))
    return lines
