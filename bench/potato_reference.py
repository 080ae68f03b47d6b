"""The reference tool for crowd entry: Potato (Pei et al., PyPI potato-annotation 2.12.1),
driven by bench/crowd_entry.py with the load it puts on Winnow (--potato PYTHON).

Potato runs in its own virtual environment (PYTHON is that environment's interpreter), from
a task directory this module writes into a temporary directory:
- data.jsonl: as many synthetic sentences as Winnow's campaign has items (participants x
  batch / K + 50, 716 by default), an id and a text each;
- consent.json: one required radio question, "I agree";
- config.yaml (JSON, which is YAML): login type ``prolific`` (PROLIFIC_PID is the user
  name, STUDY_ID and SESSION_ID are kept with the user), the phases consent then
  annotation, one required radio scheme ``switchability`` with the labels "switchable" and
  "not switchable", assignment_strategy fixed_order, max_annotations_per_item K and
  max_annotations_per_user the batch, and a Prolific completion code (the completion page
  shows it, links to Prolific with it and goes there by itself after 5 s).

The server is Potato's production setup as its deploy command writes it: gunicorn with
Potato's WSGI factory (``potato.flask_server:create_app(config)``), one worker (Potato keeps
its state in one process) and --potato-threads threads (8, Potato's default); if gunicorn
is not installed in that environment, ``potato start`` (Flask's threaded development
server) instead, and the report says which.

What a participant sends is what Chromium sends when it goes through this task's pages
(recorded once with Playwright), minus the static files (scripts, style sheets, fonts: a
browser caches them, and Winnow's run does not fetch its own either):
- entry, timed: GET /?PROLIFIC_PID=..&STUDY_ID=..&SESSION_ID=.. (302: the user is created,
  logged in, and given their whole batch);
- the consent page, not timed (Winnow's consent is not timed either): GET / and the two
  requests its script makes (GET /api/colors, GET /pocket/api/routing); choosing "I agree"
  sends POST /api/track_annotation_change and POST /updateinstance;
- next, timed, from the press of Next on the consent page to the first item's page: POST
  /updateinstance (Next saves the page again), POST /annotate {"action": "next_instance"}
  (302), GET / (the fetch follows the redirect: the item page) and GET / (the page itself);
- on every item page, not timed: the eight requests the page's scripts make (colors,
  spans, routing, keyword highlights, schemas, then colors, spans and keyword highlights
  again, and keyword highlights a third time);
- think time as in Winnow's run, then choosing the label, not timed: POST
  /api/track_annotation_change and POST /updateinstance (the radio saves at once);
- submit, timed, from the press of Next to the next page: POST /updateinstance, POST
  /annotate {"action": "next_instance"} with X-Potato-Navigation: 1 (a short JSON answer),
  then GET / (the next item, or after the last one the completion page with the code;
  POST /annotate answers 302 there, and the fetch follows it first);
- every tenth participant follows the link a second time after their second answer, from
  a new browser (it must resume: the same user, the same batch).
Not sent: the interaction tracker's batched telemetry (POST /api/track_interactions, on
page unload), whose content depends on the mouse.

What is matched: the participants (ids, loopback addresses, arrival moments, think times
and answers come from the same seeds), the batch, K, the number of items, a Prolific link
as the entry, a consent page, one connection per participant, the completion code at the
end.

What differs:
- state: Potato keeps users, assignments and annotations in the server process's memory
  and writes each user's state to <output>/<user>/user_state.json; there is no database,
  so it cannot run more than one worker process (Winnow: 4 gunicorn workers x 4 threads on
  PostgreSQL);
- assignment: Potato hands a participant their whole batch when they enter, and counts
  items held as well as items answered against max_annotations_per_item; it hands out
  held items once nothing else is left. Holds are taken back only with instance_reclaim
  (off here: no participant abandons). Winnow leases one item at a time, at Start and at
  each answer, and a lease expires;
- consent: Potato's consent is a page of questions (here one required radio), passed with
  its Next button; Winnow's is its own page and form, then Start;
- screening: none in either run (Winnow's link has no qualification questions here;
  Potato's would be a prestudy phase);
- answers: Potato saves an answer on every change of the radio and again on Next; Winnow
  records it once, with the request that leases the next item;
- the check reads Potato's output files after the server has stopped; Winnow's reads its
  database.
"""

