import io
import json

import pytest
from django.core.management import CommandError, call_command

from evaluation.models import EvaluationRun, RunStatus
from tests.evaluation.factories import write_wsc_release

pytestmark = pytest.mark.django_db


def test_evaluate_command_stores_the_run_prints_figures_and_shows_a_progress_bar(tmp_path):
    release = write_wsc_release(tmp_path / "release")
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "evaluate",
        "--release",
        str(release),
        "--method",
        "first",
        "--out",
        str(tmp_path / "o"),
        "--name",
        "floor",
        stdout=out,
        stderr=err,
    )
    run = EvaluationRun.objects.get()
    assert run.status == RunStatus.DONE and run.name == "floor"
    text = out.getvalue()
    assert "accuracy 50.00% (2/4)" in text
    assert "switchable (2): before 50.00%, after 50.00%, consistency 0.00%" in text
    assert "4/4" in err.getvalue()  # tqdm's bar counts schemas (their 6 sentences are scored)
    assert json.loads((tmp_path / "o" / "results.json").read_text())["run"] == run.pk


def test_evaluate_command_with_a_bad_predictions_file_names_the_row(tmp_path):
    release = write_wsc_release(tmp_path / "release")
    bad = tmp_path / "preds.csv"
    bad.write_text("id,prediction\n0,A\n1,C\n")
    with pytest.raises(CommandError, match=r"preds.csv, row 3, field 'prediction': 'C'"):
        call_command(
            "evaluate",
            "--release",
            str(release),
            "--method",
            "predictions",
            "--predictions",
            str(bad),
            "--out",
            str(tmp_path / "o"),
            "--no-progress",
            stdout=io.StringIO(),
        )
    assert not EvaluationRun.objects.exists()  # refused before a run is stored


def test_evaluate_command_refuses_a_missing_release_folder(tmp_path):
    with pytest.raises(CommandError, match="no such folder and not NAME@VERSION"):
        call_command(
            "evaluate", "--release", str(tmp_path / "nope"), "--method", "first", stdout=io.StringIO()
        )
    assert not EvaluationRun.objects.exists()


def test_evaluate_help_says_a_release_folder_is_accepted(capsys):
    with pytest.raises(SystemExit):
        call_command("evaluate", "--help")
    assert "folder of an exported release" in " ".join(capsys.readouterr().out.split())
