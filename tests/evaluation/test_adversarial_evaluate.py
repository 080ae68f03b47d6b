"""`manage.py evaluate` on an adversarial release (issue 27): accuracy per round, on the items
that fooled a model of their round and on those that did not, and per ANLI split, in the
run's metrics, its printed summary and its page."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.urls import reverse

from evaluation.metrics.adversarial import AdversarialOutcome, adversarial_metrics
from evaluation.models import EvaluationRun, RunStatus
from tests.evaluation.adversarial_factories import make_item, make_round, make_writer
from tests.releases.factories import published_release


def test_accuracy_per_round_on_fooling_and_non_fooling_items_and_per_split():
    outcomes = [
        AdversarialOutcome(1, True, "test", True),
        AdversarialOutcome(1, True, "test", False),
        AdversarialOutcome(1, False, "train", True),
        AdversarialOutcome(2, True, "dev", False),
        AdversarialOutcome(2, False, "train", True),
        AdversarialOutcome(None, False, None, False),  # not written with models in the loop
    ]
    metrics = adversarial_metrics(outcomes)
    assert metrics is not None
    assert (metrics["items"], metrics["other_items"]) == (5, 1)
    assert [(r["round"], r["correct"], r["n"]) for r in metrics["by_round"]] == [(1, 2, 3), (2, 1, 2)]
    assert (metrics["fooling"]["correct"], metrics["fooling"]["n"]) == (1, 3)
    assert metrics["non_fooling"]["accuracy"] == 1.0
    assert [(s["split"], s["n"]) for s in metrics["by_split"]] == [("train", 2), ("dev", 1), ("test", 2)]
    low, high = metrics["fooling"]["wilson_95"]
    assert low < 1 / 3 < high
    assert adversarial_metrics([AdversarialOutcome(None, False, None, True)]) is None
    only_fooling = adversarial_metrics([AdversarialOutcome(1, True, None, True)])
    assert only_fooling is not None and only_fooling["non_fooling"] == {
        "n": 0,
        "correct": 0,
        "accuracy": None,
        "wilson_95": None,
    }
    assert only_fooling["by_split"] == []


@pytest.fixture
def adversarial_release(db, tmp_path, settings, curator, django_capture_on_commit_callbacks):
    """A published release of two rounds: round 1 two fooling items (a, b), round 2 one
    fooling item (c) and one that fooled nobody (d); each a twin pair of schemas."""
    settings.MEDIA_ROOT = tmp_path / "media"
    first, second = make_round("adv", 1, ("smollm2",)), make_round("adv", 2, ("smollm2",))
    writer = make_writer("alice")
    for round_, key, fooled in (
        (first, "a", True),
        (first, "b", True),
        (second, "c", True),
        (second, "d", False),
    ):
        make_item(round_, writer, fooled=("smollm2",) if fooled else (), validation="validated", key=key)
    release = published_release(
        django_capture_on_commit_callbacks, user=curator, name="adv", collection="adv"
    )
    return f"{release.name}@{release.version}"


def _evaluate(tmp_path, release, predictions: dict[str, str]) -> tuple[EvaluationRun, str]:
    path = tmp_path / "predictions.csv"
    path.write_text("id,prediction\n" + "".join(f"{k},{v}\n" for k, v in predictions.items()))
    out = io.StringIO()
    call_command(
        "evaluate",
        "--release",
        release,
        "--method",
        "predictions",
        "--predictions",
        str(path),
        "--out",
        str(tmp_path / "run"),
        "--no-progress",
        stdout=out,
    )
    return EvaluationRun.objects.get(), out.getvalue()


def test_evaluate_reports_accuracy_per_round_and_on_fooling_items(
    tmp_path, adversarial_release, client, researcher
):
    # the answers: "-1" sentences A, "-2" twins B; wrong on a's twin and on both of c's
    predictions = {
        "a-1": "A",
        "a-2": "A",
        "b-1": "A",
        "b-2": "B",
        "c-1": "B",
        "c-2": "A",
        "d-1": "A",
        "d-2": "B",
    }
    run, printed = _evaluate(tmp_path, adversarial_release, predictions)
    assert run.status == RunStatus.DONE
    adversarial = run.metrics["adversarial"]
    assert [(r["round"], r["correct"], r["n"]) for r in adversarial["by_round"]] == [(1, 3, 4), (2, 2, 4)]
    assert (adversarial["fooling"]["correct"], adversarial["fooling"]["n"]) == (3, 6)
    assert (adversarial["non_fooling"]["correct"], adversarial["non_fooling"]["n"]) == (2, 2)
    assert "round 1: 75.00% (3/4)" in printed and "round 2: 50.00% (2/4)" in printed
    assert "fooled a model of its round: 50.00% (3/6); fooled no model: 100.00% (2/2)" in printed
    client.force_login(researcher)
    page = client.get(reverse("evaluation:run-detail", args=[run.pk])).content.decode()
    assert 'id="adversarial-figures"' in page and "round 2" in page and "fooled no model" in page


def test_a_release_without_adversarial_items_reports_none(
    tmp_path, settings, curator, django_capture_on_commit_callbacks
):
    from tests.releases.factories import make_schemas

    settings.MEDIA_ROOT = tmp_path / "media"
    make_schemas(4)
    release = published_release(django_capture_on_commit_callbacks, user=curator, name="plain")
    run, printed = _evaluate(tmp_path, f"{release.name}@{release.version}", {str(i): "A" for i in range(4)})
    assert "adversarial" not in run.metrics and "adversarial items" not in printed


def test_a_comve_release_reports_subtask_a_per_round_and_split(
    tmp_path, settings, curator, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path / "media"
    round_ = make_round("adv-comve", 1, ("smollm2",), comve=True)
    writer = make_writer("carol")
    for fooled in (True, True, False):
        make_item(round_, writer, fooled=("smollm2",) if fooled else (), validation="validated")
    release = published_release(
        django_capture_on_commit_callbacks,
        user=curator,
        name="adv-comve",
        dataset="comve",
        split="pilot",
        collection="adv-comve",
        adversarial={"seed": 0, "dev": 1, "test": 1},
    )
    out = io.StringIO()
    call_command(
        "evaluate",
        "--release",
        f"{release.name}@{release.version}",
        "--method",
        "first",
        "--out",
        str(tmp_path / "run"),
        "--no-progress",
        stdout=out,
    )
    adversarial = EvaluationRun.objects.get().metrics["adversarial"]
    # "first" answers statement 0; every written item's false statement is 1
    assert [(r["round"], r["correct"], r["n"]) for r in adversarial["by_round"]] == [(1, 0, 3)]
    assert (adversarial["fooling"]["n"], adversarial["non_fooling"]["n"]) == (2, 1)
    assert [(s["split"], s["n"]) for s in adversarial["by_split"]] == [("train", 1), ("dev", 1), ("test", 1)]
    assert "split dev: 0.00% (0/1)" in out.getvalue()
