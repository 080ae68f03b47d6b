"""Benchmark: import ComVE train (10,000 items, six CSV files) into a fresh database.

    python bench/import_bench.py                      # SQLite (a fresh file in a temp folder)
    DATABASE_URL=postgres://winnow:winnow@127.0.0.1:5432/winnow_x python bench/import_bench.py
                                                      # SQLite, then PostgreSQL in a fresh
                                                      # database <name>_bench that it drops after

For each database it prints the wall time and peak memory of Winnow's importer
(``dataset_import``: parse and check everything, then bulk writes), of a second,
idempotent run of the same files, and of a naive reference in the same run: a plain
``csv`` parse and join followed by one ``ComVEItem.objects.create`` per row inside one
transaction. Peak memory is tracemalloc's peak (Python allocations) in a separate traced
run, so that tracing does not slow the timed one; ru_maxrss is the process's peak RSS.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[1]


def data_folder() -> Path:
    base = Path(os.environ.get("WINNOW_DATA_DIR", ROOT.parent / "shared" / "data"))
    folder = base / "comve" / "train"
    if not (folder / "subtaskA_data_all.csv").exists():
        sys.exit(f"ComVE train not found in {folder}; set WINNOW_DATA_DIR")
    return folder


def naive_import(folder: Path) -> int:
    """The reference: what one writes first. csv module, dicts, one INSERT per item."""
    from django.db import transaction

    from datasets.models import ComVEItem

    def rows(name: str, header: bool) -> list[list[str]]:
        with open(folder / name, encoding="utf-8", newline="") as f:
            data = list(csv.reader(f))
        return data[1:] if header else data

    a = {r[0]: r for r in rows("subtaskA_data_all.csv", True)}
    a_ans = {r[0]: r[1] for r in rows("subtaskA_answers_all.csv", False)}
    b = {r[0]: r for r in rows("subtaskB_data_all.csv", True)}
    b_ans = {r[0]: r[1] for r in rows("subtaskB_answers_all.csv", False)}
    c_refs = {r[0]: [x for x in r[1:] if x] for r in rows("subtaskC_answers_all.csv", False)}
    n = 0
    with transaction.atomic():
        for row_number, (identifier, (_, s0, s1)) in enumerate(a.items(), start=1):
            false_index = int(a_ans[identifier])
            _, false_sent, oa, ob, oc = b[identifier]
            ComVEItem.objects.create(
                dataset="comve",
                split="train",
                external_id=identifier,
                statement_0=s0,
                statement_1=s1,
                false_index=false_index,
                false_statement=false_sent,
                option_a=oa,
                option_b=ob,
                option_c=oc,
                correct_option=b_ans[identifier],
                references=c_refs[identifier],
                has_a=True,
                has_b=True,
                has_c=True,
                source_file="subtaskA_data_all.csv",
                source_row=row_number,
                file_checksum="",
            )
            n += 1
    return n


def measure(fn: Callable[[], Any], *, traced: bool) -> tuple[float, float | None, Any]:
    if traced:
        tracemalloc.start()
    start = time.perf_counter()
    value = fn()
    seconds = time.perf_counter() - start
    peak = None
    if traced:
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return seconds, peak, value


def maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def child(backend: str) -> dict[str, Any]:
    """Runs in its own process, with the environment set for one database."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from datasets.models import ComVEItem
    from datasets.services import dataset_import

    folder = data_folder()
    call_command("migrate", verbosity=0)

    def ours() -> Any:
        return dataset_import(format="comve", paths=[folder])

    def clear() -> None:
        ComVEItem.objects.filter(dataset="comve", split="train").delete()
        from datasets.models import ImportBatch

        ImportBatch.objects.all().delete()

    out: dict[str, Any] = {"backend": backend}
    seconds, _, result = measure(ours, traced=False)
    assert result.created == 10000, result.describe()
    out["winnow_first_s"] = seconds
    out["rss_after_winnow_mb"] = maxrss_mb()
    seconds, _, again = measure(ours, traced=False)
    assert again.created == 0 and again.unchanged == 10000, again.describe()
    out["winnow_second_s"] = seconds
    clear()
    _, out["winnow_peak_mb"], _ = measure(ours, traced=True)
    clear()
    seconds, _, n = measure(lambda: naive_import(folder), traced=False)
    assert n == 10000
    out["naive_s"] = seconds
    clear()
    _, out["naive_peak_mb"], _ = measure(lambda: naive_import(folder), traced=True)
    out["rss_end_mb"] = maxrss_mb()
    return out


def run_child(backend: str, env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", backend],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"{backend} run failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def postgres_scratch(url: str) -> tuple[str, Callable[[], None]]:
    import psycopg

    parsed = urlparse(url)
    name = parsed.path.lstrip("/") + "_bench"
    admin = parsed._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')

    def drop() -> None:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')

    return parsed._replace(path="/" + name).geturl(), drop


def report(r: dict[str, Any]) -> None:
    print(f"== {r['backend']}: ComVE train, 10,000 items (six CSV files)")
    print(
        f"  Winnow importer, first run:       {r['winnow_first_s']:6.2f} s   peak {r['winnow_peak_mb']:6.1f} MB (tracemalloc)"
    )
    print(
        f"  Winnow importer, second run:      {r['winnow_second_s']:6.2f} s   (idempotent: 0 created, 10,000 unchanged)"
    )
    print(
        f"  naive csv + create() per row:     {r['naive_s']:6.2f} s   peak {r['naive_peak_mb']:6.1f} MB (tracemalloc)"
    )
    print(f"  naive / Winnow time:              {r['naive_s'] / r['winnow_first_s']:6.1f} x")
    print(
        f"  process peak RSS after first run: {r['rss_after_winnow_mb']:6.0f} MB; at the end {r['rss_end_mb']:.0f} MB"
    )
    verdict = "meets" if r["winnow_first_s"] < 10 else "MISSES"
    print(f"  target < 10 s: {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child)))
        return
    results = []
    with tempfile.TemporaryDirectory(prefix="winnow-bench-") as tmp:
        env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
        env["WINNOW_VAR_DIR"] = tmp
        results.append(run_child("sqlite", env))
    url = os.environ.get("DATABASE_URL", "")
    if url.startswith(("postgres://", "postgresql://")):
        scratch, drop = postgres_scratch(url)
        try:
            results.append(run_child("postgresql", {**os.environ, "DATABASE_URL": scratch}))
        finally:
            drop()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    for r in results:
        report(r)
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
