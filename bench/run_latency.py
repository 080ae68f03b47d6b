"""From starting a WSC273 partial run with SmolLM2 to its results: cold, cold with the
converted copy on disk, and warm, beside the scoring time alone and the old path.

    .venv/bin/python bench/run_latency.py [--threads N] [--rounds N] [--keep DIR]

A scratch site is set up in a temporary folder (SQLite database, media, model cache):
WinoWhy and Trichelair et al.'s switched schemas are imported from WINNOW_DATA_DIR
(default ../shared/data) and wsc273@1.0.0 is built, approved and published, the steps
of scripts/real_releases.sh. Each scenario then runs in a fresh Python process, a new
worker: it starts the run as the web form does (evaluation_run_create with SmolLM2's
registry name, method partial) and executes it as the worker does (the Celery task
evaluation_run_task, called in the process), timed from the start to the results
written. Before that, as a Celery worker of the models queue does when it starts
(config/celery.py), the process imports torch and transformers
(evaluation.lm.modeling.import_model_libraries; the seconds are printed apart, since no
run waits for them). The site's native kernels are the checkout's (bench/scratch_site.py
`kernel_dir`; build them first: `manage.py models --build-kernels`, which `./winnow up`
runs); each round says which kernels and products its runs used (until 28 Nov 2026,
17:20 UTC the site looked for them in its own var folder, found none unless
WINNOW_KERNEL_DIR was set, and measured torch's path):

- old path: no memory cache, no converted copy and no import at start
  (WINNOW_MODEL_CACHE_MB=0, WINNOW_MODEL_CACHE_DIR='', WINNOW_IMPORT_MODEL_LIBRARIES=false):
  the GGUF is de-quantised at every run, as before issue 15;
- cold: a new worker and an empty converted-copy folder (the first run on a server: it
  de-quantises the GGUF and writes the copy);
- cold, copy on disk: a new worker; the copy the cold run wrote is read;
- warm: the next run in that same worker (the model in its memory).

Each run's scoring and metrics time (what no cache changes) is printed beside it, and
the rest of its time (start to results minus scoring: loading the model, reading the
release, writing the results), which is what the caches shorten and what varies least
when other jobs share the machine; every run's predictions are checked identical. --rounds N repeats all of it (a new
converted-copy folder each round) and prints the median; the figures are for a shared
machine, so run it twice when they look noisy.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import scratch_site  # noqa: E402  (bench/, beside this script)
from scratch_site import data_dir  # noqa: E402

RELEASE = "wsc273@1.0.0"
SCENARIOS = ("old path", "cold", "cold, copy on disk", "warm")


def site_env(site: Path, *, cache_mb: int | None = None, cache_dir: str | None = None) -> dict[str, str]:
    extra = {}
    if cache_mb is not None:
        extra["WINNOW_MODEL_CACHE_MB"] = str(cache_mb)
    if cache_dir is not None:
        extra["WINNOW_MODEL_CACHE_DIR"] = cache_dir
    return scratch_site.site_env(site, **extra)


def manage(site: Path, *args: str) -> None:
    subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        env=site_env(site),
        check=True,
        stdout=subprocess.DEVNULL,
    )


def publish_wsc273(site: Path) -> float:
    """The steps of scripts/real_releases.sh for wsc273@1.0.0; returns the seconds taken
    (none when a kept site has it already)."""
    data = data_dir()
    started = time.perf_counter()
    done = site / "published"
    if done.exists():
        return 0.0
    manage(site, "migrate", "--noinput", "-v", "0")
    winowhy = data / "winowhy"
    manage(
        site,
        "import_dataset",
        "winowhy",
        str(winowhy / "winowhy.json"),
        "--categories",
        str(winowhy / "cat_ref.json"),
    )
    manage(site, "import_dataset", "trichelair", str(data / "wsc_switched"))
    manage(
        site, "release_create", "wsc273", "--dataset", "wsc", "--version", "1.0.0", "--build-now",
        "--collection", "wsc273", "--changelog", "bench/run_latency.py",
    )  # fmt: skip
    manage(site, "release_approve", RELEASE)
    manage(site, "release_publish", RELEASE)
    done.touch()
    return time.perf_counter() - started


# -- a worker process -----------------------------------------------------------------


def worker(runs: int, threads: int | None) -> int:
    """Run `runs` WSC273 partial runs one after the other in this process; one JSON line each."""
    import django

    django.setup()
    from django.conf import settings

    from evaluation.lm.modeling import SMOLLM2_FILE
    from evaluation.models import EvaluationRun
    from evaluation.selectors import model_list
    from evaluation.services import evaluation_run_create
    from evaluation.tasks import evaluation_run_task

    # what a Celery worker of the models queue does when it starts, before any job
    # (config/celery.py, worker_init): import torch and transformers, unless turned off
    imported = None
    if settings.WINNOW_IMPORT_MODEL_LIBRARIES:
        from evaluation.lm.modeling import import_model_libraries

        imported = import_model_libraries()
    name = next(m.name for m in model_list() if m.path.name == SMOLLM2_FILE)
    for _ in range(runs):
        started = time.perf_counter()
        run = evaluation_run_create(release=RELEASE, method="partial", model_name=name, threads=threads)
        status = evaluation_run_task(run_id=run.pk)
        seconds = time.perf_counter() - started
        run = EvaluationRun.objects.get(pk=run.pk)
        if status != "done":
            print(json.dumps({"error": run.error or status}), flush=True)
            return 1
        predictions = Path(run.results_dir, "predictions.jsonl").read_text()
        print(
            json.dumps(
                {
                    "seconds": seconds,
                    "load": run.timing["load_seconds"],
                    "scoring": run.timing["score_and_metrics_seconds"],
                    "loaded_from": run.model_identity.get("loaded_from"),
                    "correct": run.metrics["all"]["correct"],
                    "total": run.metrics["all"]["n"],
                    "predictions": hashlib.sha256(predictions.encode()).hexdigest(),
                    "threads": run.model_identity.get("threads"),
                    "kernels": run.model_identity.get("kernels"),
                    "products": run.model_identity.get("products"),
                    "imported_at_start": imported,
                }
            ),
            flush=True,
        )
        imported = None  # the next run in this process is a warm one
    return 0


def spawn(
    site: Path, runs: int, threads: int | None, *, import_libraries: bool = True, **cache: object
) -> list[dict[str, object]]:
    command = [sys.executable, __file__, "--worker", str(runs)]
    if threads:
        command += ["--threads", str(threads)]
    env = site_env(site, **cache)  # type: ignore[arg-type]
    env["WINNOW_IMPORT_MODEL_LIBRARIES"] = "true" if import_libraries else "false"
    out = subprocess.run(command, env=env, check=False, capture_output=True, text=True)
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode or len(rows) != runs:
        sys.stderr.write(out.stderr[-3000:])
        raise SystemExit(f"the worker process failed: {rows[-1] if rows else out.returncode}")
    return rows


def one_round(site: Path, n: int, threads: int | None) -> dict[str, dict[str, object]]:
    copies = site / "model-cache"
    shutil.rmtree(copies, ignore_errors=True)  # empty: this round's cold run converts the GGUF
    old = spawn(site, 1, threads, cache_mb=0, cache_dir="", import_libraries=False)
    cold = spawn(site, 1, threads, cache_dir=str(copies))
    on_disk, warm = spawn(site, 2, threads, cache_dir=str(copies))
    rows = dict(zip(SCENARIOS, (old[0], cold[0], on_disk, warm), strict=True))
    expected = {"old path": "file", "cold": "file", "cold, copy on disk": "converted copy", "warm": "memory"}
    for scenario, row in rows.items():
        if row["loaded_from"] != expected[scenario]:
            raise SystemExit(
                f"{scenario}: the model came from {row['loaded_from']}, not {expected[scenario]}"
            )
    if len({(r["predictions"], r["correct"]) for r in rows.values()}) != 1:
        raise SystemExit("the runs' predictions differ: " + json.dumps(rows))
    return rows


def print_table(rounds: list[dict[str, dict[str, Any]]]) -> None:
    """The median of every scenario over the rounds, as a Markdown table."""
    print()
    print(f"WSC273 partial run with SmolLM2-135M-Instruct (Q4_1 GGUF), {len(rounds)} round(s), median")
    print(
        f"| {'run':<18} | {'start to results':>16} | {'loading the model':>17} "
        f"| {'scoring and metrics':>19} | {'the rest (start to results - scoring)':>37} "
        f"| {'imports at worker start':>23} |"
    )
    print(f"|{'-' * 20}|{'-' * 17}:|{'-' * 18}:|{'-' * 20}:|{'-' * 38}:|{'-' * 24}:|")
    for scenario in SCENARIOS:
        runs = [r[scenario] for r in rounds]

        def median(value: Callable[[dict[str, Any]], float], runs: list[dict[str, Any]] = runs) -> float:
            return statistics.median(value(r) for r in runs)

        print(
            f"| {scenario:<18} | {median(lambda r: r['seconds']):>14.1f} s"
            f" | {median(lambda r: r['load']):>15.1f} s | {median(lambda r: r['scoring']):>17.1f} s"
            f" | {median(lambda r: r['seconds'] - r['scoring']):>35.1f} s"
            f" | {imports(runs):>23} |"
        )


def imports(runs: list[dict[str, Any]]) -> str:
    seconds = [r["imported_at_start"] for r in runs if r.get("imported_at_start") is not None]
    return f"{statistics.median(seconds):.1f} s" if seconds else "-"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--threads", type=int, default=None, help="torch threads per run (default: all cores)"
    )
    parser.add_argument("--rounds", type=int, default=1, help="repeat every scenario N times (default 1)")
    parser.add_argument("--keep", default=None, help="set the scratch site up in DIR and keep it")
    parser.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        return worker(args.worker, args.threads)

    from evaluation.lm.modeling import SMOLLM2_INSTALL_HINT, smollm2_path

    if smollm2_path() is None:
        print(f"SmolLM2 is not installed: {SMOLLM2_INSTALL_HINT}", file=sys.stderr)
        return 2
    if not (data_dir() / "winowhy" / "winowhy.json").exists():
        print(f"no WinoWhy in {data_dir()}: set WINNOW_DATA_DIR to the public data sets", file=sys.stderr)
        return 2
    scratch = None if args.keep else tempfile.TemporaryDirectory(prefix="winnow-run-latency-")
    site = Path(args.keep or scratch.name)  # type: ignore[union-attr]
    site.mkdir(parents=True, exist_ok=True)
    try:
        seconds = publish_wsc273(site)
        load = os.getloadavg()
        done = f"imported and published in {seconds:.1f} s" if seconds else "published already (--keep)"
        print(f"scratch site {site}: {RELEASE} {done}")
        print(f"{os.cpu_count()} cores; load average before: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}")
        rounds = []
        for n in range(args.rounds):
            rows = one_round(site, n, args.threads)
            rounds.append(rows)
            first = next(iter(rows.values()))
            print(
                f"round {n + 1}: "
                + "; ".join(f"{s} {r['seconds']:.1f} s" for s, r in rows.items())
                + f" ({first['correct']}/{first['total']} right in every run, predictions identical,"
                f" {first['threads']} threads, {first['kernels']} kernels, {first['products']} products)"
            )
        print_table(rounds)
        load = os.getloadavg()
        print(f"load average after: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}")
    finally:
        if scratch is not None:
            scratch.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
