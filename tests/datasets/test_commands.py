"""The import_dataset and dataset_summary management commands."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from datasets.models import Schema
from tests.datasets import sources

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_import_dataset_prints_created_then_unchanged(tmp_path: Path):
    questions = sources.write_winowhy(tmp_path)
    categories = sources.write_categories(tmp_path)
    out = run("import_dataset", "winowhy", str(questions), "--categories", str(categories))
    assert "schemas: 4 created, 0 updated, 0 unchanged" in out
    assert "twins linked: 4 schemas in 2 pairs" in out
    out = run("import_dataset", "winowhy", str(questions), "--categories", str(categories))
    assert "schemas: 0 created, 0 updated, 4 unchanged; reasons: 0 created, 0 updated, 12 unchanged" in out


def test_dry_run_counts_but_writes_nothing(tmp_path: Path):
    from datasets.models import ImportBatch

    questions = sources.write_winowhy(tmp_path)
    out = run("import_dataset", "winowhy", str(questions), "--dry-run")
    assert "dry run, nothing written: winowhy would give schemas: 4 created" in out
    assert Schema.objects.count() == 0 and ImportBatch.objects.count() == 0
    run("import_dataset", "winowhy", str(questions))
    out = run("import_dataset", "winowhy", str(questions), "--dry-run")
    assert "schemas: 0 created, 0 updated, 4 unchanged" in out
    assert ImportBatch.objects.count() == 1


def test_import_dataset_fails_with_the_precise_message(tmp_path: Path):
    path = sources.write_winowhy(tmp_path, sources.winowhy_rows(["A", "B", "Z", "A"]))
    with pytest.raises(CommandError) as caught:
        run("import_dataset", "winowhy", str(path))
    assert "winowhy.json row 3 field 'correctAnswer': unknown answer key 'Z'" in str(caught.value)
    assert Schema.objects.count() == 0


def test_import_dataset_exits_non_zero_from_the_shell(tmp_path: Path):
    import subprocess
    import sys

    path = tmp_path / "dataset.jsonl"
    path.write_bytes(b'{"id": "1", "sentence0": "\xff"}\n')
    done = subprocess.run(
        [sys.executable, "manage.py", "import_dataset", "senmaking", str(path)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        env={**__import__("os").environ, "WINNOW_VAR_DIR": str(tmp_path / "var")},
    )
    assert done.returncode != 0
    assert "dataset.jsonl row 1" in done.stderr and "field 'sentence0'" in done.stderr


def test_import_dataset_help_lists_the_formats():
    from django.core.management import load_command_class

    parser = load_command_class("datasets", "import_dataset").create_parser("manage.py", "import_dataset")
    text = parser.format_help()
    for word in ("winowhy", "trichelair", "comve", "senmaking", "--categories", "--split"):
        assert word in text


def test_dataset_summary_json_counts_what_was_imported(tmp_path: Path):
    run("import_dataset", "winowhy", str(sources.write_winowhy(tmp_path)), "--collection", "demo")
    run("import_dataset", "comve", str(sources.write_comve(tmp_path / "dev")))
    summary = json.loads(run("dataset_summary", "--json"))
    demo = summary["schemas"]["demo"]
    assert demo["schemas"] == 4
    assert demo["answers"] == {"A": 2, "B": 2}
    assert demo["reasons"]["by_origin"] == {"human": 4, "reverse": 4, "generated": 4}
    assert demo["reasons"]["by_label"] == {"positive": 4, "acceptable": 4, "negative": 4}
    assert summary["comve"]["comve"]["dev"]["items"] == 3
    text = run("dataset_summary")
    assert "Winograd schemas [demo]: 4" in text and "dev: 3 items (A 3, B 3, C 3)" in text
