"""Crowd entry load test (issue 14): participants arriving through a study link.

    DATABASE_URL=postgres://winnow:winnow@127.0.0.1:5432/winnow_bench \\
        .venv/bin/python bench/crowd_entry.py [--participants 200] [--arrival 60] [--think 3] \\
        [--potato ../potato-venv/bin/python]

What it does, from nothing:
1. drops and creates the database named in DATABASE_URL (PostgreSQL, its name containing
   "bench"), migrates it, makes a switchability campaign (synthetic schemas, K=3) and opens
   it to Prolific with a batch of --batch items per participant;
2. starts the app with gunicorn (gthread workers, config/gunicorn.conf.py) on 127.0.0.1;
3. --participants simulated people arrive at random moments over --arrival seconds, each
   on a connection of its own from a loopback address of its own (127.1.x.y: entry is
   rate limited per address), as a browser with htmx would: follow the link with a
   Prolific id to its landing page, press its button (*entry*: the POST that creates the
   participant and signs them in), read the consent and agree, Start (*next*: the first item
   leased), then think (uniform between half and one and a half times --think) and
   answer, which records the answer and leases the next item (*submit*), until their batch
   is done and the page sends them to the completion code. Every tenth participant
   follows the link a second time midway, from another tab of the same browser (a second
   entry under the same id: it must resume, not create; a new browser would be refused,
   since a participant is bound to the browser of their first entry);
4. prints p50/p95/max of entry, next and submit, errors, and checks the database: one
   participant and one account per id, no item past K, no annotator twice on an item, as
   many judgments as answers recorded; compares each p95 with the target (150 ms);
5. with --potato PYTHON, the reference tool in the same run: the same crowd (the same ids,
   addresses, arrival moments, think times and answers) on Potato 2.12.1, started with
   that python (Potato's own virtual environment) on --potato-port, then a second block of
   the same figures and a check of Potato's output files: a user per participant, each
   consented, as many annotations stored as answers sent, no item past K, nobody past
   their batch. bench/potato_reference.py says which requests are timed, what is matched
   and what differs.

The annotator API's load bench (bench/annotation_load.py) is the same work without the
study's pages.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from annotation_load import (  # noqa: E402
    Client,
    bench_database,
    create_campaign,
    db_check,
    percentile,
    start_server,
)
from crowd_common import Stats, prolific_query, second_entry, study_enter  # noqa: E402

TARGET_P95_MS = 150.0
ASSIGNMENT = re.compile(rb'name="assignment" value="(\d+)"')


def setup(participants: int, batch: int, k: int) -> tuple[str, str]:
    """The campaign and its Prolific link: (campaign name, the link's path)."""
    from django.contrib.auth.models import Group, User

    from annotation.crowd.services import study_link_create, study_link_token
    from core.roles import Role

    campaign = create_campaign("crowd-bench", participants * batch // k + 50, k)
    curator = User.objects.create_user("bench-curator")
    curator.groups.add(Group.objects.get_or_create(name=Role.CURATOR.value)[0])
    link = study_link_create(
        campaign=campaign, platform="prolific", consent="bench", batch_size=batch, user=curator
    )
    return campaign.name, f"/study/{study_link_token(link)}/"


def _htmx(client: Client, path: str, form: dict[str, str]) -> tuple[int, bytes, Client]:
    body = urllib.parse.urlencode(form).encode()
    status, data = client.request(
        "POST",
        path,
        body,
        {
            "Content-Type": "application/x-www-form-urlencoded",
            "HX-Request": "true",
            "X-CSRFToken": client.cookies.get("csrftoken", ""),
            "Referer": f"http://127.0.0.1:{client.port}{path}",
        },
    )
    return status, data, client


def participant(
    port: int,
    link: str,
    campaign: str,
    pid: str,
    address: str,
    arrive_at: float,
    think: float,
    reenter: bool,
    stats: Stats,
) -> None:
    rng = random.Random(pid)
    one = Stats()
    query = prolific_query(pid)
    time.sleep(max(0.0, arrive_at - time.monotonic()))
    client = Client(port, source=address)
    try:
        status, elapsed = study_enter(client, f"{link}?{query}")
        one.entry_ms.append(elapsed)
        if status != 302:
            raise RuntimeError(f"entry: HTTP {status}")
        status, html = client.request("GET", f"{link}consent/")
        if status != 200:
            raise RuntimeError(f"consent page: HTTP {status}")
        status, _, _ = _htmx(client, f"{link}consent/", {"agree": "yes"})
        if status not in (200, 302):
            raise RuntimeError(f"consent: HTTP {status}")
        page = f"/annotation/campaigns/{campaign}/"
        t0 = time.perf_counter()
        status, data, _ = _htmx(client, page, {"start": "1"})
        one.next_ms.append((time.perf_counter() - t0) * 1000)
        n = 0
        while True:
            if status != 200:
                raise RuntimeError(f"item: HTTP {status}")
            match = ASSIGNMENT.search(data)
            if match is None:  # nothing left for them before their batch was full
                break
            n += 1
            if reenter and n == 3:
                second_entry(port, address, f"{link}?{query}", one, cookies=dict(client.cookies))
            time.sleep(rng.uniform(0.5 * think, 1.5 * think))
            t0 = time.perf_counter()
            status, data, _ = _htmx(
                client,
                page,
                {
                    "assignment": match.group(1).decode(),
                    "answer": "switchable" if n % 2 else "not_switchable",
                    "duration_ms": "2000",
                },
            )
            elapsed = (time.perf_counter() - t0) * 1000
            if status == 204:  # HX-Redirect: the batch is done, on to the completion code
                one.submit_ms.append(elapsed)
                one.answers += 1
                one.finished += 1
                break
            one.submit_ms.append(elapsed)
            one.answers += int(status == 200)
    except Exception as exc:  # noqa: BLE001 - counted and reported
        one.errors.append(f"{pid}: {exc}")
    stats.add(one)


def _address(i: int) -> str:
    """Participant i's own loopback address (127.0.0.2 onwards): people reach a study from
    their own addresses, and entry is rate limited per address (60 a minute)."""
    return f"127.1.{i // 250 % 250}.{i % 250 + 2}"


def crowd_check(campaign: str) -> dict[str, int]:
    """The annotation bench's database check (judgments, items past K, double pairs) and
    the participants: one participant and one account per id."""
    from django.contrib.auth.models import User

    from annotation.models import Participant

    return {
        **db_check(campaign),
        "participants": Participant.objects.count(),
        "distinct_ids": Participant.objects.values("external_id").distinct().count(),
        "accounts": User.objects.filter(username__startswith="p").count(),
    }


def crowd(
    target: Callable[[str, str, float, bool, Stats], None], participants: int, arrival: float, timeout: float
) -> tuple[Stats, float]:
    """The crowd, the same on every server: participant i is BENCH{i:04d} from _address(i),
    arrives at a moment drawn from one seeded generator, and every tenth enters twice.
    Calls target(pid, address, arrive_at, reenter, stats) on a thread of its own for each;
    returns the stats and the seconds it all took."""
    stats = Stats()
    rng = random.Random(7)
    start = time.monotonic() + 1.0
    arrivals = sorted(start + rng.uniform(0, arrival) for _ in range(participants))
    threads = [
        threading.Thread(
            target=target, args=(f"BENCH{i:04d}", _address(i), at, i % 10 == 0, stats), daemon=True
        )
        for i, at in enumerate(arrivals)
    ]
    began = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=timeout)
    return stats, time.monotonic() - began


def print_latencies(stats: Stats, participants: int) -> float:
    """The p50/p95/max lines of entry, next and submit and the answers line; returns the
    worst p95."""
    worst = 0.0
    for name, values in (("entry", stats.entry_ms), ("next", stats.next_ms), ("submit", stats.submit_ms)):
        p95 = percentile(values, 95)
        worst = max(worst, p95)
        print(
            f"{name:>7}: n={len(values):>5}  p50 {percentile(values, 50):7.1f} ms  p95 {p95:7.1f} ms  "
            f"max {max(values) if values else float('nan'):7.1f} ms"
        )
    print(
        f"answers {stats.answers}, finished {stats.finished} of {participants}, second entries "
        f"{stats.reentries}, errors {len(stats.errors)}"
    )
    for e in sorted(set(stats.errors))[:10]:
        print(f"      error: {e}")
    return worst


def run_potato(args: argparse.Namespace) -> bool:
    """The same crowd on Potato (bench/potato_reference.py), then its block of figures and
    the check of its output files; True if the check passes with no errors."""
    import potato_reference

    items = args.participants * args.batch // args.k + 50  # as many as Winnow's campaign
    print(f"\nPotato: starting {args.potato} on port {args.potato_port} ...", flush=True)
    server = potato_reference.start(
        args.potato, items, args.batch, args.k, args.potato_port, args.potato_threads
    )
    print(
        f"Potato: {args.participants} participants arriving over {args.arrival:g} s, think {args.think:g} s, "
        f"batch {args.batch} ...",
        flush=True,
    )
    try:
        stats, elapsed = crowd(
            lambda pid, address, at, reenter, stats: potato_reference.participant(
                args.potato_port, pid, address, at, args.think, reenter, stats
            ),
            args.participants,
            args.arrival,
            args.arrival + args.batch * args.think * 3 + 120,
        )
    finally:
        server.stop()
    out = potato_reference.output_check(server.task_dir, args.k, args.batch)
    print()
    print(
        f"Potato 2.12.1, {server.kind} on {os.cpu_count()} cores, state in memory and JSON files; "
        f"{elapsed:.0f} s in all; load average {os.getloadavg()[0]:.1f} at the end"
    )
    worst = print_latencies(stats, args.participants)
    ok = (
        out["users"] == out["consented"] == args.participants
        and out["strangers"] == 0
        and out["items_past_k"] == 0
        and out["over_batch"] == 0
        and out["annotations"] == stats.answers
    )
    print(
        f"output check: {'ok' if ok else 'FAILED'} ({out['users']} users, {out['consented']} consented, "
        f"{out['annotations']} annotations stored, {out['items_past_k']} items past K, "
        f"{out['over_batch']} users past the batch, {out['strangers']} users not a participant id)"
    )
    print(f"worst p95 {worst:.1f} ms (Winnow's target {TARGET_P95_MS:.0f} ms)")
    if ok and not stats.errors:
        shutil.rmtree(server.task_dir)
        return True
    print(f"Potato's task directory, output and log kept in {server.task_dir}")
    return False


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--participants", type=int, default=200)
    parser.add_argument("--arrival", type=float, default=60.0, help="seconds over which participants arrive")
    parser.add_argument("--think", type=float, default=3.0, help="mean seconds on an item")
    parser.add_argument("--batch", type=int, default=10, help="items per participant")
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument(
        "--potato",
        metavar="PYTHON",
        help="then the same crowd on Potato, the reference tool, run with this python (its own venv)",
    )
    parser.add_argument("--potato-port", type=int, default=8797)
    parser.add_argument(
        "--potato-threads", type=int, default=8, help="threads of Potato's one gunicorn worker"
    )
    args = parser.parse_args()
    bench_database()
    campaign, link = setup(args.participants, args.batch, args.k)
    server = start_server(args.port, args.workers, args.threads)
    print(
        f"{args.participants} participants arriving over {args.arrival:g} s, think {args.think:g} s, "
        f"batch {args.batch} ...",
        flush=True,
    )
    try:
        stats, elapsed = crowd(
            lambda pid, address, at, reenter, stats: participant(
                args.port, link, campaign, pid, address, at, args.think, reenter, stats
            ),
            args.participants,
            args.arrival,
            args.arrival + args.batch * args.think * 3 + 120,
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
    db = crowd_check(campaign)
    print()
    print(
        f"gunicorn gthread {args.workers} workers x {args.threads} threads on {os.cpu_count()} cores, PostgreSQL; "
        f"{elapsed:.0f} s in all; load average {os.getloadavg()[0]:.1f} at the end"
    )
    worst = print_latencies(stats, args.participants)
    db_ok = (
        db["participants"] == db["distinct_ids"] == db["accounts"] == args.participants
        and db["items_past_k"] == 0
        and db["double_pairs"] == 0
        and db["judgments"] == stats.answers
    )
    print(
        f"db check: {'ok' if db_ok else 'FAILED'} ({db['participants']} participants, {db['accounts']} accounts, "
        f"{db['judgments']} judgments, {db['items_past_k']} items past K, {db['double_pairs']} double pairs)"
    )
    verdict = "meets" if worst < TARGET_P95_MS else "MISSES"
    print(
        f"target p95 < {TARGET_P95_MS:.0f} ms for entry, next and submit: worst {worst:.1f} ms, {verdict} the target"
    )
    ok = db_ok and not stats.errors
    if args.potato:
        ok = run_potato(args) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