from __future__ import annotations

import http.client
import json
import random
import re
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from annotation_load import Client  # noqa: E402
from crowd_common import Stats, prolific_query, second_entry  # noqa: E402

COMPLETION_CODE = "WINNOWBENCH"
COMPLETION_LINK = f"app.prolific.com/submissions/complete?cc={COMPLETION_CODE}".encode()
INSTANCE_ID = re.compile(rb'id="instance_id" name="instance_id" type="hidden" value="([^"]+)"')
SCHEME = "switchability"
LABELS = ("switchable", "not switchable")
NAVIGATION = {"X-Potato-Navigation": "1"}


@dataclass
class PotatoServer:
    """A running Potato server: the process, what it is, and its task directory."""

    process: subprocess.Popen
    kind: str
    task_dir: Path
    log: Path

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=30)


def write_task(task_dir: Path, items: int, batch: int, k: int) -> Path:
    """Potato's data, consent page and config in task_dir; returns the config's path."""
    with open(task_dir / "data.jsonl", "w", encoding="utf-8") as f:
        for i in range(items):
            text = (
                f"The trophy number {i} doesn't fit into the suitcase because <b>it</b> is too large. "
                "(it: the trophy or the suitcase)"
            )
            f.write(json.dumps({"id": f"item{i:04d}", "text": text}) + "\n")
    consent = [
        {
            "annotation_type": "radio",
            "name": "consent",
            "description": "Do you agree to take part in this study?",
            "labels": ["I agree"],
            "label_requirement": {"required": True},
        }
    ]
    (task_dir / "consent.json").write_text(json.dumps(consent), encoding="utf-8")
    config = {
        "annotation_task_name": "winnow-crowd-bench",
        "task_dir": str(task_dir),
        "output_annotation_dir": str(task_dir / "annotation_output"),
        "site_dir": "default",
        "data_files": ["data.jsonl"],
        "item_properties": {"id_key": "id", "text_key": "text"},
        "annotation_schemes": [
            {
                "annotation_type": "radio",
                "name": SCHEME,
                "description": "Would the sentence still work with the two candidates switched?",
                "labels": list(LABELS),
                "label_requirement": {"required": True},
            }
        ],
        "login": {"type": "prolific"},
        "crowdsourcing": {"provider": "prolific", "prolific": {"completion": {"code": COMPLETION_CODE}}},
        "completion_code": COMPLETION_CODE,
        "auto_redirect_on_completion": True,
        "assignment_strategy": "fixed_order",
        "max_annotations_per_item": k,
        "max_annotations_per_user": batch,
        "phases": {
            "order": ["consent", "annotation"],
            "consent": {"type": "consent", "file": "consent.json"},
        },
        "secret_key": "winnow-bench-not-secret",
        "host": "127.0.0.1",
    }
    path = task_dir / "config.yaml"
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return path


def start(python: str, items: int, batch: int, k: int, port: int, threads: int) -> PotatoServer:
    """Writes the task into a new temporary directory and starts Potato on 127.0.0.1:port
    with gunicorn (one worker, ``threads`` threads) if that environment has it, else with
    ``potato start``; waits until /health answers."""
    task_dir = Path(tempfile.mkdtemp(prefix="potato-bench-"))
    config = write_task(task_dir, items, batch, k)
    has_gunicorn = subprocess.run([python, "-c", "import gunicorn"], capture_output=True).returncode == 0
    if has_gunicorn:
        kind = f"gunicorn gthread 1 worker x {threads} threads (Potato's WSGI factory)"
        cmd = [
            python,
            "-m",
            "gunicorn",
            "--workers",
            "1",
            "--threads",
            str(threads),
            "--bind",
            f"127.0.0.1:{port}",
            "--keep-alive",
            "30",
            "--backlog",
            "2048",
            "--timeout",
            "120",
            "--log-level",
            "warning",
            f"potato.flask_server:create_app({str(config)!r})",
        ]
    else:
        kind = "potato start (Flask's threaded development server)"
        cmd = [python, "-m", "potato", "start", str(config), "-p", str(port)]
    log = task_dir / "server.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(cmd, cwd=task_dir, stdout=out, stderr=subprocess.STDOUT)
    server = PotatoServer(process, kind, task_dir, log)
    deadline = time.monotonic() + 180  # it loads and indexes the data before it listens
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"Potato exited with {process.returncode}; see {log}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/health")
            if conn.getresponse().status == 200:
                return server
        except OSError:
            pass
        time.sleep(0.5)
    server.stop()
    raise SystemExit(f"Potato did not come up on port {port}; see {log}")


