"""evaluation.analysis on small releases written in the test: columns, dtypes, figures, joins."""

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from evaluation import analysis
from evaluation.metrics.significance import mcnemar, wilson_interval
from evaluation.models import EvaluationRun
from evaluation.services import evaluation_run, evaluation_run_create
from tests.evaluation.analysis_checks import assert_tables_equal_results
from tests.evaluation.factories import (
    WSC_ROWS,
    write_comve_release,
    write_winowhy_release,
    write_wsc_release,
)

pytestmark = pytest.mark.django_db

WRITERS = {"wsc": write_wsc_release, "winowhy": write_winowhy_release, "comve": write_comve_release}


def _run(tmp_path: Path, dataset: str, method: str, **options: Any) -> EvaluationRun:
    release = WRITERS[dataset](tmp_path / f"release-{dataset}")
    out = tmp_path / f"run-{dataset}-{method}-{len(list(tmp_path.iterdir()))}"
    return evaluation_run(
        run=evaluation_run_create(release=str(release), method=method, out_dir=str(out), **options)
    )


@pytest.mark.parametrize(
    ("dataset", "method"),
    [
        ("wsc", "first"),
        ("wsc", "random"),
        ("wsc", "majority"),
        ("winowhy", "majority"),
        ("winowhy", "random"),
        ("comve", "first"),
        ("comve", "random"),
        ("comve", "majority"),
    ],
)
def test_every_figure_of_a_runs_table_equals_its_results_json(tmp_path, dataset, method):
    run = _run(tmp_path, dataset, method)
    assert_tables_equal_results(run.results_dir)


def test_wsc_release_and_run_frames_have_the_documented_columns_and_dtypes(tmp_path):
    run = _run(tmp_path, "wsc", "first")
    items = analysis.load_release(run.release_path)
    assert items.attrs == {
        "name": "wsc-mini",
        "version": "1.0.0",
        "dataset": "wsc",
        "path": str(Path(run.release_path)),
    }
    assert items.dtypes.astype(str).to_dict() == {
        "id": "str",
        "text_before": "str",
        "pronoun": "str",
        "text_after": "str",
        "candidate_0": "str",
        "candidate_1": "str",
        "answer": "int64",
        "switchable": "boolean",
        "associative": "boolean",
        "knowledge_types": "object",
        "n_knowledge_types": "int64",
        "type_count": "str",
    }
    assert items["knowledge_types"].tolist() == [
        ("Eventuality",),
        ("Eventuality", "Property"),
        ("Object",),
        (),
    ]
    assert items["type_count"].tolist() == ["single", "multiple", "single", "none"]

    frame = analysis.load_run(run.results_dir)
    assert frame.dtypes.astype(str).to_dict() == {
        "id": "str",
        "gold": "int64",
        "prediction": "int64",
        "correct": "bool",
        "scores": "object",
        "switched_gold": "Int64",
        "switched_prediction": "Int64",
        "switched_correct": "boolean",
        "changed": "boolean",
        "switchable": "boolean",
        "associative": "boolean",
        "knowledge_types": "object",
        "n_knowledge_types": "int64",
        "type_count": "str",
    }
    assert frame.attrs == {
        "run": run.pk,
        "dataset": "wsc",
        "method": "first",
        "model": "first",
        "label": f"#{run.pk} first",
        "release": "wsc-mini@1.0.0",
    }
    # the first candidate on both sentences: never changes; the switched gold is the other one
    assert frame["prediction"].tolist() == [0, 0, 0, 0]
    assert frame["switched_prediction"].tolist() == [0, 0, pd.NA, pd.NA]
    assert frame["changed"].tolist() == [False, False, pd.NA, pd.NA]
    assert frame["switched_gold"].tolist() == [1, 0, pd.NA, pd.NA]


