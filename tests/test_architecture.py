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
        (
            "annotation/selectors/__init__.py",
            "from evaluation.models import EvaluationRun",
            "annotation.selectors",
        ),
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
            "annotation/selectors/__init__.py",
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


def test_the_language_model_package_is_in_the_pure_contract() -> None:
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"][
        "contracts"
    ]
    pure = next(c for c in contracts if c["name"].startswith("Pure modules import no Django"))
    assert "evaluation.lm" in pure["source_modules"]
    assert set(pure["forbidden_modules"]) >= {"django", "rest_framework", "celery"}


@pytest.mark.parametrize("module", ["evaluation/lm/registry.py", "evaluation/lm/scorers/api.py"])
def test_the_language_model_package_importing_django_breaks_the_contract(tmp_path: Path, module: str) -> None:
    tree = _copy_tree(tmp_path)
    target = tree / module
    target.write_text(
        target.read_text(encoding="utf-8")
        + "\n\ndef _late():\n    from django.conf import settings\n    return settings\n",
        encoding="utf-8",
    )
    result = _lint(tree)
    assert result.returncode != 0
    assert "Pure modules import no Django" in result.stdout
    dotted = module.removesuffix(".py").replace("/", ".")
    assert f"{dotted} -> django" in result.stdout


# --- data sets and methods are compared as their enums -----------------------------------

DATASET_NAMES = ("wsc", "winowhy", "comve", "senmaking")
METHOD_NAMES = ("full", "partial", "pll", "random", "majority", "first", "predictions")
_QUOTED = r"""["'](?:{names})["']""".format(names="|".join(DATASET_NAMES + METHOD_NAMES))
#: ``x == "wsc"``, ``"wsc" != x``, ``x in ("comve", "senmaking")``: a comparison with a quoted name
_COMPARISON = re.compile(rf"(?:==|!=)\s*{_QUOTED}|{_QUOTED}\s*(?:==|!=)|\bin\s*[(\[{{][^)\]}}]*{_QUOTED}")
#: ... of a data set or a method (other kinds compared with the same words, such as an import
#: format or a pipeline kind, are not data sets)
_SUBJECT = re.compile(r"\b\w*(?:dataset|method)\w*\b")
#: the enums' own modules
ENUM_MODULES = {
    "releases/dataset.py",
    "releases/models.py",
    "evaluation/lm/methods.py",
    "evaluation/models.py",
}


def quoted_comparisons(root: Path) -> list[str]:
    """Every line of the code and templates that compares a data set or a method with a
    quoted name (outside migrations, tests and the enums' own modules)."""
    found = []
    files = [p for name in (*PACKAGES, "templates") for p in sorted((root / name).rglob("*"))]
    for path in files:
        relative = path.relative_to(root).as_posix()
        if path.suffix not in (".py", ".html") or "migrations" in path.parts or relative in ENUM_MODULES:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if line.lstrip().startswith(("for ", "#")):
                continue
            if _COMPARISON.search(line) and _SUBJECT.search(line):
                found.append(f"{relative}:{number}: {line.strip()}")
    return found


def test_no_data_set_or_method_is_compared_with_a_quoted_name() -> None:
    assert quoted_comparisons(ROOT) == []


@pytest.mark.parametrize(
    "line",
    [
        'if release.dataset == "wsc":',
        "if 'comve' != run.dataset:",
        'if dataset in ("comve", "senmaking"):',
        'elif method == "predictions":',
        '{% if run.dataset == "winowhy" %}',
    ],
)
def test_the_check_finds_a_quoted_comparison(tmp_path: Path, line: str) -> None:
    (tmp_path / "evaluation").mkdir()
    (tmp_path / "evaluation" / "probe.py").write_text(f"def probe():\n    {line}\n", encoding="utf-8")
    (tmp_path / "templates").mkdir()
    assert quoted_comparisons(tmp_path) == [f"evaluation/probe.py:2: {line}"]


def test_the_enums_of_the_fields_hold_the_values_of_the_pure_enums() -> None:
    from evaluation.lm.methods import Method as ScoringMethod
    from evaluation.models import DatasetKind, Method
    from releases.dataset import Dataset
    from releases.models import ReleaseDataset

    assert Method.values == [m.value for m in ScoringMethod]
    assert Method.labels == [m.label for m in ScoringMethod]
    assert ReleaseDataset.values == [d.value for d in Dataset]
    assert set(DatasetKind.values) == {d.reads_as.value for d in Dataset}
    assert sorted(DATASET_NAMES) == sorted(d.value for d in Dataset)
    assert sorted(METHOD_NAMES) == sorted(m.value for m in ScoringMethod)


# --- module size -------------------------------------------------------------------------

#: A module past this many lines is split by sub-domain into a package (architecture issue).
MAX_MODULE_LINES = 700


def test_no_module_outside_the_migrations_is_over_700_lines() -> None:
    too_long = []
    for top in (*PACKAGES, "tests", "bench", "scripts"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > MAX_MODULE_LINES:
                too_long.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert too_long == []


def test_every_crowd_platform_is_one_spec() -> None:
    """A study link's platform (the model's choices) has its PlatformSpec, and no spec is
    without its choice: adding a platform is the enum value and one spec."""
    from annotation.crowd.platforms import PLATFORMS
    from annotation.models import Platform

    assert set(PLATFORMS) == set(Platform.values)
    for name, spec in PLATFORMS.items():
        assert spec.name == name and spec.id_param and spec.title and spec.where
