"""No absolute path of one machine in the docs, the benchmarks, the scripts or the code: a
command or a data folder is given relative to the checkout (`.venv/bin/python`,
`../shared/data`), so that it works on every machine."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The code and what a reader runs or reads; not .venv, media or the vendored static files.
SEARCHED = (
    "docs",
    "bench",
    "scripts",
    "annotation",
    "backups",
    "config",
    "core",
    "datasets",
    "evaluation",
    "releases",
    "templates",
    "tests",
    "winnow",
)
TOP_FILES = ("README.md", "DEVELOPERS.md", "manage.py", "pyproject.toml", "winnow")
TEXT = {".py", ".md", ".html", ".txt", ".sh", ".toml", ".cfg", ".ini", ".yml", ".yaml", ".css", ".js", ""}
# Built from parts, so that this file does not match itself.
MACHINE_PATH = re.compile("(?<![\\w.])/(" + "|".join(("wo" + "rk", "ro" + "ot", "ho" + "me")) + ")/")


def _files() -> list[Path]:
    found = [ROOT / name for name in TOP_FILES if (ROOT / name).is_file()]
    for folder in SEARCHED:
        base = ROOT / folder
        if base.is_file():
            found.append(base)
            continue
        found += [
            p for p in base.rglob("*") if p.is_file() and p.suffix in TEXT and "__pycache__" not in p.parts
        ]
    return found


def test_no_doc_bench_script_or_code_names_an_absolute_path_of_one_machine():
    """Recorded run outputs (docs/**/*.json) keep the paths their run printed: they are
    records of that run, not instructions, and are not searched."""
    files = _files()
    assert len(files) > 100  # the search reached the code
    hits = []
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            if MACHINE_PATH.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert hits == []