def test_winowhy_and_comve_frames_have_the_documented_columns(tmp_path):
    winowhy = analysis.load_run(_run(tmp_path, "winowhy", "random").results_dir)
    assert winowhy.dtypes.astype(str).to_dict() == {
        "id": "str",
        "question_id": "str",
        "score": "float64",
        "prediction": "str",
        "gold": "str",
        "correct": "bool",
        "positive": "bool",
        "knowledge_types": "object",
        "n_knowledge_types": "int64",
        "type_count": "str",
    }
    assert "0.2" not in set(winowhy["id"])  # acceptable reasons are not evaluated
    reasons = analysis.load_release(write_winowhy_release(tmp_path / "w"))
    assert reasons["positive"].tolist() == [True, False, pd.NA, True, True, False, False]

    comve = analysis.load_run(_run(tmp_path, "comve", "first").results_dir)
    assert comve.dtypes.astype(str).to_dict() == {
        "subtask": "str",
        "id": "str",
        "prediction": "str",
        "gold": "object",
        "correct": "boolean",
    }
    assert comve.groupby("subtask").size().to_dict() == {"a": 3, "b": 2, "c": 2}
    items = analysis.load_release(write_comve_release(tmp_path / "c"))
    assert list(items.columns) == [
        "subtask",
        "id",
        "answer",
        "statement_0",
        "statement_1",
        "false_sent",
        "option_a",
        "option_b",
        "option_c",
        "references",
    ]
    assert items.loc[items["subtask"] == "a", "answer"].tolist() == ["0", "1", "0"]


def test_wsc_table_by_hand_for_the_first_candidate_baseline(tmp_path):
    table = analysis.wsc_table(analysis.load_run(_run(tmp_path, "wsc", "first").results_dir))
    assert list(table.columns) == analysis.ACCURACY_COLUMNS
    assert table.index.name == "key"
    # answers A, B, A, B: the first candidate is right on items 0 and 2
    assert table.loc["all", ["n", "correct"]].tolist() == [4, 2]
    assert table.loc["switchable_before", ["n", "correct"]].tolist() == [2, 1]
    assert table.loc["switchable_after", ["n", "correct"]].tolist() == [2, 1]
    assert table.loc["consistency", ["n", "correct", "accuracy"]].tolist() == [2, 0, 0.0]
    assert table.loc["associative", ["n", "correct"]].tolist() == [1, 1]
    assert table.loc["none", ["n", "correct"]].tolist() == [1, 0]
    assert (table.loc["all", "wilson_low"], table.loc["all", "wilson_high"]) == wilson_interval(2, 4)
    assert list(table.index[7:10]) == [
        "type:Property",
        "type:Object",
        "type:Eventuality",
    ]  # the papers' order
    row = analysis.switch_row(analysis.load_run(_run(tmp_path, "wsc", "first").results_dir))
    assert row.to_dict() == {"Full WSC": 0.5, "Unswitched": 0.5, "Switched": 0.5, "Consistency": 0.0}


def test_an_empty_subset_has_no_accuracy_rather_than_zero(tmp_path):
    rows = [dict(r, associative=None) for r in WSC_ROWS]
    release = write_wsc_release(tmp_path / "no-labels", rows=rows)
    run = evaluation_run(
        run=evaluation_run_create(release=str(release), method="first", out_dir=str(tmp_path / "o"))
    )
    table = analysis.wsc_table(analysis.load_run(run.results_dir))
    assert table.loc["associative", "n"] == 0
    assert np.isnan(table.loc["associative", "accuracy"]) and np.isnan(table.loc["associative", "wilson_low"])


def test_switchable_items_scored_without_their_switched_sentence_leave_the_switch_protocol(tmp_path):
    release = write_wsc_release(tmp_path / "r")
    upload = tmp_path / "originals.jsonl"
    upload.write_text("".join(json.dumps({"id": str(i), "prediction": "A"}) + "\n" for i in range(4)))
    run = evaluation_run(
        run=evaluation_run_create(
            release=str(release),
            method="predictions",
            predictions_path=str(upload),
            out_dir=str(tmp_path / "o"),
        )
    )
    table = assert_tables_equal_results(run.results_dir)
    assert table.loc["switchable_before", "n"] == 0


def test_a_limited_run_joins_only_the_items_it_scored(tmp_path):
    run = _run(tmp_path, "wsc", "first", limit=2)
    frame = analysis.load_run(run.results_dir)
    assert frame["id"].tolist() == ["0", "1"]
    assert_tables_equal_results(run.results_dir)