def _send(
    client: Client, method: str, path: str, payload: dict | None = None, headers: dict | None = None
) -> tuple[int, bytes]:
    """One request as the page's fetch() sends it: JSON in, and a redirect followed with a
    GET of its location (what fetch does with a 302)."""
    origin = f"http://127.0.0.1:{client.port}"
    h = {"Origin": origin, "Referer": f"{origin}/", **(headers or {})}
    body = None
    if payload is not None:
        body = json.dumps(payload).encode()
        h["Content-Type"] = "application/json"
    status, data = client.request(method, path, body, h)
    if status in (301, 302, 303):
        status, data = client.request("GET", "/", None, {"Referer": f"{origin}/"})
    return status, data


def _page_requests(client: Client, instance_id: str | None) -> None:
    """What the page's scripts fetch once it has loaded (none of it shows the item)."""
    if instance_id is None:  # the consent page
        paths = ["/api/colors", "/pocket/api/routing"]
    else:
        quoted = urllib.parse.quote(instance_id)
        paths = [
            "/api/colors",
            f"/api/spans/{quoted}",
            "/pocket/api/routing",
            f"/api/keyword_highlights/{quoted}",
            "/api/schemas",
            "/api/colors",
            f"/api/spans/{quoted}",
            f"/api/keyword_highlights/{quoted}",
            f"/api/keyword_highlights/{quoted}",
        ]
    for path in paths:
        status, _ = _send(client, "GET", path)
        if status != 200:
            raise RuntimeError(f"{path}: HTTP {status}")


def _choose(
    client: Client, instance_id: str, scheme: str, label: str, seconds: float | None
) -> dict[str, object]:
    """Clicking a radio button: the change is tracked, then saved at once. Returns the
    save's payload, which the Next button sends again."""
    status, _ = _send(
        client,
        "POST",
        "/api/track_annotation_change",
        {
            "instance_id": None if instance_id == "__phase_page__" else instance_id,
            "schema_name": scheme,
            "label_name": label,
            "action": "select",
            "old_label": None,
            "old_value": None,
            "new_value": label,
            "source": "user",
        },
    )
    if status != 200:
        raise RuntimeError(f"track_annotation_change: HTTP {status}")
    save: dict[str, object] = {
        "instance_id": instance_id,
        "annotations": {f"{scheme}:{label}": label},
        "cleared_schemas": [],
        "span_annotations": [],
        "client_timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
        "response_time_seconds": seconds,
    }
    _save(client, save)
    return save


def _save(client: Client, save: dict[str, object]) -> None:
    status, data = _send(client, "POST", "/updateinstance", save)
    if status != 200:
        raise RuntimeError(f"updateinstance: HTTP {status}")
    try:
        answer = json.loads(data)
    except ValueError:
        answer = {}
    if isinstance(answer, dict) and answer.get("status") == "error":
        raise RuntimeError(f"updateinstance refused: {answer.get('message')}")


