import json

import pytest

from evaluation.models import EvaluationRun, RunStatus
from evaluation.services import EvaluationError, evaluation_run, evaluation_run_create
from tests.evaluation.factories import write_comve_release, write_winowhy_release, write_wsc_release
from tests.releases.factories import create_release, make_schemas, published_release

pytestmark = pytest.mark.django_db


def _run(**kwargs) -> EvaluationRun:
    return evaluation_run(run=evaluation_run_create(**kwargs))


def _predictions(run: EvaluationRun) -> list[dict]:
    assert run.predictions_file is not None
    return [json.loads(line) for line in run.predictions_file.read_text().splitlines()]


def test_first_candidate_baseline_on_wsc_writes_results_and_one_line_per_item_and_variant(tmp_path):
    release = write_wsc_release(tmp_path / "release")
    run = _run(release=str(release), method="first", out_dir=str(tmp_path / "out"))
    assert run.status == RunStatus.DONE
    assert (run.release_name, run.release_version, run.dataset) == ("wsc-mini", "1.0.0", "wsc")
    # first = candidate 0 everywhere: originals right for items 0 and 2 (answer A)
    assert run.metrics["all"] == {"n": 4, "correct": 2, "accuracy": 0.5}
    sw = run.metrics["switchable"]  # items 0, 1; switched gold = the other candidate
    assert sw["n"] == 2
    assert (sw["correct_before"], sw["correct_after"], sw["changed"]) == (1, 1, 0)
    assert sw["consistency"] == 0.0  # the first candidate never changes with the switch
    assert run.metrics["associative"]["n"] == 1 and run.metrics["non_associative"]["n"] == 2
    assert run.metrics["knowledge_types"]["Eventuality"] == {"n": 2, "correct": 1, "accuracy": 0.5}
    assert run.metrics["type_count"]["multiple"]["n"] == 1

    lines = _predictions(run)
    assert [(r["id"], r["variant"]) for r in lines] == [
        ("0", "original"),
        ("0", "switched"),
        ("1", "original"),
        ("1", "switched"),
        ("2", "original"),
        ("3", "original"),
    ]
    assert lines[1] == {
        "id": "0",
        "variant": "switched",
        "candidates": ["The city councilmen", "The demonstrators"],
        "scores": [1.0, 0.0],
        "prediction": 0,
        "gold": 1,
        "correct": False,
    }
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["metrics"] == run.metrics
    assert (
        results["release"]["files"][0]["name"] == "wsc.jsonl"
        and len(results["release"]["files"][0]["sha256"]) == 64
    )
    assert results["model"] == {"baseline": "first"}
    assert set(results["timing"]) >= {"total_seconds", "score_and_metrics_seconds"}
    assert run.progress_done == run.progress_total == 4  # schemas, not their 6 sentences


def test_random_baseline_is_reproducible_with_its_seed(tmp_path):
    release = write_wsc_release(tmp_path / "release")
    a = _run(release=str(release), method="random", seed=3, out_dir=str(tmp_path / "a"))
    b = _run(release=str(release), method="random", seed=3, out_dir=str(tmp_path / "b"))
    assert _predictions(a) == _predictions(b)
    assert a.settings["seed"] == 3


def test_limit_scores_only_the_first_items(tmp_path):
    run = _run(
        release=str(write_wsc_release(tmp_path / "r")),
        method="majority",
        limit=2,
        out_dir=str(tmp_path / "o"),
    )
    assert run.metrics["all"]["n"] == 2


def test_uploaded_wsc_predictions_are_scored(tmp_path):
    release = write_wsc_release(tmp_path / "release")
    upload = tmp_path / "preds.jsonl"
    rows = [
        {"id": "0", "prediction": "A"},
        {"id": "0", "variant": "switched", "prediction": "B"},
        {"id": "1", "prediction": 1},
        {"id": "1", "variant": "switched", "prediction": "The city councilmen"},
        {"id": "2", "prediction": 0},
        {"id": "3", "prediction": 1},
    ]
    upload.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = _run(
        release=str(release), method="predictions", predictions_path=str(upload), out_dir=str(tmp_path / "o")
    )
    assert run.metrics["all"]["accuracy"] == 1.0
    assert run.metrics["switchable"]["consistency"] == 1.0
    assert (
        run.model_identity["predictions"] == "predictions"
        and len(run.model_identity["predictions_sha256"]) == 64
    )