def test_join_runs_puts_runs_side_by_side_and_takes_the_items_columns_once(tmp_path):
    first = analysis.load_run(_run(tmp_path, "wsc", "first").results_dir)
    other = analysis.load_run(_run(tmp_path, "wsc", "random", seed=3).results_dir)
    joined = analysis.join_runs({"first": first, "random": other})
    assert joined["id"].tolist() == ["0", "1", "2", "3"]
    assert {"first_correct", "random_correct", "first_changed", "gold", "switchable"} <= set(joined.columns)
    assert "random_gold" not in joined and "random_switchable" not in joined
    assert joined["first_correct"].tolist() == first["correct"].tolist()
    three = analysis.join_runs({"a": first, "b": other, "c": first})
    assert len(three) == 4 and "c_prediction" in three
    with pytest.raises(analysis.AnalysisError, match="at least two"):
        analysis.join_runs({"a": first})


def test_join_runs_inner_keeps_the_shared_items_and_outer_all(tmp_path):
    full = analysis.load_predictions(_run(tmp_path, "wsc", "first").results_dir)
    part = analysis.load_predictions(_run(tmp_path, "wsc", "first", limit=2).results_dir)
    assert len(analysis.join_runs({"a": full, "b": part})) == 4  # items 0 and 1, both variants
    assert len(analysis.join_runs({"a": full, "b": part}, how="outer")) == 6
    with pytest.raises(analysis.AnalysisError, match="how must be"):
        analysis.join_runs({"a": full, "b": part}, how="cross")


def test_compare_runs_pairs_items_and_gives_statsmodels_mcnemar(tmp_path):
    a = analysis.load_predictions(_run(tmp_path, "wsc", "first").results_dir)
    b = analysis.load_predictions(_run(tmp_path, "wsc", "random", seed=1).results_dir)
    comparison = analysis.compare_runs(a, b)
    items = analysis.comparison_table(comparison)
    assert list(items.columns) == analysis.COMPARISON_COLUMNS
    assert len(items) == 6  # four originals, two switched
    assert comparison.only_in_a == comparison.only_in_b == 0
    assert comparison.mcnemar == mcnemar(items["a_correct"].tolist(), items["b_correct"].tolist())
    assert int(items["differ"].sum()) == comparison.mcnemar.only_a + comparison.mcnemar.only_b


def test_comve_c_rows_have_no_verdict_and_stay_out_of_the_comparison(tmp_path):
    a = analysis.load_predictions(_run(tmp_path, "comve", "first").results_dir)
    b = analysis.load_predictions(_run(tmp_path, "comve", "random").results_dir)
    comparison = analysis.compare_runs(a, b)
    assert set(comparison.items["variant"]) == {"a", "b"}
    assert comparison.mcnemar is not None and comparison.mcnemar.n == 5


def test_leaderboard_ranks_by_accuracy_then_run_and_names_runs_like_the_pages(tmp_path):
    runs = [_run(tmp_path, "wsc", m, seed=s) for m, s in (("random", 1), ("first", 0), ("random", 2))]
    board = analysis.leaderboard([analysis.load_results(r.results_dir) for r in runs])
    accuracies = board["accuracy"].tolist()
    assert accuracies == sorted(accuracies, reverse=True)
    assert board["rank"].tolist() == [1, 2, 3]
    for _, row in board.iterrows():
        run = EvaluationRun.objects.get(pk=row["run"])
        assert row["label"] == f"#{run.pk} {run.method}"  # a baseline is named by its method once
    assert list(board.columns[:8]) == ["rank", "run", "label", "dataset", "method", "model", "accuracy", "n"]
    assert {"type:Property", "unswitched", "switched", "consistency"} <= set(board.columns)
    assert analysis.leaderboard([]).empty


def test_unreadable_folders_are_analysis_errors_that_name_the_file(tmp_path):
    with pytest.raises(analysis.AnalysisError, match="results.json: missing"):
        analysis.load_run(tmp_path)
    with pytest.raises(analysis.AnalysisError, match="not a folder of release files"):
        analysis.load_release(tmp_path / "nowhere")
    run = _run(tmp_path, "wsc", "first")
    with (Path(run.results_dir) / "predictions.jsonl").open("a") as handle:
        handle.write('{"id": "99", "variant": "original", "prediction": 0, "gold": 0, "correct": true}\n')
    with pytest.raises(
        analysis.AnalysisError, match="1 predicted items are not in the release, for example 99"
    ):
        analysis.load_run(run.results_dir)
    other = write_winowhy_release(tmp_path / "other")
    with pytest.raises(analysis.AnalysisError, match="scored wsc items"):
        analysis.load_run(run.results_dir, release=other)
    assert issubclass(analysis.AnalysisError, ValueError) and analysis.AnalysisError.status == 400
