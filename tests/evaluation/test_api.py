"""The evaluation API (issue 15): the server's models, runs, cloze runs and leaderboards,
with the pages' permissions, the pages' form wording and the pages' services."""

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from evaluation.models import ClozeRun, ClozeRunStatus, EvaluationRun, RunStatus
from evaluation.services import evaluation_run_create
from tests.openapi import schema_paths_having
from tests.releases.factories import create_release, make_comve, published_release

pytestmark = pytest.mark.django_db

RUNS = reverse("evaluation-api:run-list")
CLOZE_RUNS = reverse("evaluation-api:cloze-run-list")
MODELS = reverse("evaluation-api:model-list")


@pytest.fixture
def api(settings, tmp_path, models_folder):
    settings.WINNOW_MODELS_DIR = models_folder
    settings.WINNOW_UPLOAD_DIR = tmp_path / "uploads"
    return APIClient()


@pytest.fixture
def comve_release(release, curator, django_capture_on_commit_callbacks):
    """A published ComVE release beside the WSC one (the cloze form offers only these)."""
    make_comve(3)
    published_release(
        django_capture_on_commit_callbacks, user=curator, name="comve", dataset="comve", split="test"
    )
    return "comve@1.0.0"


# --- who may do what ---------------------------------------------------------------------

EVALUATION_ENDPOINTS = [
    ("get", MODELS),
    ("get", RUNS),
    ("post", RUNS),
    ("get", "/api/evaluation/runs/{run}/"),
    ("get", "/api/evaluation/leaderboards/wsc-mini/1.0.0/"),
]
CLOZE_ENDPOINTS = [("get", CLOZE_RUNS), ("post", CLOZE_RUNS), ("get", "/api/evaluation/cloze-runs/{cloze}/")]


@pytest.fixture
def existing(two_runs):
    cloze = ClozeRun.objects.create(
        release="comve@1.0.0", model_name="cloze-bert", model_path="/srv/models/x", status="done"
    )
    return {"run": two_runs[0].pk, "cloze": cloze.pk}


def _call(api, method, url, existing):
    url = url.format(**existing)
    if method == "post":
        return api.post(url, {"release": "wsc-mini@1.0.0", "method": "first", "model": "cloze-bert"})
    return api.get(url)


@pytest.mark.parametrize(("method", "url"), EVALUATION_ENDPOINTS + CLOZE_ENDPOINTS)
def test_anonymous_callers_are_refused_every_endpoint(api, existing, method, url):
    response = _call(api, method, url, existing)
    assert response.status_code in (401, 403)
    assert response.json()["detail"] == "Authentication credentials were not provided."


EVALUATORS_ONLY = "Evaluations are for researchers and curators."
RESEARCHERS_ONLY = "Cloze analyses are for researchers."  # as the cloze pages
DENIED = [
    (method, url, role, EVALUATORS_ONLY)
    for method, url in EVALUATION_ENDPOINTS
    for role in ("annotator", "nobody")
] + [
    (method, url, role, RESEARCHERS_ONLY)
    for method, url in CLOZE_ENDPOINTS
    for role in ("annotator", "curator", "nobody")
]


@pytest.mark.parametrize(("method", "url", "role", "reason"), DENIED)
def test_each_role_the_pages_refuse_is_refused_each_endpoint(
    api, request, existing, method, url, role, reason
):
    api.force_authenticate(request.getfixturevalue(role))
    response = _call(api, method, url, existing)
    assert response.status_code == 403
    assert response.json()["detail"] == reason
    assert (EvaluationRun.objects.count(), ClozeRun.objects.count()) == (2, 1)  # nothing started


@pytest.mark.parametrize("role", ["researcher", "curator"])
@pytest.mark.parametrize(("method", "url"), [e for e in EVALUATION_ENDPOINTS if e[0] == "get"])
def test_researchers_and_curators_read_every_evaluation_endpoint(api, request, existing, role, method, url):
    api.force_authenticate(request.getfixturevalue(role))
    assert _call(api, method, url, existing).status_code == 200


