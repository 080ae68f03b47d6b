"""The feature job with two real model workers (``celery -A config worker`` on a real Redis
broker, as tests/test_lost_workers.py): the chunks are shared between them and the cached
features equal those one process computes alone."""

from __future__ import annotations

import time

import numpy as np
import pytest

from evaluation.audit.frozen import compute_features
from evaluation.audit.services import audit_audit_input, audit_create, cached_features, source_of_collection
from evaluation.lm import model_cache
from evaluation.models import AuditChunk, AuditStatus
from evaluation.selectors import model_get
from tests import test_lost_workers
from tests.evaluation.audit_helpers import AFLITE_SMALL, make_wsc
from tests.test_lost_workers import _until

jobs = test_lost_workers.jobs  # the fixture that starts real workers on the test's broker corner

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_two_model_workers_share_an_audits_chunks_and_get_the_features_one_process_gets(
    tmp_path, jobs, monkeypatch, audit_registry, curator
):
    monkeypatch.setenv("WINNOW_MODELS_DIR", str(audit_registry))
    make_wsc(40)
    audit = audit_create(
        source=source_of_collection("wsc", "wsc-audit"),
        model="tiny-causal",
        folds=3,
        epochs=3,
        aflite=AFLITE_SMALL,
        chunk_texts=12,
        created_by=curator,
    )
    assert audit.chunks_total >= 8
    workers = [jobs(), jobs()]
    for worker in workers:  # both ready before the first chunk is sent, so both take some

        def ready(w: test_lost_workers.Worker = worker) -> bool:
            return "ready." in w.text()

        _until("the worker to be ready", ready, worker, every=0.2)
    for chunk_id in AuditChunk.objects.filter(audit=audit).values_list("pk", flat=True):
        jobs.broker.send("evaluation.tasks.audit_chunk_task", "models", chunk_id=chunk_id)

    def finished() -> bool:
        audit.refresh_from_db()
        return not audit.active

    _until("the audit to finish", finished, workers[0], every=0.2)
    assert audit.status == AuditStatus.DONE, audit.error
    chunks = list(AuditChunk.objects.filter(audit=audit))
    assert all(c.status == "done" for c in chunks)
    assert len({c.worker for c in chunks}) == 2  # both workers computed chunks
    assert audit.texts_done == audit.texts_total == sum(len(c.texts) for c in chunks)
    assert audit.attempts == 1  # the analysis ran once, after the last chunk
    built = audit_audit_input(audit)
    texts = built.texts()
    shared = cached_features(audit.model_sha256, texts)
    entry = model_get(name="tiny-causal")
    assert entry is not None
    alone = compute_features(model_cache.load(entry.path), texts)
    assert len(shared) == len(texts)
    for text, mine in zip(texts, alone, strict=True):
        np.testing.assert_allclose(shared[text].hidden, mine.hidden, rtol=1e-4, atol=1e-5)
        assert shared[text].logprob == pytest.approx(mine.logprob, abs=1e-4)
        assert shared[text].tokens == mine.tokens
    time.sleep(0.5)
    audit.refresh_from_db()
    assert audit.status == AuditStatus.DONE and len(audit.per_item["key"]) == 40