def test_a_bad_predictions_file_names_the_row_and_field_and_is_refused_before_a_run_is_stored(tmp_path):
    release = write_wsc_release(tmp_path / "release")
    upload = tmp_path / "preds.jsonl"
    upload.write_text('{"id": "0", "prediction": "A"}\n{"id": "1", "prediction": "maybe"}\n')
    with pytest.raises(EvaluationError, match=r"preds.jsonl, row 2, field 'prediction': 'maybe'"):
        evaluation_run_create(
            release=str(release),
            method="predictions",
            predictions_path=str(upload),
            out_dir=str(tmp_path / "o"),
        )
    assert not EvaluationRun.objects.exists()
    assert not (tmp_path / "o").exists()


def test_bad_release_row_is_named(tmp_path):
    rows = [
        {
            "id": "0",
            "text_before": "a",
            "pronoun": "it",
            "text_after": "b",
            "candidates": ["x"],
            "answer": "A",
        }
    ]
    release = write_wsc_release(tmp_path / "release", rows=rows)
    run = evaluation_run_create(release=str(release), method="first", out_dir=str(tmp_path / "o"))
    with pytest.raises(EvaluationError, match=r"wsc.jsonl, row 1, field 'candidates'"):
        evaluation_run(run=run)


def test_a_release_file_changed_after_export_is_refused(tmp_path):
    release = write_wsc_release(tmp_path / "release")
    (release / "wsc.jsonl").write_text((release / "wsc.jsonl").read_text().replace("trophy", "statue"))
    with pytest.raises(EvaluationError, match="do not match the manifest's SHA-256"):
        evaluation_run_create(release=str(release), method="first")
    assert not EvaluationRun.objects.exists()


@pytest.mark.parametrize(
    ("kwargs", "message", "field"),
    [
        ({"method": "full"}, "needs a model", "model"),
        ({"method": "full", "model_path": "/nonexistent/model.gguf"}, "no such file or folder", "model"),
        ({"method": "predictions"}, "needs a predictions file", "predictions"),
        ({"method": "nonsense"}, "unknown method", "method"),
        ({"method": "first", "limit": 0}, "limit must be at least 1", "limit"),
        (
            {"method": "first", "start_token": "eos"},
            "start token applies to a model's methods",
            "start_token",
        ),
    ],
)
def test_run_requests_that_cannot_work_are_refused_before_anything_is_stored(
    tmp_path, kwargs, message, field
):
    release = write_wsc_release(tmp_path / "release")
    with pytest.raises(EvaluationError, match=message) as refused:
        evaluation_run_create(release=str(release), **kwargs)
    assert refused.value.field == field  # the web shows the message beside this field
    assert "--" not in str(refused.value)  # no command-line flags
    assert not EvaluationRun.objects.exists()