def test_every_evaluation_endpoint_is_in_the_openapi_schema(api, researcher):
    expected = {
        "/api/evaluation/models/": {"get"},
        "/api/evaluation/runs/": {"get", "post"},
        "/api/evaluation/runs/{run_id}/": {"get"},
        "/api/evaluation/leaderboards/{name}/{version}/": {"get"},
        "/api/evaluation/cloze-runs/": {"get", "post"},
        "/api/evaluation/cloze-runs/{id}/": {"get"},
    }
    paths = schema_paths_having(api, researcher, expected)
    start = paths["/api/evaluation/runs/"]["post"]
    assert set(start["requestBody"]["content"]) == {"application/json", "multipart/form-data"}
    assert {"201", "400"} <= set(start["responses"])


# --- models, runs, leaderboards ----------------------------------------------------------


def test_the_models_list_names_the_registry_models_and_never_their_paths(api, researcher, models_folder):
    api.force_authenticate(researcher)
    response = api.get(MODELS)
    models = {m["name"]: m for m in response.json()}
    assert models["cloze-bert"]["kind"] == "masked" and models["cloze-bert"]["offered_by"] == "models folder"
    assert models["cloze-bert"]["size_bytes"] > 0
    assert str(models_folder) not in response.content.decode()


def test_runs_are_listed_newest_first_and_filtered_by_release_method_and_status(api, researcher, two_runs):
    first, random = two_runs
    queued = evaluation_run_create(release="wsc-mini@1.0.0", method="majority")
    api.force_authenticate(researcher)
    body = api.get(RUNS).json()
    assert body["count"] == 3
    assert [r["id"] for r in body["results"]] == [queued.pk, random.pk, first.pk]
    done = api.get(RUNS, {"status": "done"}).json()["results"]
    assert {r["id"] for r in done} == {first.pk, random.pk}
    assert [r["id"] for r in api.get(RUNS, {"method": "first"}).json()["results"]] == [first.pk]
    assert api.get(RUNS, {"release": "wsc-mini"}).json()["count"] == 3
    assert api.get(RUNS, {"release": "wsc-mini@2.0.0"}).json()["count"] == 0
    assert api.get(RUNS, {"model": "cloze-bert"}).json()["count"] == 0
    bad = api.get(RUNS, {"status": "finished"})
    assert bad.status_code == 400 and bad.json() == {"status": ['"finished" is not a valid choice.']}


def test_a_run_reads_as_status_progress_in_items_and_metrics_without_server_paths(
    api, researcher, two_runs, tmp_path
):
    first = two_runs[0]
    api.force_authenticate(researcher)
    response = api.get(reverse("evaluation-api:run-detail", args=[first.pk]))
    run = response.json()
    assert run["status"] == "done" and run["release"] == "wsc-mini@1.0.0" and run["method"] == "first"
    assert run["progress"]["done"] == run["progress"]["total"] > 0 and run["progress"]["percent"] == 100
    assert run["metrics"] == first.metrics and run["metrics"]
    assert run["url"].endswith(reverse("evaluation:run-detail", args=[first.pk]))
    assert str(tmp_path) not in response.content.decode()  # no release, run or model folders
    assert api.get(reverse("evaluation-api:run-detail", args=[99999])).status_code == 404


def test_a_researcher_starts_a_run_that_is_sent_to_a_worker_once_committed(
    api, researcher, release, django_capture_on_commit_callbacks
):
    api.force_authenticate(researcher)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = api.post(RUNS, {"release": release, "method": "random", "seed": 3}, format="json")
    assert response.status_code == 201
    run = EvaluationRun.objects.get(pk=response.json()["id"])
    assert response.json()["status"] == "queued" and run.status == RunStatus.QUEUED
    assert response["Location"] == response.json()["url"]
    assert run.created_by == researcher and run.settings["seed"] == 3
    assert len(callbacks) == 1  # the job goes once the row is committed
    callbacks[0]()  # commit: eager Celery runs it here
    run.refresh_from_db()
    assert run.status == RunStatus.DONE
    assert api.get(reverse("evaluation-api:run-detail", args=[run.pk])).json()["status"] == "done"


