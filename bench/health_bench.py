"""/health/ under a burst of anonymous callers: the cached up/down answer beside the
detailed one that probes every component on every call (study integrity, item 7).

    REDIS_URL=redis://127.0.0.1:6379/4 .venv/bin/python bench/health_bench.py [--callers 50] [--seconds 5]

A scratch site (SQLite in a temporary folder, migrated) is served by gunicorn (the
project's config/gunicorn.conf.py: gthread, --workers x --threads) with the broker and
cache at REDIS_URL (no Celery worker runs, so a worker ping waits its full timeout, as on
a site whose workers are busy or gone). Two rounds, a fresh server each:

- detail: 127.0.0.1 is a configured monitor address (WINNOW_HEALTH_DETAIL_ADDRESSES), so
  every call probes the database, the cache, the broker and the workers: what every
  anonymous caller got before;
- anonymous: the same calls get ``{"ok": ...}`` from the per-process cache
  (WINNOW_HEALTH_CACHE seconds).

In each round --callers threads call /health/ in a loop for --seconds while one more thread
loads the sign-in page; it prints /health/ p50/p95/max, calls answered, the sign-in page's
p50/max during the burst (and alone before it), and checks that no anonymous body names a
worker or a host. Figures are for a shared machine: report `uptime` beside them.
"""

from __future__ import annotations

import argparse
import http.client
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from annotation_load import percentile, start_server  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def timed_get(port: int, path: str) -> tuple[float, int, bytes]:
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", path)
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return (time.perf_counter() - started) * 1000, response.status, body


def sign_in_page(port: int, n: int) -> list[float]:
    return [timed_get(port, "/accounts/login/")[0] for _ in range(n)]


def burst(port: int, callers: int, seconds: float) -> tuple[list[float], list[bytes], list[float]]:
    health_ms: list[float] = []
    bodies: set[bytes] = set()
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def caller() -> None:
        mine, seen = [], set()
        while time.monotonic() < stop:
            ms, _, body = timed_get(port, "/health/")
            mine.append(ms)
            seen.add(body)
        with lock:
            health_ms.extend(mine)
            bodies.update(seen)

    threads = [threading.Thread(target=caller) for _ in range(callers)]
    for t in threads:
        t.start()
    time.sleep(min(0.5, seconds / 4))  # the burst is under way
    page_ms: list[float] = []
    while time.monotonic() < stop:
        page_ms.append(timed_get(port, "/accounts/login/")[0])
    for t in threads:
        t.join()
    return health_ms, sorted(bodies), page_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--callers", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    if not os.environ.get("REDIS_URL"):
        sys.exit("set REDIS_URL=redis://127.0.0.1:6379/N (the broker and cache the site uses)")
    with tempfile.TemporaryDirectory(prefix="winnow-health-") as folder:
        os.environ.update({"WINNOW_VAR_DIR": folder, "DATABASE_URL": f"sqlite:///{folder}/site.sqlite3"})
        os.environ.pop("WINNOW_HEALTH_DETAIL_ADDRESSES", None)
        subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, check=True)
        print(
            f"{args.callers} callers for {args.seconds:.0f} s, gunicorn gthread {args.workers} workers x "
            f"{args.threads} threads on {os.cpu_count()} cores, SQLite, Redis broker and cache, no Celery worker"
        )
        for mode, addresses in (("detail (every call probes)", "127.0.0.1"), ("anonymous (cached)", "")):
            os.environ["WINNOW_HEALTH_DETAIL_ADDRESSES"] = addresses
            server = start_server(args.port, args.workers, args.threads)
            try:
                alone = sign_in_page(args.port, 10)
                health_ms, bodies, page_ms = burst(args.port, args.callers, args.seconds)
            finally:
                server.terminate()
                server.wait(timeout=30)
            named = [b for b in bodies if b"worker" in b or b"celery@" in b]
            print(
                f"{mode:28} /health/ calls {len(health_ms):5}  p50 {percentile(health_ms, 50):7.1f} ms  "
                f"p95 {percentile(health_ms, 95):7.1f} ms  max {max(health_ms):7.1f} ms | sign-in page alone "
                f"p50 {percentile(alone, 50):6.1f} ms, during the burst p50 {percentile(page_ms, 50):7.1f} ms "
                f"max {max(page_ms):7.1f} ms | bodies naming a worker: {len(named)} of {len(bodies)} distinct"
            )
            if not addresses and named:
                sys.exit("an anonymous /health/ body named a worker")
    print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")


if __name__ == "__main__":
    main()
