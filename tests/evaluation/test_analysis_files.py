"""evaluation.analysis reads folders only: a run and a release copied anywhere load without
a database (the run written here by hand, as results.json and predictions.jsonl)."""

import json
from pathlib import Path

from evaluation import analysis
from tests.evaluation.factories import write_wsc_release


def _write_run(folder: Path, release: Path) -> Path:
    folder.mkdir()
    records = [
        {"id": "0", "variant": "original", "scores": [1.0, 0.0], "prediction": 0, "gold": 0, "correct": True},
        {"id": "0", "variant": "switched", "scores": [0.0, 1.0], "prediction": 1, "gold": 1, "correct": True},
        {
            "id": "2",
            "variant": "original",
            "scores": [0.0, 1.0],
            "prediction": 1,
            "gold": 0,
            "correct": False,
        },
    ]
    (folder / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    results = {"run": 7, "dataset": "wsc", "method": "predictions", "model_path": "", "metrics": {}}
    results["release"] = {"path": str(release)}
    (folder / "results.json").write_text(json.dumps(results))
    return folder


def test_a_run_folder_and_a_release_folder_load_without_a_database(tmp_path):
    release = write_wsc_release(tmp_path / "release")
    run = analysis.load_run(_write_run(tmp_path / "run", release))
    assert run.attrs["label"] == "#7 predictions" and run.attrs["release"] == "wsc-mini@1.0.0"
    table = analysis.wsc_table(run)
    assert table.loc["all", ["n", "correct"]].tolist() == [2, 1]
    # item 0 is switchable and changed its answer with the switch; item 2 is not switchable
    assert table.loc["consistency", ["n", "correct"]].tolist() == [1, 1]
    assert table.loc["non_switchable", ["n", "correct"]].tolist() == [1, 0]
    moved = tmp_path / "elsewhere"
    release.rename(moved)
    again = analysis.load_run(tmp_path / "run", release=moved)
    assert again.equals(run)
