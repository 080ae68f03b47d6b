"""The verdict's scores are ``manage.py evaluate``'s per-item scores for the same items,
model and method: a kept item's rows are released and evaluated, and the run's
predictions.jsonl is compared with the try's verdict (one scorer, not two)."""

import json
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from annotation.models import AdversarialItem, AdversarialTry, PipelineKind, TryStatus
from annotation.services import campaign_aggregate
from evaluation.adversarial import services
from releases.services import release_approve, release_create, release_publish
from tests.adversarial.factories import PAIR, TWINS, adversarial_round, slot_for, writing_campaign

pytestmark = pytest.mark.django_db


def _kept(found, writer, content, captured):
    assignment = slot_for(found, writer)
    with captured(execute=True):
        attempt = services.adversarial_try_create(writer=writer, assignment=assignment, raw=content)
    attempt.refresh_from_db()
    assert attempt.status == TryStatus.SCORED, attempt.error
    services.adversarial_keep(writer=writer, assignment=assignment)
    campaign_aggregate(campaign=writing_campaign(found))
    return AdversarialItem.objects.get(pk=attempt.item_id), attempt


def _evaluated(curator, captured, *, dataset, collection, model, method, out: Path, split="") -> list[dict]:
    with captured(execute=True):
        release = release_create(
            name=f"{collection}-{dataset}",
            dataset=dataset,
            version="1.0.0",
            split=split,  # written ComVE items are of the split pilot
            collection=collection,
            user=curator,
        )
    release.refresh_from_db()
    release_approve(release=release, user=curator)
    release_publish(release=release, user=curator)
    call_command(
        "evaluate",
        "--release",
        f"{release.name}@1.0.0",
        "--model",
        model,
        "--method",
        method,
        "--out",
        str(out),
        # the verdicts' threads: MKL's float32 products may round differently at another
        # thread count (on an AMD EPYC, by 1.4e-6 for 7 rows of 32 by 64)
        "--threads",
        str(settings.WINNOW_VERDICT_THREADS),
        "--no-progress",
    )
    return [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("model", "method"), [("tiny-llama", "partial"), ("tiny-llama", "full"), ("tiny-bert", "pll")]
)
def test_the_verdict_on_a_twin_pair_is_what_evaluate_scores_for_its_two_schemas(
    model, method, models_dir, annotator, curator, tmp_path, settings, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path / "media"
    found = adversarial_round(models=(model,), method=method, collection="adv")
    item, attempt = _kept(found, annotator, TWINS, django_capture_on_commit_callbacks)
    assert item.schema is not None and item.twin is not None
    records = _evaluated(
        curator,
        django_capture_on_commit_callbacks,
        dataset="wsc",
        collection="adv",
        model=model,
        method=method,
        out=tmp_path / "run",
    )
    by_id = {r["id"]: r for r in records if r["variant"] == "original"}
    assert len(by_id) == 2
    verdict = attempt.verdicts[model]
    assert verdict["method"] == method
    for schema, twin in zip((item.schema, item.twin), verdict["twins"], strict=True):
        (record,) = [r for key, r in by_id.items() if key.endswith(schema.external_id)]
        assert twin["scores"] == record["scores"]
        assert twin["choice"] == "AB"[record["prediction"]] and twin["right"] == "AB"[record["gold"]]
        assert twin["fooled"] == (not record["correct"])
        assert twin["margin"] == pytest.approx(
            record["scores"][record["gold"]] - record["scores"][1 - record["gold"]]
        )


@pytest.mark.slow
def test_the_verdict_on_a_comve_pair_is_what_evaluate_scores_for_subtask_a(
    models_dir, annotator, curator, tmp_path, settings, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path / "media"
    found = adversarial_round(
        kind=PipelineKind.ADVERSARIAL_COMVE, models=("tiny-llama",), method="full", collection="adv-comve"
    )
    item, attempt = _kept(found, annotator, PAIR, django_capture_on_commit_callbacks)
    assert item.comve_item is not None
    records = _evaluated(
        curator,
        django_capture_on_commit_callbacks,
        dataset="comve",
        collection="adv-comve",
        model="tiny-llama",
        method="full",
        out=tmp_path / "run",
        split="pilot",
    )
    (record,) = [r for r in records if r["variant"] == "a"]
    (twin,) = attempt.verdicts["tiny-llama"]["twins"]
    assert twin["scores"] == record["scores"]
    assert twin["perplexities"] == pytest.approx(record["perplexities"], rel=1e-6)
    assert twin["choice"] == record["prediction_by_rule"]["perplexity"] and twin["right"] == record["gold"]
    assert twin["fooled"] == (not record["correct"])
    assert AdversarialTry.objects.count() == 1
