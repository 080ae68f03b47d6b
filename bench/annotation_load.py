"""Load test of the annotator API: N simulated annotators over HTTP on loopback.

    DATABASE_URL=postgres://winnow:winnow@127.0.0.1:5432/winnow_bench \
        .venv/bin/python bench/annotation_load.py [--annotators 20 100] [--seconds 20]

What it does, from nothing:
1. drops and creates the database named in DATABASE_URL (it must be PostgreSQL and its
   name must contain "bench", so that no real database is ever dropped), migrates it,
   creates the annotators and one switchability campaign per run (synthetic schemas, K=3);
2. starts the app with gunicorn (gthread workers) on 127.0.0.1;
3. for each N: N threads, each logs in through the login form (session cookie + CSRF),
   then loops POST next-item / POST submit on /api/annotation/ for --seconds;
4. prints p50/p95/max latency of next-item and submit, judgments per second and errors,
   checks the database afterwards (no item past K, no annotator twice on an item, as many
   judgments as successful submits) and compares p95 with the target (150 ms at N=100).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import subprocess
import sys
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TARGET_P95_MS = 150.0


@dataclass
class Stats:
    next_ms: list[float] = field(default_factory=list)
    submit_ms: list[float] = field(default_factory=list)
    judgments: int = 0
    warmup: int = 0
    repeats: int = 0
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


# --- database setup ---------------------------------------------------------------------


def fresh_database(url: str) -> None:
    import psycopg

    parsed = urllib.parse.urlparse(url)
    name = parsed.path.lstrip("/")
    if "bench" not in name:
        sys.exit(f"refusing to drop database {name!r}: the bench database name must contain 'bench'")
    admin = parsed._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (name,),
        )
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, check=True)


def bench_database() -> None:
    """The PostgreSQL database named by DATABASE_URL, dropped, created and migrated, and
    Django set up on it (a load bench's start; the name must contain "bench")."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        sys.exit(
            "set DATABASE_URL=postgres://USER:PASS@127.0.0.1:5432/winnow_bench (a database the bench may drop)"
        )
    print(f"fresh database {urllib.parse.urlparse(url).path.lstrip('/')} ...", flush=True)
    fresh_database(url)
    setup_django()


def setup_django() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def create_annotators(n: int) -> list[tuple[str, str]]:
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import Group, User

    from core.roles import Role

    group, _ = Group.objects.get_or_create(name=Role.ANNOTATOR.value)
    password = "bench-password"
    hashed = make_password(password)
    existing = set(User.objects.filter(username__startswith="bench").values_list("username", flat=True))
    new = [
        User(username=f"bench{i:03d}", password=hashed) for i in range(n) if f"bench{i:03d}" not in existing
    ]
    User.objects.bulk_create(new)
    users = list(User.objects.filter(username__startswith="bench").order_by("username")[:n])
    group.user_set.add(*users)
    return [(u.username, password) for u in users]


def create_campaign(name: str, items: int, k: int) -> Any:
    """A switchability campaign ``name`` (K = ``k``) over ``items`` new synthetic schemas
    of the collection ``name``."""
    from annotation.services import campaign_create
    from datasets.models import Schema

    start = Schema.objects.count()
    Schema.objects.bulk_create(
        Schema(
            collection=name,
            external_id=str(i),
            text_before=f"The trophy number {i} doesn't fit into the suitcase because",
            pronoun="it",
            text_after="is too large.",
            candidate_a="the trophy",
            candidate_b="the suitcase",
            answer="A",
            source_file="bench",
            source_row=start + i + 1,
            file_checksum="",
        )
        for i in range(items)
    )
    return campaign_create(
        name=name, task="switchability", items="schemas", filters={"collection": name}, k=k
    )