def participant(
    port: int, pid: str, address: str, arrive_at: float, think: float, reenter: bool, stats: Stats
) -> None:
    """One participant on Potato, as crowd_entry.participant is one on Winnow (same seed,
    same answers, same think times)."""
    rng = random.Random(pid)
    one = Stats()
    query = prolific_query(pid)
    time.sleep(max(0.0, arrive_at - time.monotonic()))
    client = Client(port, source=address)
    try:
        t0 = time.perf_counter()
        status, _ = client.request("GET", f"/?{query}")
        one.entry_ms.append((time.perf_counter() - t0) * 1000)
        if status != 302:
            raise RuntimeError(f"entry: HTTP {status}")
        status, html = client.request("GET", "/")
        if status != 200 or b"consent" not in html:
            raise RuntimeError(f"consent page: HTTP {status}")
        _page_requests(client, None)
        consent = _choose(client, "__phase_page__", "consent", "I agree", None)
        t0 = time.perf_counter()
        _save(client, consent)
        status, _ = _send(
            client, "POST", "/annotate", {"action": "next_instance", "instance_id": "__phase_page__"}
        )
        if status != 200:
            raise RuntimeError(f"consent next: HTTP {status}")
        status, html = client.request("GET", "/")
        one.next_ms.append((time.perf_counter() - t0) * 1000)
        n = 0
        while True:
            if status != 200:
                raise RuntimeError(f"item: HTTP {status}")
            match = INSTANCE_ID.search(html)
            if match is None:
                if COMPLETION_LINK in html:  # the completion page: the code and the link back to Prolific
                    one.finished += 1
                else:
                    raise RuntimeError("a page with neither an item nor the completion link")
                break
            instance_id = match.group(1).decode()
            _page_requests(client, instance_id)
            n += 1
            if reenter and n == 3:
                second_entry(port, address, f"/?{query}", one)
            seconds = rng.uniform(0.5 * think, 1.5 * think)
            time.sleep(seconds)
            label = LABELS[0] if n % 2 else LABELS[1]
            save = _choose(client, instance_id, SCHEME, label, round(seconds, 3))
            one.answers += 1
            t0 = time.perf_counter()
            save["client_timestamp"] = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
            _save(client, save)
            status, _ = _send(
                client,
                "POST",
                "/annotate",
                {"action": "next_instance", "instance_id": instance_id},
                NAVIGATION,
            )
            if status != 200:
                raise RuntimeError(f"next_instance: HTTP {status}")
            status, html = client.request("GET", "/")
            one.submit_ms.append((time.perf_counter() - t0) * 1000)
    except Exception as exc:  # noqa: BLE001 - counted and reported
        one.errors.append(f"{pid}: {exc}")
    stats.add(one)


def output_check(task_dir: Path, k: int, batch: int) -> dict[str, int]:
    """Potato's output after the server has stopped: one user_state.json per user under
    annotation_output/<user>/. Counts the users, those who consented, the annotations
    stored (labels of the switchability scheme, one per item per user), items with more
    than K annotators, users holding or answering more than the batch, and users whose
    name is not a bench participant id (a second user made by a second entry would be)."""
    output = task_dir / "annotation_output"
    per_item: Counter[str] = Counter()
    users = consented = annotations = over_batch = strangers = 0
    for state_file in sorted(output.glob("*/user_state.json")):
        state = json.loads(state_file.read_text(encoding="utf-8"))
        users += 1
        strangers += int(not re.fullmatch(r"BENCH\d{4}", str(state.get("user_id", ""))))
        phases = state.get("phase_to_page_to_label_to_value") or {}
        consented += int(bool((phases.get("consent") or {}).get("consent")))
        answered = [
            instance
            for instance, labels in (state.get("instance_id_to_label_to_value") or {}).items()
            if any(isinstance(pair[0], dict) and pair[0].get("schema") == SCHEME for pair in labels)
        ]
        annotations += len(answered)
        per_item.update(answered)
        held = len(state.get("instance_id_ordering") or [])
        over_batch += int(len(answered) > batch or held > batch)
    return {
        "users": users,
        "consented": consented,
        "annotations": annotations,
        "items_past_k": sum(1 for count in per_item.values() if count > k),
        "over_batch": over_batch,
        "strangers": strangers,
    }
