"""What the crowd entry bench (crowd_entry.py) and its Potato reference
(potato_reference.py) share: a participant's figures and the crowd's, the Prolific query a
participant arrives with, Winnow's entry (the landing page, then its button), and the
second entry under the same id."""

from __future__ import annotations

import re
import threading
import time
import urllib.parse
from dataclasses import dataclass, field

from annotation_load import Client


@dataclass
class Stats:
    """Figures of one participant, or of the crowd (``add`` gathers them; threads share
    the crowd's)."""

    entry_ms: list[float] = field(default_factory=list)
    next_ms: list[float] = field(default_factory=list)
    submit_ms: list[float] = field(default_factory=list)
    answers: int = 0
    finished: int = 0
    reentries: int = 0
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, one: Stats) -> None:
        with self.lock:
            self.entry_ms += one.entry_ms
            self.next_ms += one.next_ms
            self.submit_ms += one.submit_ms
            self.errors += one.errors
            self.answers += one.answers
            self.finished += one.finished
            self.reentries += one.reentries


def prolific_query(pid: str) -> str:
    """The parameters Prolific adds to a study's URL for participant ``pid``."""
    return urllib.parse.urlencode({"PROLIFIC_PID": pid, "STUDY_ID": "bench", "SESSION_ID": f"s-{pid}"})


CSRF_FIELD = re.compile(rb'name="csrfmiddlewaretoken" value="([^"]+)"')


def study_enter(client: Client, url: str) -> tuple[int, float]:
    """Follow a Winnow study link as a browser does: its landing page (a GET, which signs
    nobody in), then the page's button (a POST with the page's CSRF token), which creates
    or resumes the participant. (the POST's status, its milliseconds)."""
    status, html = client.request("GET", url)
    match = CSRF_FIELD.search(html)
    if status != 200 or match is None:
        raise RuntimeError(f"landing page: HTTP {status}")
    form = urllib.parse.urlencode({"csrfmiddlewaretoken": match.group(1).decode()}).encode()
    t0 = time.perf_counter()
    status, _ = client.request(
        "POST",
        url,
        form,
        {
            "Content-Type": "application/x-www-form-urlencoded",
            "Referer": f"http://127.0.0.1:{client.port}{url}",
        },
    )
    return status, (time.perf_counter() - t0) * 1000


def second_entry(
    port: int, address: str, url: str, one: Stats, *, cookies: dict[str, str] | None = None
) -> None:
    """The link again, on a new connection: it must resume (a redirect to where they are),
    not create a second participant. Potato: a new browser, a GET. Winnow (``cookies``: the
    participant's browser's): another tab of the same browser, through the landing page;
    Winnow binds a participant to the browser of their first entry, so a new browser
    without its cookies is refused (409), by design (docs/crowd.md)."""
    client = Client(port, source=address)
    if cookies is None:
        status, _ = client.request("GET", url)
    else:
        client.cookies.update(cookies)
        status, _ = study_enter(client, url)
    if status != 302:
        one.errors.append(f"second entry: HTTP {status}")
    one.reentries += 1