def db_check(name: str) -> dict[str, int]:
    from django.db.models import Count

    from annotation.models import Campaign, CampaignItem, Judgment

    campaign = Campaign.objects.get(name=name)
    k = campaign.judgments_per_item
    items = CampaignItem.objects.filter(campaign=campaign)
    over = items.filter(judgment_count__gt=k).count()
    pairs = (
        Judgment.objects.filter(campaign_item__campaign=campaign)
        .values("campaign_item", "annotator")
        .annotate(n=Count("pk"))
        .filter(n__gt=1)
        .count()
    )
    judgments = Judgment.objects.filter(campaign_item__campaign=campaign).count()
    counted = sum(items.values_list("judgment_count", flat=True))
    return {"judgments": judgments, "counted": counted, "items_past_k": over, "double_pairs": pairs}


# --- HTTP client ------------------------------------------------------------------------


class Client:
    """One annotator: a keep-alive connection with its session and CSRF cookies."""

    def __init__(self, port: int, source: str | None = None) -> None:
        self.port = port
        # ``source``: the loopback address this client connects from (127.x.y.z), so that
        # simulated people each have their own address, as they would on the internet
        self.source = (source, 0) if source else None
        self.conn = self._connect()
        self.cookies: dict[str, str] = {}

    def _connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=60, source_address=self.source)

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
        h = {"Host": f"127.0.0.1:{self.port}", **(headers or {})}
        if self.cookies:
            h["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        for attempt in range(2):
            try:
                self.conn.request(method, path, body=body, headers=h)
                response = self.conn.getresponse()
                data = response.read()
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # a keep-alive connection closed by the server: reconnect once
                self.conn.close()
                self.conn = self._connect()
                if attempt:
                    raise
        for header, value in response.getheaders():
            if header.lower() == "set-cookie":
                key, _, rest = value.partition("=")
                self.cookies[key.strip()] = rest.split(";", 1)[0]
        return response.status, data

    def login(self, username: str, password: str) -> None:
        status, html = self.request("GET", "/accounts/login/")
        match = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', html)
        if status != 200 or not match:
            raise RuntimeError(f"login page: HTTP {status}")
        form = urllib.parse.urlencode(
            {"username": username, "password": password, "csrfmiddlewaretoken": match.group(1).decode()}
        ).encode()
        status, _ = self.request(
            "POST",
            "/accounts/login/",
            form,
            {
                "Content-Type": "application/x-www-form-urlencoded",
                "Referer": f"http://127.0.0.1:{self.port}/accounts/login/",
            },
        )
        if status != 302 or "sessionid" not in self.cookies:
            raise RuntimeError(f"login as {username}: HTTP {status}")

    def api(self, path: str, payload: dict | None = None) -> tuple[int, dict]:
        body = json.dumps(payload or {}).encode()
        status, data = self.request(
            "POST",
            path,
            body,
            {
                "Content-Type": "application/json",
                "X-CSRFToken": self.cookies.get("csrftoken", ""),
                "Referer": f"http://127.0.0.1:{self.port}/",
            },
        )
        try:
            return status, json.loads(data or b"{}")
        except ValueError:
            return status, {"detail": data[:200].decode(errors="replace")}


def annotator_loop(
    client: Client,
    campaign: str,
    clock: dict[str, float],
    start: threading.Barrier,
    stats: Stats,
    resend_every: int,
    think: float,
    seed: int,
    stagger: bool = True,
) -> None:
    rng = random.Random(seed)
    # Warm-up, not measured: the first request of a session opens the server thread's
    # database connection and creates the annotator's campaign membership.
    status, body = client.api(f"/api/annotation/campaigns/{campaign}/next/")
    warm_judgments = 0
    if status == 200 and body.get("assignment"):
        status, result = client.api(
            f"/api/annotation/assignments/{body['assignment']}/submit/", {"answer": "switchable"}
        )
        warm_judgments = int(status == 200 and result.get("created", False))
    start.wait()
    if stagger and think > 0:
        # A crowd does not click in unison: each annotator starts at a random moment
        # within one think time (--no-stagger sends all first requests at once).
        time.sleep(rng.uniform(0, think))
    n = 0
    next_ms: list[float] = []
    submit_ms: list[float] = []
    errors: list[str] = []
    judged = repeats = 0
    while time.monotonic() < clock["stop"]:
        t0 = time.perf_counter()
        status, body = client.api(f"/api/annotation/campaigns/{campaign}/next/")
        next_ms.append((time.perf_counter() - t0) * 1000)
        if status != 200:
            errors.append(f"next: HTTP {status} {body.get('detail', '')}")
            continue
        if body.get("assignment") is None:
            break  # campaign full for this annotator
        n += 1
        if think > 0:  # reading and deciding: uniform between half and one and a half times the mean
            time.sleep(rng.uniform(0.5 * think, 1.5 * think))
        answer = {"answer": "switchable" if n % 2 else "not_switchable", "duration_ms": 1000}
        path = f"/api/annotation/assignments/{body['assignment']}/submit/"
        t0 = time.perf_counter()
        status, result = client.api(path, answer)
        submit_ms.append((time.perf_counter() - t0) * 1000)
        if status != 200:
            errors.append(f"submit: HTTP {status} {result.get('detail', '')}")
            continue
        judged += int(result.get("created", False))
        if resend_every and n % resend_every == 0:  # a resend after a timeout: must not count twice
            status, again = client.api(path, answer)
            if status != 200 or again.get("created") or again.get("judgment") != result.get("judgment"):
                errors.append(f"resend: HTTP {status} {again}")
            repeats += 1
    with stats.lock:
        stats.next_ms += next_ms
        stats.submit_ms += submit_ms
        stats.errors += errors
        stats.judgments += judged
        stats.warmup += warm_judgments
        stats.repeats += repeats


# --- driver -----------------------------------------------------------------------------


def start_server(port: int, workers: int, threads: int, worker_class: str = "gthread") -> subprocess.Popen:
    env = {**os.environ, "DEBUG": "false", "LOG_LEVEL": "ERROR"}
    cmd = [
        str(Path(sys.executable).parent / "gunicorn"),
        "--config",
        "config/gunicorn.conf.py",
        "--bind",
        f"127.0.0.1:{port}",
        "--worker-class",
        worker_class,
        "--workers",
        str(workers),
        *(["--threads", str(threads)] if worker_class == "gthread" else []),
        "--keep-alive",
        "30",
        "--backlog",
        "2048",
        "--log-level",
        "warning",
    ]
    if os.environ.get("WINNOW_BENCH_ACCESS_LOG"):  # server-side request times, for diagnosis
        cmd += [
            "--access-logfile",
            os.environ["WINNOW_BENCH_ACCESS_LOG"],
            "--access-logformat",
            "%(r)s %(s)s %(M)s",
        ]
    server = subprocess.Popen(cmd, cwd=ROOT, env=env)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/accounts/login/")
            if conn.getresponse().status == 200:
                return server
        except OSError:
            time.sleep(0.3)
    server.terminate()
    raise SystemExit("gunicorn did not come up")


def login_all(port: int, users: list[tuple[str, str]], parallel: int = 4) -> list[Client]:
    """Log every annotator in before measuring (password hashing is deliberately slow)."""
    clients = [Client(port) for _ in users]
    errors: list[str] = []

    def work(chunk: list[int]) -> None:
        for i in chunk:
            try:
                clients[i].login(*users[i])
            except Exception as exc:  # noqa: BLE001 - reported
                errors.append(f"{users[i][0]}: {exc}")

    threads = [
        threading.Thread(target=work, args=(list(range(k, len(users), parallel)),)) for k in range(parallel)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise SystemExit(f"login failed: {errors[:5]}")
    return clients


def run(
    n: int,
    clients: list[Client],
    seconds: float,
    items: int,
    k: int,
    resend_every: int,
    think: float,
    stagger: bool = True,
) -> dict:
    name = f"bench-n{n}"
    create_campaign(name, items, k)
    stats = Stats()
    start = threading.Barrier(n + 1)
    clock = {"stop": float("inf")}  # set once everybody is ready
    threads = [
        threading.Thread(
            target=annotator_loop,
            args=(client, name, clock, start, stats, resend_every, think, i, stagger),
            daemon=True,
        )
        for i, client in enumerate(clients[:n])
    ]
    for t in threads:
        t.start()  # each waits at the barrier
    start.wait()
    begin = time.monotonic()
    clock["stop"] = begin + seconds
    for t in threads:
        t.join(timeout=seconds + 120)
    elapsed = time.monotonic() - begin
    return {
        "n": n,
        "next_p50": percentile(stats.next_ms, 50),
        "next_p95": percentile(stats.next_ms, 95),
        "submit_p50": percentile(stats.submit_ms, 50),
        "submit_p95": percentile(stats.submit_ms, 95),
        "judgments": stats.judgments,
        "warmup": stats.warmup,
        "load": os.getloadavg()[0],  # the machine's 1-minute load average at the end of the run
        "repeats": stats.repeats,
        "per_second": stats.judgments / elapsed if elapsed else 0.0,
        "seconds": elapsed,
        "errors": stats.errors,
        "db": db_check(name),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--annotators", nargs="+", type=int, default=[20, 100])
    parser.add_argument("--seconds", type=float, default=20.0, help="measured time per N")
    parser.add_argument("--items", type=int, default=4000, help="items per campaign (K=3 each)")
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=4, help="threads per gthread worker")
    parser.add_argument(
        "--worker-class",
        default="gthread",
        choices=["gthread", "sync"],
        help="gunicorn worker class (sync: one request per process at a time, no keep-alive)",
    )
    parser.add_argument(
        "--think",
        type=float,
        default=3.0,
        help="mean seconds an annotator spends on an item before submitting (0: hammer the server)",
    )
    parser.add_argument("--resend-every", type=int, default=5, help="resend every n-th submit (0: never)")
    parser.add_argument(
        "--no-stagger",
        action="store_true",
        help="all annotators send their first request at the same instant (a burst of N requests)",
    )
    args = parser.parse_args()
    bench_database()
    users = create_annotators(max(args.annotators))
    server = start_server(args.port, args.workers, args.threads, args.worker_class)
    results = []
    try:
        print(f"logging {len(users)} annotators in ...", flush=True)
        clients = login_all(args.port, users)
        for n in args.annotators:
            print(f"N={n}: {args.seconds:.0f} s of next/submit ...", flush=True)
            results.append(
                run(
                    n,
                    clients,
                    args.seconds,
                    args.items,
                    args.k,
                    args.resend_every,
                    args.think,
                    stagger=not args.no_stagger,
                )
            )
    finally:
        server.terminate()
        server.wait(timeout=30)

    print()
    print(
        f"gunicorn gthread {args.workers} workers x {args.threads} threads on {os.cpu_count()} cores, PostgreSQL; "
        f"think time {args.think:g} s mean; {args.seconds:g} s measured per N after a warm-up request"
    )
    print(
        f"{'N':>4} {'next p50':>9} {'next p95':>9} {'submit p50':>11} {'submit p95':>11} {'judg/s':>8} {'errors':>7} {'load':>5}  db check"
    )
    ok = True
    for r in results:
        db = r["db"]
        db_ok = (
            db["items_past_k"] == 0
            and db["double_pairs"] == 0
            and db["judgments"] == r["judgments"] + r["warmup"]
            and db["counted"] == db["judgments"]
        )
        ok &= db_ok and not r["errors"]
        print(
            f"{r['n']:>4} {r['next_p50']:>7.1f}ms {r['next_p95']:>7.1f}ms {r['submit_p50']:>9.1f}ms "
            f"{r['submit_p95']:>9.1f}ms {r['per_second']:>8.1f} {len(r['errors']):>7} {r['load']:>5.1f}  "
            f"{'ok' if db_ok else 'FAILED'} ({db['judgments']} judgments, {r['repeats']} resends, "
            f"{db['items_past_k']} items past K, {db['double_pairs']} double pairs)"
        )
        for e in sorted(set(r["errors"]))[:10]:
            print(f"      error: {e}")
    largest = max(results, key=lambda r: r["n"])
    worst = max(largest["next_p95"], largest["submit_p95"])
    verdict = "meets" if worst < TARGET_P95_MS else "MISSES"
    print(
        f"target p95 < {TARGET_P95_MS:.0f} ms at N={largest['n']}: worst p95 {worst:.1f} ms, {verdict} the target"
    )
    print("load = 1-minute load average of the machine (other processes included) at the end of each run")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
