"""End-to-end runs of baselines on release folders written from the real data sets."""

import pytest

from evaluation.services import evaluation_run, evaluation_run_create
from tests.evaluation.realdata import export_comve, export_winowhy, export_wsc

pytestmark = [pytest.mark.django_db, pytest.mark.realdata]


def test_winowhy_majority_baseline_is_55_67_percent_of_the_2865_reasons(data_dir, tmp_path):
    release = export_winowhy(data_dir, tmp_path / "winowhy")
    run = evaluation_run(
        run=evaluation_run_create(release=str(release), method="majority", out_dir=str(tmp_path / "o"))
    )
    m = run.metrics
    assert (m["positives"], m["negatives"]) == (1270, 1595)
    assert m["majority_baseline"]["n"] == 2865
    assert f"{100 * m['majority_baseline']['accuracy']:.2f}" == "55.67"
    assert m["best_threshold"]["accuracy"] == m["majority_baseline"]["accuracy"]
    assert m["reasons_in_release"] == {"positive": 1270, "negative": 1595, "other": 1230}
    # per knowledge type of the question (15 reasons per question, positive and negative only)
    assert set(m["knowledge_types"]) == {"Property", "Object", "Eventuality", "Spatial", "Quantity", "Others"}
    assert all(
        k["best"]["accuracy"] >= k["majority_baseline"]["accuracy"] for k in m["knowledge_types"].values()
    )


def test_wsc273_subsets_and_knowledge_types_match_the_papers(data_dir, tmp_path):
    release = export_wsc(data_dir, tmp_path / "wsc")
    run = evaluation_run(
        run=evaluation_run_create(release=str(release), method="first", out_dir=str(tmp_path / "o"))
    )
    m = run.metrics
    assert m["all"]["n"] == 273
    assert m["switchable"]["n"] == 131 and m["associative"]["n"] == 37
    counts = {t: k["n"] for t, k in m["knowledge_types"].items()}
    assert counts == {
        "Property": 32,
        "Object": 82,
        "Eventuality": 88,
        "Spatial": 64,
        "Quantity": 20,
        "Others": 48,
    }
    assert m["switchable"]["consistency"] == 0.0  # the first candidate never moves


def test_comve_test_set_baseline_and_copy_bleu(data_dir, tmp_path):
    release = export_comve(data_dir, tmp_path / "comve")
    run = evaluation_run(
        run=evaluation_run_create(release=str(release), method="first", out_dir=str(tmp_path / "o"))
    )
    assert run.metrics["a"]["n"] == run.metrics["b"]["n"] == 1000
    assert run.metrics["c"]["bleu_percent"] == 17.234  # official scorer on the same input: 17.2340
    assert sum(1 for _ in (tmp_path / "o" / "subtaskA_answers.csv").open()) == 1000
