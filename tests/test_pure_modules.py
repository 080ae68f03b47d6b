"""Every module whose docstring calls itself pure ("no Django", "pure: ...") is in the
import-linter contract that checks it (pyproject.toml), so the list is found, not kept by
hand (architecture issue): a new pure module that is missing fails here, and `lint-imports`
then checks that it imports no Django, DRF or Celery."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = ("core", "datasets", "annotation", "releases", "evaluation", "backups", "config")
CLAIM = re.compile(
    r"\bno django\b|\(pure\b|\bpure:|\bpure python\b|\bpure (?:string |metric )?functions\b", re.I
)
#: Modules whose docstring speaks of another module's purity, not their own.
ABOUT_ANOTHER: dict[str, str] = {}


def claimed_pure() -> set[str]:
    """Modules (not packages: a package's docstring describes its parts) claiming purity."""
    found = set()
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            if path.name == "__init__.py" or "migrations" in path.parts:
                continue
            docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
            if CLAIM.search(docstring):
                found.add(".".join(path.relative_to(ROOT).with_suffix("").parts))
    return found - set(ABOUT_ANOTHER)


def contract_modules() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c["name"].startswith("Pure modules import no Django")
    ]
    assert {"django", "rest_framework", "celery"} <= set(contract["forbidden_modules"])
    return list(contract["source_modules"])


def test_every_module_that_calls_itself_pure_is_checked_by_the_contract():
    listed = contract_modules()
    covered = {m for m in claimed_pure() if any(m == s or m.startswith(s + ".") for s in listed)}
    assert sorted(claimed_pure() - covered) == []


def test_the_claim_is_found_in_the_docstrings_of_known_pure_modules():
    found = claimed_pure()
    assert {"core.jsonl", "core.formulas", "releases.card", "annotation.answers"} <= found
    assert "annotation.task_types" not in found and "annotation.services" not in found
