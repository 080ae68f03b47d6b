"""evaluation.analysis on the real data sets, imported and released in the test: the frames'
figures equal each run's results.json, and the papers' subset sizes come out of the frames."""

import pytest

from evaluation import analysis
from evaluation.services import evaluation_run, evaluation_run_create
from tests.evaluation.analysis_checks import assert_tables_equal_results
from tests.evaluation.realdata import publish_real_releases

pytestmark = [pytest.mark.django_db, pytest.mark.realdata, pytest.mark.slow]

BASELINES = {
    "wsc273": [("first", 0), ("random", 0), ("majority", 0)],
    "winowhy": [("majority", 0), ("random", 0)],
    "comve-test": [("first", 0), ("random", 0), ("majority", 0)],
}


@pytest.fixture
def real_runs(data_dir, curator, settings, tmp_path, django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = tmp_path / "media"
    specs = publish_real_releases(data_dir, curator, django_capture_on_commit_callbacks)
    return {
        (name, method, seed): evaluation_run(
            run=evaluation_run_create(release=specs[name], method=method, seed=seed)
        )
        for name, methods in BASELINES.items()
        for method, seed in methods
    }


def test_frames_of_baseline_runs_on_real_releases_equal_their_results_json(real_runs):
    for key, run in real_runs.items():
        try:
            assert_tables_equal_results(run.results_dir)
        except AssertionError as exc:
            raise AssertionError(f"{key}: {exc}") from exc

    wsc = analysis.load_run(real_runs[("wsc273", "first", 0)].results_dir)
    table = analysis.wsc_table(wsc)
    # Trichelair et al.: 131 switchable, 37 associative; WinoWhy tables 4 and 5: questions per type
    assert table.loc[["all", "switchable_before", "associative"], "n"].tolist() == [273, 131, 37]
    sizes = table.loc[[f"type:{t}" for t in analysis.KNOWLEDGE_TYPES], "n"].tolist()
    assert sizes == [32, 82, 88, 64, 20, 48]
    assert table.loc[["single", "multiple"], "n"].tolist() == [222, 51]

    winowhy = analysis.winowhy_table(analysis.load_run(real_runs[("winowhy", "majority", 0)].results_dir))
    # WinoWhy table 6: reasons per type and the majority baseline, 55.67% of 2,865
    assert winowhy.loc["all", ["n", "positives"]].tolist() == [2865, 1270]
    assert f"{100 * winowhy.loc['all', 'majority_accuracy']:.2f}" == "55.67"
    per_type = winowhy.loc[[f"type:{t}" for t in analysis.KNOWLEDGE_TYPES], "n"].tolist()
    assert per_type == [337, 856, 928, 674, 206, 496]
    majority = winowhy.loc[[f"type:{t}" for t in analysis.KNOWLEDGE_TYPES], "majority_accuracy"]
    assert [f"{100 * v:.2f}" for v in majority] == ["54.30", "56.31", "56.47", "52.67", "52.43", "55.24"]

    comve = analysis.comve_table(analysis.load_run(real_runs[("comve-test", "first", 0)].results_dir))
    assert comve.loc[["a", "b"], "n"].tolist() == [1000, 1000]
    assert comve.loc["c", "n"] == 1000 and comve.loc["c", "bleu_percent"] > 0  # the false statement copied


def test_a_comparison_of_two_real_runs_joins_every_sentence(real_runs):
    first = analysis.load_predictions(real_runs[("wsc273", "first", 0)].results_dir)
    random = analysis.load_predictions(real_runs[("wsc273", "random", 0)].results_dir)
    comparison = analysis.compare_runs(first, random)
    assert len(comparison.items) == 273 + 131  # every original and every switched sentence
    m = comparison.mcnemar
    assert m is not None and m.n == 404 and m.both_right + m.both_wrong + m.only_a + m.only_b == 404