def test_unknown_release_name_and_version_is_explained(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path
    with pytest.raises(EvaluationError, match="no published release wsc@9.9.9"):
        evaluation_run_create(release="wsc@9.9.9", method="first")


@pytest.mark.django_db
def test_a_published_release_is_evaluated_by_name_and_version(
    tmp_path, settings, curator, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path
    make_schemas(6)
    release = published_release(django_capture_on_commit_callbacks, user=curator, name="wsc-mini")
    run = _run(release=f"{release.name}@{release.version}", method="first")
    assert run.status == RunStatus.DONE
    assert run.results_dir == str(tmp_path / "evaluation" / "runs" / f"run-{run.pk}")
    assert len(_predictions(run)) >= 6


@pytest.mark.django_db
def test_a_draft_release_is_not_evaluated(tmp_path, settings, curator, django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = tmp_path
    make_schemas(4)
    create_release(django_capture_on_commit_callbacks, user=curator, name="wsc-draft")
    with pytest.raises(
        EvaluationError, match="no published release wsc-draft@1.0.0: only published releases"
    ):
        evaluation_run_create(release="wsc-draft@1.0.0", method="first")
    assert not EvaluationRun.objects.exists()


@pytest.mark.django_db
def test_a_published_release_whose_files_no_longer_match_its_manifest_is_refused(
    tmp_path, settings, curator, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path
    make_schemas(4)
    release = published_release(django_capture_on_commit_callbacks, user=curator, name="wsc-tampered")
    wsc = tmp_path / "releases" / "wsc-tampered" / "1.0.0" / "wsc.jsonl"
    wsc.chmod(0o644)
    wsc.write_text(wsc.read_text(encoding="utf-8").replace('"A"', '"B"'), encoding="utf-8")
    with pytest.raises(EvaluationError, match="no longer match the manifest"):
        evaluation_run_create(release=f"{release.name}@{release.version}", method="first")
    assert not EvaluationRun.objects.exists()


def test_a_done_run_is_not_run_again(tmp_path):
    run = _run(release=str(write_wsc_release(tmp_path / "r")), method="first", out_dir=str(tmp_path / "o"))
    (tmp_path / "o" / "predictions.jsonl").unlink()
    assert evaluation_run(run=run).status == RunStatus.DONE
    assert not (tmp_path / "o" / "predictions.jsonl").exists()


def test_winowhy_majority_baseline_uses_positive_and_negative_reasons_only(tmp_path):
    run = _run(
        release=str(write_winowhy_release(tmp_path / "r")), method="majority", out_dir=str(tmp_path / "o")
    )
    m = run.metrics
    assert (m["positives"], m["negatives"]) == (3, 3)  # the acceptable reason is left out
    assert m["best_threshold"]["n"] == 6 and m["best_threshold"]["accuracy"] == 0.5
    assert m["majority_baseline"] == {"n": 6, "correct": 3, "accuracy": 0.5}
    assert m["knowledge_types"]["Property"]["majority_baseline"]["n"] == 3
    assert m["cross_validation"]["computed"] is False
    lines = _predictions(run)
    assert len(lines) == 6 and {line["variant"] for line in lines} == {"reason"}


def test_winowhy_uploaded_scores_find_the_best_threshold(tmp_path):
    upload = tmp_path / "scores.csv"
    upload.write_text("id,prediction\n0.0,0.9\n0.1,0.2\n0.3,0.8\n1.0,0.7\n1.1,0.75\n1.2,0.1\n")
    run = _run(
        release=str(write_winowhy_release(tmp_path / "r")),
        method="predictions",
        predictions_path=str(upload),
        out_dir=str(tmp_path / "o"),
    )
    # t=0.7: positives 0.9 0.8 0.7 right, 0.75 (negative) wrong, 0.2 0.1 right -> 5/6
    assert run.metrics["best_threshold"] == {"threshold": 0.7, "n": 6, "correct": 5, "accuracy": 5 / 6}


def test_winowhy_refuses_the_first_candidate_baseline_before_the_run_is_stored(tmp_path):
    with pytest.raises(EvaluationError, match="WinoWhy reasons have none") as refused:
        evaluation_run_create(
            release=str(write_winowhy_release(tmp_path / "r")), method="first", out_dir=str(tmp_path / "o")
        )
    assert refused.value.field == "method"
    assert not EvaluationRun.objects.exists()


def test_comve_baseline_writes_semeval_submission_files(tmp_path):
    run = _run(release=str(write_comve_release(tmp_path / "r")), method="first", out_dir=str(tmp_path / "o"))
    assert run.metrics["a"]["correct"] == 2 and run.metrics["a"]["n"] == 3  # answers 0, 1, 0
    assert run.metrics["b"]["correct"] == 1  # answers A, B
    c = run.metrics["c"]  # copying the false statement: some words match, no 4-gram does
    assert c["computed"] is True and c["matches"][0] > 0 and c["matches"][3] == 0
    assert c["bleu"] == 0.0  # no smoothing, as the official scorer
    out = tmp_path / "o"
    assert (out / "subtaskA_answers.csv").read_text() == "1175,0\n452,0\n275,0\n"
    assert (out / "subtaskB_answers.csv").read_text() == "1175,A\n452,A\n"
    assert (out / "subtaskC_answers.csv").read_text().splitlines()[
        0
    ] == "1175,He loves to stroll at the park with his bed"


def test_comve_uploaded_semeval_files_are_scored_like_the_official_scorer(tmp_path):
    uploads = tmp_path / "submission"
    uploads.mkdir()
    (uploads / "subtaskA_answers.csv").write_text("1175,0\n452,1\n275,1\n")
    (uploads / "subtaskB_answers.csv").write_text("1175,A\n452,B\n")
    (uploads / "subtaskC_answers.csv").write_text(
        "1175,A bed is too heavy to carry with when strolling at a park\n"
        "452,An inverter is incapable of powering an entire continent.\n"
    )
    run = _run(
        release=str(write_comve_release(tmp_path / "r")),
        method="predictions",
        predictions_path=str(uploads),
        out_dir=str(tmp_path / "o"),
    )
    assert run.metrics["a"]["correct"] == 2 and run.metrics["b"]["accuracy"] == 1.0
    assert run.metrics["c"]["bleu"] == pytest.approx(1.0)


def test_comve_upload_with_a_bad_label_names_the_id(tmp_path):
    uploads = tmp_path / "submission"
    uploads.mkdir()
    (uploads / "subtaskA_answers.csv").write_text("1175,0\n452,2\n275,1\n")
    run = evaluation_run_create(
        release=str(write_comve_release(tmp_path / "r")),
        method="predictions",
        predictions_path=str(uploads),
        out_dir=str(tmp_path / "o"),
    )
    with pytest.raises(EvaluationError, match=r"subtaskA_answers.csv: id '452', field 'label': '2'"):
        evaluation_run(run=run)


def test_progress_maps_a_scorers_own_units_onto_items(tmp_path):
    from evaluation.runs.progress import RunProgress as _ProgressWriter

    run = evaluation_run_create(release=str(write_wsc_release(tmp_path / "r")), method="first")
    seen: list[tuple[int, int]] = []
    writer = _ProgressWriter(run, lambda done, total: seen.append((done, total)))
    writer.total = 10
    report = writer.stage(4, 6)  # items 4..9, scored as 12 requests (two candidates each)
    report(6, 12)
    report(12, 12)
    assert seen == [(4, 10), (7, 10), (10, 10)]  # the stage starts at its offset
    run.refresh_from_db()
    assert (run.progress_done, run.progress_total) == (10, 10)


def test_an_interrupted_run_is_marked_failed_not_left_running(tmp_path, monkeypatch):
    from evaluation.evaluators import EVALUATORS
    from releases.dataset import Dataset

    def interrupted(**kwargs):
        raise SystemExit("terminated by signal 15")

    monkeypatch.setattr(EVALUATORS[Dataset.WSC], "evaluate", interrupted)
    run = evaluation_run_create(
        release=str(write_wsc_release(tmp_path / "r")), method="first", out_dir=str(tmp_path / "o")
    )
    with pytest.raises(SystemExit):
        evaluation_run(run=run)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and "signal 15" in run.error


def test_a_file_that_is_not_a_model_fails_the_run_with_the_loaders_message(tmp_path):
    fake = tmp_path / "model.gguf"
    fake.write_text("not a model")
    run = evaluation_run_create(
        release=str(write_wsc_release(tmp_path / "r")),
        method="full",
        model_path=str(fake),
        out_dir=str(tmp_path / "o"),
    )
    with pytest.raises(EvaluationError, match="not a GGUF file"):
        evaluation_run(run=run)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and "not a GGUF file" in run.error