@pytest.mark.parametrize(
    ("data", "errors"),
    [
        (
            {"release": "nope@1.0.0", "method": "first"},
            {"release": ["Choose a published release from the list."]},
        ),
        ({"method": "first"}, {"release": ["Choose a published release."]}),
        (
            {"release": "wsc-mini@1.0.0", "method": "full"},
            {"model": ["The method 'causal LM, full sentence' needs a model: choose one."]},
        ),
        (
            {"release": "wsc-mini@1.0.0", "method": "full", "model": "cloze-bert"},
            {
                "model": [
                    "cloze-bert is a masked LM; the method 'causal LM, full sentence' needs a causal LM."
                ]
            },
        ),
        (
            {"release": "wsc-mini@1.0.0", "method": "pll", "model": "/etc/passwd"},
            {"model": ["Choose a model from the list."]},
        ),
        (
            {"release": "wsc-mini@1.0.0", "method": "first", "start_token": "eos"},
            {"start_token": ["A start token applies to a model's methods only: leave it empty."]},
        ),
        (
            {"release": "wsc-mini@1.0.0", "method": "majority", "normalization": "lm-eval"},
            {
                "normalization": [
                    "The lm-eval normalization applies to a causal LM's methods only: choose exact."
                ]
            },
        ),
        (
            {"release": "wsc-mini@1.0.0", "method": "first", "normalization": "softmax"},
            {"normalization": ["Choose exact or lm-eval."]},
        ),
        (
            {"release": "wsc-mini@1.0.0", "method": "first", "limit": 0},
            {"limit": ["The limit is at least 1 item (leave it empty to score all)."]},
        ),
        (
            {"release": "wsc-mini@1.0.0", "method": "predictions"},
            {"predictions": ["Upload the predictions file for this method."]},
        ),
    ],
)
def test_a_start_is_refused_in_the_forms_words_naming_the_field(api, researcher, release, data, errors):
    api.force_authenticate(researcher)
    response = api.post(RUNS, data, format="json")  # no seed: the form's 0, as the page
    assert response.status_code == 400
    assert response.json() == errors
    assert not EvaluationRun.objects.exists()


def test_a_release_that_is_not_published_is_not_offered(
    api, researcher, curator, release, django_capture_on_commit_callbacks
):
    draft = create_release(django_capture_on_commit_callbacks, user=curator, name="wsc-draft")
    api.force_authenticate(researcher)
    response = api.post(RUNS, {"release": f"{draft.name}@{draft.version}", "method": "first"}, format="json")
    assert response.status_code == 400
    assert response.json() == {"release": ["Choose a published release from the list."]}
    assert not EvaluationRun.objects.exists()


def test_refused_uploaded_predictions_are_named_by_their_own_name_and_not_kept(
    api, researcher, release, settings
):
    api.force_authenticate(researcher)
    bad = SimpleUploadedFile("my-preds.jsonl", b'{"id": "no-such-item", "prediction": 0}\n')
    response = api.post(
        RUNS, {"release": release, "method": "predictions", "predictions": bad}, format="multipart"
    )
    assert response.status_code == 400
    (message,) = response.json()["predictions"]
    assert message.startswith("my-preds.jsonl, row 1, field 'id'") and message.endswith(
        "; the file was not kept."
    )
    uploads = Path(settings.WINNOW_UPLOAD_DIR)
    assert not uploads.exists() or not any(p.is_file() for p in uploads.rglob("*"))
    assert not EvaluationRun.objects.exists()


def test_predictions_over_the_upload_limit_are_a_413_naming_the_file_and_the_limit(
    api, researcher, release, settings
):
    settings.WINNOW_MAX_UPLOAD_MB = 1
    api.force_authenticate(researcher)
    big = SimpleUploadedFile("huge.csv", b"id,prediction\n" + b"x,0\n" * 300_000)
    response = api.post(
        RUNS, {"release": release, "method": "predictions", "seed": 0, "predictions": big}, format="multipart"
    )
    assert response.status_code == 413
    assert "huge.csv is larger than the upload limit of 1 MB" in response.json()["predictions"][0]
    assert not EvaluationRun.objects.exists()


