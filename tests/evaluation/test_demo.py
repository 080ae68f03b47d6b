"""evaluation_demo: runs on the demo releases, so that the researcher's pages have content."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from evaluation.models import EvaluationRun, RunStatus
from releases.models import Release

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo_releases(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # the order of `./winnow up`
    call_command("seed_demo", stdout=StringIO())
    call_command("annotation_demo", stdout=StringIO())
    call_command("release_demo", stdout=StringIO())
    call_command("pipeline_demo", stdout=StringIO())


def evaluation_demo(*args: str) -> str:
    out = StringIO()
    call_command("evaluation_demo", *args, stdout=out)
    return out.getvalue()


def test_baselines_run_on_both_demo_releases_once(demo_releases, client):
    out = evaluation_demo("--no-model")
    runs = EvaluationRun.objects.all()
    assert sorted(runs.values_list("release_name", "method")) == sorted(
        [
            ("demo-wsc", "majority"),
            ("demo-wsc", "first"),
            ("demo-wsc", "random"),
            ("demo-winowhy", "majority"),
            ("demo-winowhy", "random"),
        ]
    ), out
    assert set(runs.values_list("status", flat=True)) == {RunStatus.DONE}
    assert [run.created_by.username if run.created_by else None for run in runs] == ["researcher"] * len(runs)
    wsc = Release.objects.get(name="demo-wsc")
    assert set(wsc.agreement_summary["campaigns"]) >= {"demo-switchability", "demo-associativity"}
    wsc_first = runs.get(release_name="demo-wsc", method="first")
    assert wsc_first.metrics["summary"]["n"] == 6  # the six demo schemas, each once
    again = evaluation_demo("--no-model")
    assert EvaluationRun.objects.count() == 5 and again.count("exists (done)") == 5
    client.login(username="researcher", password="researcher")
    page = client.get(reverse("evaluation:leaderboard", args=["demo-wsc", "1.0.0"]))
    assert page.status_code == 200
    assert page.content.decode().count("demo-wsc") >= 1 and b"majority" in page.content


def test_a_failed_run_is_tried_again(demo_releases):
    evaluation_demo("--no-model")
    EvaluationRun.objects.filter(method="random", release_name="demo-wsc").update(status=RunStatus.FAILED)
    out = evaluation_demo("--no-model")
    assert "demo-wsc@1.0.0 random: run #" in out and "accuracy" in out
    assert EvaluationRun.objects.filter(method="random", release_name="demo-wsc").count() == 2


def test_without_the_demo_releases_it_says_what_to_run(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    with pytest.raises(CommandError, match="release_demo"):
        evaluation_demo("--no-model")
    assert not EvaluationRun.objects.exists()


def test_refused_in_production(settings):
    settings.WINNOW_PRODUCTION = True
    with pytest.raises(CommandError, match="production"):
        evaluation_demo("--no-model")


def test_model_runs_go_to_the_worker_with_queue(demo_releases, tmp_path, monkeypatch, settings):
    from evaluation.management.commands import evaluation_demo as command
    from tests.evaluation import tiny_models

    model = tiny_models.build_tiny_causal(tmp_path / "models" / "tiny", arch="llama")
    settings.WINNOW_MODELS_DIR = tmp_path / "models"
    monkeypatch.setattr(command, "DEMO_MODEL", "tiny")  # a registry name, as the demo's SmolLM2
    out = evaluation_demo("--queue")  # tasks run eagerly in tests: the worker's code path
    queued = out.count("queued for the worker")
    assert queued == 3, out  # WSC partial and full, WinoWhy full
    runs = EvaluationRun.objects.filter(method__in=["partial", "full"])
    assert sorted(runs.values_list("release_name", "method")) == [
        ("demo-winowhy", "full"),
        ("demo-wsc", "full"),
        ("demo-wsc", "partial"),
    ]
    for run in runs:
        assert run.status == RunStatus.DONE, run.error
        assert run.model_path == str(model.resolve()) and run.model_name == "tiny"
        assert run.metrics["summary"]["n"] > 0
