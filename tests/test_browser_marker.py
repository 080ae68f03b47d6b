"""The browser tests are marked ``browser`` by their folder (tests/browser/conftest.py),
not file by file (architecture issue): `-m "not browser"` leaves every one of them out."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_test_under_tests_browser_is_marked_browser_by_the_folder():
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--collect-only",
            "-m",
            "not browser",
            "tests/browser",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert "no tests collected" in done.stdout and "deselected" in done.stdout, done.stdout + done.stderr
    marked_by_hand = [
        p.name for p in (ROOT / "tests" / "browser").glob("test_*.py") if "mark.browser" in p.read_text()
    ]
    assert marked_by_hand == []
