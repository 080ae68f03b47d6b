"""What the crowd entry bench (crowd_entry.py) and its Potato reference
(potato_reference.py) share: a participant's figures and the crowd's, the Prolific query a
participant arrives with, and the second entry under the same id."""

from __future__ import annotations

import threading
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


def second_entry(port: int, address: str, url: str, one: Stats) -> None:
    """The link again, from a new browser of the same person: it must resume (a redirect
    to where they are), not create a second participant."""
    status, _ = Client(port, source=address).request("GET", url)
    if status != 302:
        one.errors.append(f"second entry: HTTP {status}")
    one.reentries += 1
