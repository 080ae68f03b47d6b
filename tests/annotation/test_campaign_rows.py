"""Rows a campaign creates keep their provenance like imported rows: a batch of format
campaign, the judgments as source rows, a SHA-256 over them (datasets.services.campaign_rows)."""

import hashlib
import json

import pytest

from annotation.models import Judgment, Task
from annotation.services import campaign_aggregate
from datasets.forms import ImportUploadForm
from datasets.models import ComVEItem, ImportBatch, ImportFormat, Reason, ReasonOrigin
from datasets.services import CampaignRows, NewReason, SourceJudgment, campaign_source_file, reasons_copy
from tests.annotation.factories import campaign_for, judgments_for
from tests.datasets.factories import ReasonFactory, SchemaFactory

pytestmark = pytest.mark.django_db


def _sha256_of(judgments: list[Judgment]) -> str:
    """The checksum as the batch documents it: one canonical JSON line per judgment, by id."""
    lines = [
        json.dumps(
            {"judgment": j.pk, "answer": j.answer, "text": j.text, "payload": j.payload},
            sort_keys=True,
            ensure_ascii=False,
        )
        + "\n"
        for j in sorted(judgments, key=lambda j: j.pk)
    ]
    return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


def test_written_reasons_name_their_judgment_and_a_campaign_batch_with_its_checksum():
    campaign = campaign_for(Task.REASON_WRITING, name="rw", items=2, k=2)
    judgments_for(campaign, answer=lambda item, i: {"text": f"reason {item.pk}.{i}"})
    summary = campaign_aggregate(campaign=campaign)
    assert summary.created == 4
    judgments = list(Judgment.objects.filter(campaign_item__campaign=campaign))
    batch = ImportBatch.objects.get(format=ImportFormat.CAMPAIGN)
    checksum = _sha256_of(judgments)
    assert batch.files == [{"name": "campaign:rw", "sha256": checksum, "rows": 4}]
    assert batch.summary["judgments"] == sorted(j.pk for j in judgments)
    assert batch.options == {"campaign": "rw", "task": "reason_writing"} and batch.created == 4
    reasons = Reason.objects.filter(source_file=campaign_source_file("rw"))
    assert {(r.source_row, r.file_checksum, r.import_batch_id) for r in reasons} == {
        (j.pk, checksum, batch.pk) for j in judgments
    }
    assert {r.text for r in reasons} == {j.text for j in judgments}
    # aggregating again writes nothing, and records no second batch
    assert campaign_aggregate(campaign=campaign).created == 0
    assert ImportBatch.objects.filter(format=ImportFormat.CAMPAIGN).count() == 1


def test_a_dry_run_records_no_batch_and_creates_nothing():
    campaign = campaign_for(Task.REASON_WRITING, k=1)
    judgments_for(campaign)
    assert campaign_aggregate(campaign=campaign, dry_run=True).created == 1
    assert not ImportBatch.objects.exists() and not Reason.objects.filter(origin=ReasonOrigin.HUMAN).exists()


def test_written_and_rewritten_comve_items_carry_the_judgment_they_came_from():
    writing = campaign_for(Task.COMVE_WRITING, name="cw", items=1)
    judgments_for(writing)
    campaign_aggregate(campaign=writing)
    written = ComVEItem.objects.get(source_file="campaign:cw")
    judgment = Judgment.objects.get(campaign_item__campaign=writing)
    first = ImportBatch.objects.get(format=ImportFormat.CAMPAIGN)
    assert (written.external_id, written.source_row, written.import_batch_id) == (
        f"cw-{judgment.pk}",
        judgment.pk,
        first.pk,
    )
    assert written.file_checksum == first.files[0]["sha256"] == _sha256_of([judgment])

    rewrite = campaign_for(Task.COMVE_REWRITE, name="crw")
    item = rewrite.items.get().comve_item
    assert item is not None
    judgments_for(rewrite, prefix="rewriter")
    campaign_aggregate(campaign=rewrite)
    item.refresh_from_db()
    rewritten_by = Judgment.objects.get(campaign_item__campaign=rewrite)
    second = ImportBatch.objects.filter(format=ImportFormat.CAMPAIGN).latest("pk")
    assert item.statement_1 == "He drank a glass of stones."
    assert (item.source_file, item.source_row, item.import_batch_id) == (
        "campaign:crw",
        rewritten_by.pk,
        second.pk,
    )
    assert item.file_checksum == _sha256_of([rewritten_by]) and second.updated == 1
    campaign_aggregate(campaign=rewrite)  # again: the provenance stays with the same batch
    item.refresh_from_db()
    assert item.import_batch_id == second.pk
    assert ImportBatch.objects.filter(format=ImportFormat.CAMPAIGN).count() == 2


def test_an_empty_or_already_written_reason_creates_no_row_and_no_batch():
    schema = SchemaFactory.create()
    rows = CampaignRows(campaign_name="empty", task=Task.REASON_WRITING)
    assert rows.add([NewReason(judgment=SourceJudgment(id=1, text="   "), schema_id=schema.pk)]) == 0
    assert rows.write() is None and not ImportBatch.objects.exists()
    ReasonFactory.create(schema=schema, source_file="campaign:empty", source_row=2)
    rows = CampaignRows(campaign_name="empty", task=Task.REASON_WRITING)  # the next aggregation
    assert (
        rows.add([NewReason(judgment=SourceJudgment(id=2, text="already there"), schema_id=schema.pk)]) == 0
    )
    assert rows.write() is None


def test_a_pipelines_copies_of_reasons_are_recorded_once_with_the_copied_reasons_as_source_rows():
    original, other = ReasonFactory.create(), SchemaFactory.create()
    copies = reasons_copy(
        source="pipeline:p:reverse", copies=[(other.pk, original)], origin=ReasonOrigin.REVERSE
    )
    copy = Reason.objects.get(pk=copies[original.pk])
    batch = ImportBatch.objects.get(format=ImportFormat.CAMPAIGN)
    assert (copy.schema_id, copy.text, copy.origin, copy.source_row) == (
        other.pk,
        original.text,
        "reverse",
        original.pk,
    )
    assert copy.import_batch_id == batch.pk and copy.file_checksum == batch.files[0]["sha256"]
    assert len(copy.file_checksum) == 64
    again = reasons_copy(
        source="pipeline:p:reverse", copies=[(other.pk, original)], origin=ReasonOrigin.REVERSE
    )
    assert again == copies and ImportBatch.objects.count() == 1


def test_the_upload_page_offers_no_campaign_format():
    offered = {value for value, _ in ImportUploadForm.base_fields["format"].choices}  # type: ignore[attr-defined]  # a ChoiceField's
    assert ImportFormat.CAMPAIGN not in offered and ImportFormat.WINOWHY in offered
