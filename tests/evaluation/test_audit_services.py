"""Audits: creation refuses bad input and writes nothing; a run here computes the features
once (a second audit takes them from the cache) and stores the baselines, the map and AfLite."""

from __future__ import annotations

import numpy as np
import pytest

from datasets.models import Schema
from evaluation.audit.services import (
    AuditError,
    audit_create,
    audit_features,
    audit_run_here,
    source_of_collection,
    source_of_release,
)
from evaluation.models import Audit, AuditChunk, AuditStatus, FeatureVector
from tests.evaluation.audit_helpers import AFLITE_SMALL, comve_release, make_wsc, wsc_release

pytestmark = pytest.mark.django_db


def _create(release, **kw):
    args = {
        "model": "tiny-causal",
        "folds": 3,
        "epochs": 3,
        "aflite": AFLITE_SMALL,
        "chunk_texts": 40,
        "created_by": None,
    }
    return audit_create(source=source_of_release(f"{release.name}@{release.version}"), **{**args, **kw})


def test_an_audit_of_a_winograd_release_stores_baselines_map_and_aflite_and_a_second_audit_computes_nothing(
    audit_registry, curator, django_capture_on_commit_callbacks
):
    release = wsc_release(django_capture_on_commit_callbacks, curator)
    audit = audit_run_here(audit=_create(release))
    assert audit.status == AuditStatus.DONE, audit.error
    views = [row["view"] for row in audit.results["baselines"]]
    assert views == ["full", "no_context", "candidates"]
    for row in audit.results["baselines"]:
        assert 0 <= row["ci_low"] <= row["accuracy"] <= row["ci_high"] <= 1
        assert row["pair_pairs"] == 12
    assert len(audit.per_item["key"]) == 24 and len(audit.per_item["confidence"]) == 24
    assert audit.results["aflite"]["kept"] + audit.results["aflite"]["removed"] == 24
    assert audit.texts_cached == 0 and FeatureVector.objects.count() == audit.texts_total
    again = audit_run_here(audit=_create(release))
    assert again.status == AuditStatus.DONE
    assert again.texts_cached == again.texts_total  # everything from the cache
    assert sum(AuditChunk.objects.filter(audit=again).values_list("computed", flat=True)) == 0
    first, second = audit_features(audit), audit_features(again)
    assert np.array_equal(first["full"].hidden, second["full"].hidden)


def test_a_comve_audit_scores_each_statement_alone(
    audit_registry, curator, django_capture_on_commit_callbacks
):
    release = comve_release(django_capture_on_commit_callbacks, curator)
    audit = audit_run_here(audit=_create(release))
    assert audit.status == AuditStatus.DONE, audit.error
    assert [row["view"] for row in audit.results["baselines"]] == ["statement"]
    assert audit.results["lm"]["n"] == 40


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"model": "no-such-model"}, "model"),
        ({"folds": 30}, "folds"),
        ({"aflite": {**AFLITE_SMALL, "target_n": 500}}, "aflite.target_n"),
        ({"aflite": {"no_such_parameter": 1}}, "aflite"),
    ],
)
def test_bad_input_is_refused_naming_the_setting_and_writes_nothing(
    audit_registry, curator, django_capture_on_commit_callbacks, change, field
):
    release = wsc_release(django_capture_on_commit_callbacks, curator, n=8)
    with pytest.raises(AuditError) as refused:
        _create(release, **change)
    assert refused.value.field == field
    assert field.split(".")[-1] in refused.value.message
    assert not Audit.objects.exists() and not AuditChunk.objects.exists()


def test_items_with_no_labels_are_refused(audit_registry, curator, django_capture_on_commit_callbacks):
    make_wsc(6, collection="unlabelled")
    Schema.objects.filter(collection="unlabelled").update(answer="")
    with pytest.raises(AuditError) as refused:
        audit_create(
            source=source_of_collection("wsc", "unlabelled"), model="tiny-causal", created_by=curator
        )
    assert refused.value.field == "dataset" and "no labels" in refused.value.message
    assert not Audit.objects.exists()
