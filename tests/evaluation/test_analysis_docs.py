"""docs/analysis.md runs: its Python blocks, in order, on the real releases, print what the
text block after each of them shows."""

import contextlib
import io
import re
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from evaluation.services import evaluation_run, evaluation_run_create
from tests.evaluation.realdata import publish_real_releases

pytestmark = [pytest.mark.django_db, pytest.mark.realdata, pytest.mark.slow]

DOC = Path(django_settings.BASE_DIR) / "docs" / "analysis.md"
BLOCK = re.compile(r"^```(python|text)\n(.*?)^```$", re.DOTALL | re.MULTILINE)
# The runs the page names, as `scripts/real_releases.sh` and `manage.py evaluate` make them
# on a fresh database: (release, method, seed) by the folder the page reads.
RUNS = {
    "var/media/evaluation/runs/run-1": ("wsc273", "first", 0),
    "var/media/evaluation/runs/run-2": ("wsc273", "random", 0),
    "var/media/evaluation/runs/run-3": ("winowhy", "majority", 0),
}


def blocks(text: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(text)]


def lines(text: str) -> str:
    """Text as a page shows it: no trailing spaces (editors strip them), no blank ends."""
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def test_the_page_reads_only_the_runs_the_test_makes():
    text = DOC.read_text(encoding="utf-8")
    assert set(re.findall(r"var/media/evaluation/runs/run-\d+", text)) == set(RUNS)
    assert [kind for kind, _ in blocks(text)][:2] == ["python", "text"]


def test_every_python_block_of_docs_analysis_md_prints_the_figures_the_page_shows(
    data_dir, curator, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path / "media"
    specs = publish_real_releases(data_dir, curator, django_capture_on_commit_callbacks)
    folders = {}
    for path, (release, method, seed) in RUNS.items():
        run = evaluation_run(run=evaluation_run_create(release=specs[release], method=method, seed=seed))
        folders[path] = run.results_dir
    namespace: dict[str, object] = {"__name__": "docs_analysis"}
    printed: str | None = None  # what the last Python block printed, until a text block shows it
    checked = 0
    for kind, body in blocks(DOC.read_text(encoding="utf-8")):
        if kind == "text":
            assert printed is not None, f"a text block that no code prints:\n{body}"
            assert lines(printed) == lines(body), f"the page shows\n{body}\nthe code printed\n{printed}"
            checked += 1
            printed = None
            continue
        assert not printed, f"the code printed what the page does not show:\n{printed}"
        for path, folder in folders.items():
            body = body.replace(f'"{path}"', repr(folder))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(body, str(DOC), "exec"), namespace)  # noqa: S102 - the page's own code
        printed = out.getvalue()
    assert not printed, f"the code printed what the page does not show:\n{printed}"
    assert checked >= 6
