"""Export benchmark: a release of 100,000 synthetic schemas, streamed vs a naive export.

    .venv/bin/python bench/export_bench.py [--items 100000]

Runs on a fresh temporary SQLite database and media folder (set BENCH_DATABASE_URL to
an EMPTY scratch PostgreSQL database to measure there). Each measurement runs in its own
child process so that ru_maxrss (the process's peak resident memory) belongs to it alone:

- streaming: Winnow's export (services.release_export: frozen ReleaseItem payloads read
  with .iterator(chunk_size=2000), every record written and hashed as it is read: the 4
  WSC files, README.md card and manifest.json);
- naive: the reference most code starts with: list(queryset.values()) of every schema,
  then json.dumps of the whole list, written at once.

Each child reports wall time (without tracemalloc), then re-runs with tracemalloc for the
Python heap peak. Target for streaming: under 15 s and under 300 MB.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = "bench-wsc"


def setup_django(var_dir: Path) -> None:
    os.environ["WINNOW_VAR_DIR"] = str(var_dir)
    os.environ["WINNOW_MEDIA_ROOT"] = str(var_dir / "media")
    os.environ.pop("DATABASE_URL", None)
    if os.environ.get("BENCH_DATABASE_URL"):
        os.environ["DATABASE_URL"] = os.environ["BENCH_DATABASE_URL"]
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    # The build queued by release_create goes nowhere: the children measure the export.
    os.environ["CELERY_BROKER_URL"] = "memory://"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def prepare(items: int) -> dict:
    from django.core.management import call_command
    from django.db import transaction

    from datasets.models import Schema
    from releases import services

    call_command("migrate", verbosity=0)
    from releases.models import Release

    if Schema.objects.filter(collection="bench").exists() or Release.objects.filter(name=NAME).exists():
        sys.exit("the database already holds bench rows: use an empty scratch database")
    t0 = time.perf_counter()
    batch = []
    for i in range(items):
        batch.append(
            Schema(
                collection="bench",
                external_id=str(i),
                text_before=f"The trophy number {i} does not fit into the brown suitcase because",
                pronoun="it",
                text_after="is too large.",
                candidate_a="the trophy",
                candidate_b="the suitcase",
                answer="A" if i % 2 else "B",
                source="synthetic",
                switched_text=f"The suitcase number {i} does not fit into the brown trophy because it is too large.",
                switchable=i % 2 == 0,
                associative=i % 7 == 0,
                knowledge_types=["Object", "Property"] if i % 3 else ["Spatial"],
                source_file="bench/synthetic.json",
                source_row=i + 1,
                file_checksum="0" * 64,
            )
        )
        if len(batch) == 5000:
            Schema.objects.bulk_create(batch)
            batch = []
    if batch:
        Schema.objects.bulk_create(batch)
    inserted = time.perf_counter() - t0
    t0 = time.perf_counter()
    with transaction.atomic():  # the build is queued on commit; the children measure it
        release = services.release_create(name=NAME, dataset="wsc", version="1.0.0", collection="bench")
    created = time.perf_counter() - t0
    return {"bulk_create_s": inserted, "release_create_s": created, "items": release.item_count}


def streaming(out: Path) -> None:
    from releases import services
    from releases.models import Release

    release = Release.objects.get(name=NAME, version="1.0.0")
    services.release_export(release=release, out_dir=out)


def naive(out: Path) -> None:
    from datasets.models import Schema

    rows = list(Schema.objects.filter(collection="bench").order_by("id").values())
    text = json.dumps(rows, default=str)
    out.mkdir(parents=True, exist_ok=True)
    (out / "wsc.json").write_text(text, encoding="utf-8")


def child(mode: str, var_dir: Path) -> None:
    setup_django(var_dir)
    function = {"streaming": streaming, "naive": naive}[mode]
    t0 = time.perf_counter()
    function(var_dir / f"out-{mode}-timed")
    seconds = time.perf_counter() - t0
    maxrss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
    tracemalloc.start()
    function(var_dir / f"out-{mode}-traced")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    out_dir = var_dir / f"out-{mode}-timed"
    size = sum(p.stat().st_size for p in out_dir.iterdir())
    print(
        json.dumps(
            {"seconds": seconds, "maxrss_mb": maxrss_mb, "tracemalloc_peak_mb": peak / 2**20, "bytes": size}
        )
    )


def run_child(mode: str, var_dir: Path) -> dict:
    result = subprocess.run(
        [sys.executable, __file__, "--child", mode, "--var-dir", str(var_dir)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    if result.returncode != 0:
        sys.exit(f"{mode} child failed:\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--child", choices=["streaming", "naive"])
    parser.add_argument("--var-dir")
    args = parser.parse_args()
    if args.child:
        child(args.child, Path(args.var_dir))
        return
    with tempfile.TemporaryDirectory(prefix="winnow-bench-") as tmp:
        var_dir = Path(tmp)
        setup_django(var_dir)
        from django.db import connection

        prep = prepare(args.items)
        print(f"database: {connection.vendor}; {prep['items']:,} synthetic schemas")
        print(
            f"bulk_create {prep['bulk_create_s']:.1f} s; release_create (freeze items) {prep['release_create_s']:.1f} s"
        )
        connection.close()
        results = {mode: run_child(mode, var_dir) for mode in ("streaming", "naive")}
        print(f"{'export':<28}{'time s':>8}{'ru_maxrss MB':>14}{'tracemalloc peak MB':>21}{'output MB':>11}")
        labels = {"streaming": "streaming (Winnow, 6 files)", "naive": "naive list()+json.dumps"}
        for mode, r in results.items():
            print(
                f"{labels[mode]:<28}{r['seconds']:>8.2f}{r['maxrss_mb']:>14.1f}"
                f"{r['tracemalloc_peak_mb']:>21.1f}{r['bytes'] / 2**20:>11.1f}"
            )
        s = results["streaming"]
        ok = s["seconds"] < 15 and s["maxrss_mb"] < 300
        print(f"target (streaming < 15 s and < 300 MB): {'met' if ok else 'NOT met'}")
        if os.environ.get("BENCH_DATABASE_URL"):  # leave the scratch database as it was
            from datasets.models import Schema
            from releases.models import Release

            Release.objects.filter(name=NAME).delete()  # a draft: deletable
            Schema.objects.filter(collection="bench").delete()
        # Leave the folders writable so the temporary directory can be removed.
        for path in var_dir.rglob("*"):
            if path.is_file():
                path.chmod(0o644)


if __name__ == "__main__":
    main()
