"""The layer contract of docs/architecture.md, as `./winnow test` checks it (import-linter).

The apps import only the ones below them (backups > evaluation > releases > annotation > datasets >
core) and the pure modules import no Django. These tests run the same check on this tree
and on a copy with one deliberate backward import, which it must refuse.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("config", "core", "datasets", "annotation", "releases", "evaluation", "backups")
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-logo", "--no-cache", "--config", str(tree / "pyproject.toml")],
        cwd=tree,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def _copy_tree(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    tree.mkdir()
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    for name in PACKAGES:
        shutil.copytree(ROOT / name, tree / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return tree


def test_this_tree_keeps_the_layer_contract() -> None:
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "backward_import", "broken"),
    [
        # a lower app reaching up the flow of data
        (
            "datasets/services/imports.py",
            "from releases import models as _releases_models",
            "datasets.services",
        ),
        ("annotation/selectors.py", "from evaluation.models import EvaluationRun", "annotation.selectors"),
        ("core/roles.py", "import annotation.models", "core.roles"),
        # the same inside a function, where a cycle would otherwise be dodged
        (
            "releases/snapshot.py",
            "def _late():\n    from evaluation import services\n    return services",
            "releases.snapshot",
        ),
    ],
)
def test_a_backward_import_breaks_the_contract(
    tmp_path: Path, module: str, backward_import: str, broken: str
) -> None:
    tree = _copy_tree(tmp_path)
    target = tree / module
    target.write_text(target.read_text(encoding="utf-8") + "\n\n" + backward_import + "\n", encoding="utf-8")
    result = _lint(tree)
    assert result.returncode != 0
    assert "Apps import only the apps below them" in result.stdout
    assert "BROKEN" in result.stdout
    assert broken in result.stdout


def test_a_pure_module_importing_django_breaks_the_contract(tmp_path: Path) -> None:
    tree = _copy_tree(tmp_path)
    target = tree / "evaluation" / "metrics" / "common.py"
    target.write_text(
        target.read_text(encoding="utf-8") + "\n\nfrom django.db import models as _models\n", encoding="utf-8"
    )
    result = _lint(tree)
    assert result.returncode != 0
    assert "Pure modules import no Django" in result.stdout
    assert "evaluation.metrics.common -> django" in result.stdout


# --------------------------------------------------------------------------- variants

#: Where code is read for comparisons: every app, the templates, the scripts, the tests.
SCANNED = (*PACKAGES, "templates", "static", "bench", "scripts", "tests")
SCANNED_SUFFIXES = {".py", ".html", ".js", ".txt"}


def _task_name_comparisons() -> list[str]:
    """Every comparison with a quoted task name (``task == "switchability"``, ``"x" != t``,
    ``t in ("a", "b")``, ``case "a":``) outside the enum's own module and the migrations."""
    from annotation.models import Task

    name = "|".join(re.escape(value) for value in Task.values)
    quoted = rf"""["'](?:{name})["']"""
    compared = re.compile(rf"(?:==|!=)\s*{quoted}|{quoted}\s*(?:==|!=)|\bcase\s+{quoted}")
    member = re.compile(rf"\bin\s*[(\[{{][^)\]}}]*{quoted}")
    loop = re.compile(r"\bfor\s+[\w, ]+\s+$")  # ``for t in ("a", "b")`` iterates, compares nothing
    own = {ROOT / "annotation" / "models.py", Path(__file__).resolve()}
    found = []
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix not in SCANNED_SUFFIXES or path in own or "migrations" in path.parts:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if compared.search(line) or any(
                    not loop.search(line[: m.start()]) for m in member.finditer(line)
                ):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    return found


def test_no_code_compares_a_quoted_task_name() -> None:
    """What differs per task lives on the task's class (annotation/task_types/) and its
    template; elsewhere a task is compared as its enum value (``Task.COMVE_CHECK``)."""
    assert _task_name_comparisons() == []


@pytest.mark.parametrize(
    ("module", "crowd_import", "broken"),
    [
        ("annotation/views.py", "from annotation.crowd import services as _crowd", "annotation.views"),
        (
            "annotation/selectors.py",
            "def _late():\n    from annotation.crowd.services import participant_of\n    return participant_of",
            "annotation.selectors",
        ),
        (
            "annotation/services/judgments.py",
            "import annotation.crowd.services",
            "annotation.services.judgments",
        ),
        ("annotation/api.py", "from annotation.crowd import api as _crowd_api", "annotation.api"),
    ],
)
def test_the_annotate_flow_importing_the_crowd_code_breaks_the_contract(
    tmp_path: Path, module: str, crowd_import: str, broken: str
) -> None:
    """Crowd participation is a plug-in (annotation.participation): the annotation views,
    selectors, services and API never import annotation.crowd."""
    tree = _copy_tree(tmp_path)
    target = tree / module
    target.write_text(target.read_text(encoding="utf-8") + "\n\n" + crowd_import + "\n", encoding="utf-8")
    result = _lint(tree)
    assert result.returncode != 0
    assert "The annotate flow asks the participation interface, never the crowd code" in result.stdout
    assert "BROKEN" in result.stdout
    assert f"{broken} -> annotation.crowd" in result.stdout