def test_the_leaderboard_has_the_rows_of_its_page_and_an_unknown_one_is_a_404(api, researcher, two_runs):
    api.force_authenticate(researcher)
    board = api.get(reverse("evaluation-api:leaderboard", args=["wsc-mini", "1.0.0"])).json()
    assert board["release"] == "wsc-mini@1.0.0"
    assert sorted(row["run"] for row in board["rows"]) == sorted(r.pk for r in two_runs)
    assert {"label", "accuracy", "dataset"} <= set(board["columns"])
    assert board["url"].endswith(reverse("evaluation:leaderboard", args=["wsc-mini", "1.0.0"]))
    api.force_login(researcher)  # the page's own table, as its JSON download gives it
    page = json.loads(
        api.get(reverse("evaluation:leaderboard-table", args=["wsc-mini", "1.0.0", "json"])).content
    )
    assert (board["columns"], board["rows"]) == (page["columns"], page["rows"])
    unknown = api.get(reverse("evaluation-api:leaderboard", args=["nope", "1.0.0"]))
    assert unknown.status_code == 404
    assert unknown.json() == {"detail": "no leaderboard for nope@1.0.0: no such published release"}


# --- cloze runs --------------------------------------------------------------------------


def test_a_researcher_starts_a_cloze_run_lists_it_and_reads_its_tables(
    api, researcher, comve_release, models_folder, django_capture_on_commit_callbacks
):
    api.force_authenticate(researcher)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = api.post(
            CLOZE_RUNS,
            {"release": comve_release, "model": "cloze-bert", "k": 3, "pairs": 2, "limit": 1},
            format="json",
        )
    assert response.status_code == 201 and len(callbacks) == 1
    assert response.json()["status"] == "queued"  # as stored, before the worker took it
    run = ClozeRun.objects.get()
    assert run.status == ClozeRunStatus.DONE, run.error  # eager Celery in the tests
    assert run.created_by == researcher
    listed = api.get(CLOZE_RUNS).json()
    assert [r["id"] for r in listed["results"]] == [run.pk]
    detail = api.get(reverse("evaluation-api:cloze-run-detail", args=[run.pk]))
    body = detail.json()
    assert body["status"] == "done" and body["model"] == "cloze-bert" and body["model_kind"] == "masked"
    assert body["tables"] and all(t["title"] for t in body["tables"].values())
    assert any(t["rows"] for t in body["tables"].values())
    assert str(models_folder) not in detail.content.decode() and run.out_dir not in detail.content.decode()


@pytest.mark.parametrize(
    ("data", "errors"),
    [
        (
            {"release": "wsc-mini@1.0.0", "model": "cloze-bert", "k": 3},
            {"release": ["Choose a published release from the list."]},
        ),
        (
            {"release": "comve@1.0.0", "model": "/etc/passwd", "k": 3},
            {"model": ["Choose a model from the list."]},
        ),
        ({"release": "comve@1.0.0", "k": 3}, {"model": ["Choose a model from the list."]}),
        (
            {"release": "comve@1.0.0", "model": "cloze-bert", "k": 3, "start_token": "eos"},
            {"start_token": ["cloze-bert is a masked LM: a start token is for causal LMs."]},
        ),
        (
            {"release": "comve@1.0.0", "model": "cloze-bert", "k": 1},
            {"k": ["Ensure this value is greater than or equal to 2."]},
        ),
    ],
)
def test_a_cloze_start_is_refused_in_the_forms_words_naming_the_field(
    api, researcher, comve_release, data, errors
):
    api.force_authenticate(researcher)
    response = api.post(CLOZE_RUNS, data, format="json")
    assert response.status_code == 400
    assert response.json() == errors
    assert not ClozeRun.objects.exists()
