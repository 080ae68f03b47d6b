"""Rows a campaign creates, recorded with their provenance like an import's.

Every item keeps its provenance (DESIGN section 4). A file's rows name the file, their row
and the file's SHA-256, under the import batch that read them; the rows an aggregation
makes from written answers (a reason written for a question, a ComVE item written or
rewritten) do the same, with the campaign's judgments as the source rows:

- one :class:`~datasets.models.ImportBatch` of format ``campaign`` per aggregation that
  writes something, its ``files`` naming the source ``campaign:<name>`` with the SHA-256
  over the judgments the rows were made from, and the judgments' ids in its summary;
- each row's ``source_file`` is ``campaign:<name>`` (:func:`campaign_source_file`), its
  ``source_row`` the judgment's id, its ``file_checksum`` that SHA-256, its batch that batch.

:class:`CampaignRows` collects what the items of one aggregation write and writes it at
the end (so the checksum covers every source row); a judgment already made into a row is
never made into a second one, so aggregating again creates nothing. :func:`reasons_copy`
records a pipeline's copies of reasons the same way, the copied reasons as source rows.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import models, transaction

from datasets.models import (
    ComVEDataset,
    ComVEItem,
    ComVESplit,
    ImportBatch,
    ImportFormat,
    Reason,
    ReasonOrigin,
    Schema,
)


def campaign_source_file(campaign_name: str) -> str:
    """The ``source_file`` of the rows campaign ``campaign_name`` created."""
    return f"campaign:{campaign_name}"


@dataclass(frozen=True)
class SourceJudgment:
    """A judgment a row is made from, as its batch records it: the row's ``source_row`` is
    its id, and the batch's checksum covers what it said."""

    id: int
    answer: str = ""
    text: str = ""
    payload: dict[str, Any] = field(default_factory=dict)

    def line(self) -> str:
        """The judgment as one canonical line of the batch's checksummed source."""
        record = {"judgment": self.id, "answer": self.answer, "text": self.text, "payload": self.payload}
        return json.dumps(record, sort_keys=True, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class NewReason:
    """A reason written for ``schema`` (WinoWhy 2.1): origin human, no plausibility yet."""

    judgment: SourceJudgment
    schema_id: int


@dataclass(frozen=True)
class NewComVEItem:
    """A ComVE item written from scratch (dataset comve, split pilot), in ``collection``."""

    judgment: SourceJudgment
    collection: str = ""


@dataclass(frozen=True)
class RewrittenComVEItem:
    """A ComVE item whose content a rewrite replaced: its provenance becomes the rewrite's."""

    judgment: SourceJudgment
    item_id: int


@dataclass(frozen=True)
class TwinQuestion:
    """One Winograd question of a written twin pair, cut at its pronoun (or blank)."""

    text_before: str
    pronoun: str
    text_after: str
    answer: str  # "A" | "B"


@dataclass(frozen=True)
class NewTwinPair:
    """A Winograd twin pair written from scratch (adversarial writing, issue 27): two
    schemas of ``collection`` with the same candidates, each the other's twin."""

    judgment: SourceJudgment
    collection: str
    candidate_a: str
    candidate_b: str
    questions: tuple[TwinQuestion, TwinQuestion]


WrittenRow = NewReason | NewComVEItem | RewrittenComVEItem | NewTwinPair


def _checksum(lines: Iterable[str]) -> str:
    digest = hashlib.sha256()
    for line in lines:
        digest.update(line.encode("utf-8") + b"\n")
    return digest.hexdigest()


def comve_item_values(payload: dict[str, Any]) -> dict[str, Any]:
    """A ComVE item's content as a writer's answer gives it (``answers.comve_payload_clean``)."""
    false_index = int(payload["false_index"])
    return {
        "statement_0": payload["statement_0"],
        "statement_1": payload["statement_1"],
        "false_index": false_index,
        "false_statement": payload["statement_1"] if false_index else payload["statement_0"],
        # an adversarial ComVE pair may leave out subtask B's reasons and C's references
        "option_a": payload.get("option_a", ""),
        "option_b": payload.get("option_b", ""),
        "option_c": payload.get("option_c", ""),
        "correct_option": payload.get("correct_option", ""),
        "references": list(payload.get("references") or []),
    }


class CampaignRows:
    """What one aggregation of campaign ``campaign_name`` writes from written answers:
    :meth:`add` takes each item's rows as the aggregation goes (and says how many are new),
    :meth:`write` writes them all, with their batch, at the end."""

    def __init__(self, *, campaign_name: str, task: str) -> None:
        self.campaign_name = campaign_name
        self.task = task
        self.source_file = campaign_source_file(campaign_name)
        self.reasons: list[NewReason] = []
        self.comve_items: list[NewComVEItem] = []
        self.rewritten: list[RewrittenComVEItem] = []
        self.twin_pairs: list[NewTwinPair] = []
        #: After :meth:`write`: each source judgment's id -> the ids of the rows made from it
        #: (a ComVE item; a twin pair's two schemas, the sentence's first).
        self.made: dict[int, list[int]] = {}
        self._reason_rows: set[int] | None = None

    def _written_reason_rows(self) -> set[int]:
        """The judgments of this campaign already made into reasons (read once)."""
        if self._reason_rows is None:
            self._reason_rows = set(
                Reason.objects.filter(source_file=self.source_file).values_list("source_row", flat=True)
            )
        return self._reason_rows

    def _comve_external_id(self, judgment: SourceJudgment) -> str:
        return f"{self.campaign_name}-{judgment.id}"

    def _twin_external_ids(self, judgment: SourceJudgment) -> tuple[str, str]:
        # (a judgment's id is unique over every campaign: the name only helps a reader)
        first = f"{self.campaign_name[:40]}-{judgment.id}"
        return first, f"{first}-twin"

    def add(self, rows: Sequence[WrittenRow]) -> int:
        """Take one item's rows; returns how many rows they create (a judgment already
        made into a row, or an empty reason, creates none)."""
        created = 0
        written = self._written_reason_rows() if any(isinstance(r, NewReason) for r in rows) else set()
        new_comve = [r for r in rows if isinstance(r, NewComVEItem)]
        existing_comve = (
            set(
                ComVEItem.objects.filter(
                    dataset=ComVEDataset.COMVE,
                    split=ComVESplit.PILOT,
                    external_id__in=[self._comve_external_id(r.judgment) for r in new_comve],
                ).values_list("external_id", flat=True)
            )
            if new_comve
            else set()
        )
        for row in rows:
            if isinstance(row, NewTwinPair):
                if Schema.objects.filter(source_file=self.source_file, source_row=row.judgment.id).exists():
                    continue  # made into its pair by an earlier aggregation
                self.twin_pairs.append(row)
                created += 2
                continue
            if isinstance(row, NewReason):
                if row.judgment.id in written or not row.judgment.text.strip():
                    continue
                written.add(row.judgment.id)
                self.reasons.append(row)
                created += 1
            elif isinstance(row, NewComVEItem):
                external_id = self._comve_external_id(row.judgment)
                if external_id in existing_comve:
                    continue
                existing_comve.add(external_id)
                self.comve_items.append(row)
                created += 1
            elif not ComVEItem.objects.filter(
                pk=row.item_id, source_file=self.source_file, source_row=row.judgment.id
            ).exists():  # not yet the rewrite's provenance
                self.rewritten.append(row)
        return created

    def sources(self) -> list[SourceJudgment]:
        """The judgments the rows to write are made from, by id."""
        rows: list[WrittenRow] = [*self.reasons, *self.comve_items, *self.rewritten, *self.twin_pairs]
        found = {r.judgment.id: r.judgment for r in rows}
        return [found[pk] for pk in sorted(found)]

    def write(self) -> ImportBatch | None:
        """Write every row taken, under one batch of format ``campaign``; None when there
        was nothing to write. Runs inside the caller's transaction (the aggregation's)."""
        sources = self.sources()
        if not sources:
            return None
        checksum = _checksum(s.line() for s in sources)
        with transaction.atomic():
            batch = ImportBatch.objects.create(
                format=ImportFormat.CAMPAIGN,
                files=[{"name": self.source_file, "sha256": checksum, "rows": len(sources)}],
                options={"campaign": self.campaign_name, "task": self.task},
                created=len(self.reasons) + len(self.comve_items) + 2 * len(self.twin_pairs),
                updated=len(self.rewritten),
                summary={
                    "campaign": self.campaign_name,
                    "task": self.task,
                    "judgments": [s.id for s in sources],
                    "counts": {
                        "reasons": len(self.reasons),
                        "comve_items": len(self.comve_items),
                        "rewritten": len(self.rewritten),
                        "twin_pairs": len(self.twin_pairs),
                    },
                },
            )
            provenance = {"source_file": self.source_file, "file_checksum": checksum, "import_batch": batch}
            self._write_reasons(provenance)
            for row in self.comve_items:
                values = comve_item_values(row.judgment.payload)
                comve = ComVEItem.objects.create(
                    dataset=ComVEDataset.COMVE,
                    collection=row.collection,
                    split=ComVESplit.PILOT,
                    external_id=self._comve_external_id(row.judgment),
                    **values,
                    has_a=True,
                    has_b=bool(values["option_a"] and values["correct_option"]),
                    has_c=bool(values["references"]),
                    source_row=row.judgment.id,
                    **provenance,
                )
                self.made[row.judgment.id] = [comve.pk]
            for pair in self.twin_pairs:
                self._write_twin_pair(pair, provenance)
            for rewrite in self.rewritten:
                ComVEItem.objects.filter(pk=rewrite.item_id).update(
                    source_row=rewrite.judgment.id, **provenance
                )
        self.reasons, self.comve_items, self.rewritten, self.twin_pairs = [], [], [], []
        return batch

    def _write_twin_pair(self, pair: NewTwinPair, provenance: dict[str, Any]) -> None:
        """The pair's two schemas, each the other's twin."""
        made = [
            Schema.objects.create(
                collection=pair.collection,
                external_id=external_id,
                text_before=question.text_before,
                pronoun=question.pronoun,
                text_after=question.text_after,
                candidate_a=pair.candidate_a,
                candidate_b=pair.candidate_b,
                answer=question.answer,
                source=self.source_file,
                source_row=pair.judgment.id,
                **provenance,
            )
            for external_id, question in zip(
                self._twin_external_ids(pair.judgment), pair.questions, strict=True
            )
        ]
        first, second = made
        Schema.objects.filter(pk=first.pk).update(twin=second)
        Schema.objects.filter(pk=second.pk).update(twin=first)
        self.made[pair.judgment.id] = [first.pk, second.pk]

    def _write_reasons(self, provenance: dict[str, Any]) -> None:
        """Each reason numbered after its question's last reason, in the order taken."""
        schema_ids = {r.schema_id for r in self.reasons}
        last = dict(
            Reason.objects.filter(schema_id__in=schema_ids)
            .values("schema_id")
            .annotate(m=models.Max("position"))
            .values_list("schema_id", "m")
        )
        rows = []
        for row in self.reasons:
            last[row.schema_id] = (last.get(row.schema_id) or 0) + 1
            rows.append(
                Reason(
                    schema_id=row.schema_id,
                    position=last[row.schema_id],
                    text=row.judgment.text,
                    origin=ReasonOrigin.HUMAN,
                    plausibility=None,
                    source_row=row.judgment.id,
                    **provenance,
                )
            )
        Reason.objects.bulk_create(rows)


def reasons_copy(*, source: str, copies: Sequence[tuple[int, Reason]], origin: str) -> dict[int, int]:
    """Copy each reason onto a question, ``copies``: (schema id, reason), with origin
    ``origin``, once: a reason copied before under ``source`` is not copied again. Recorded
    like :class:`CampaignRows` writes: ``source_file`` ``source``, ``source_row`` the copied
    reason's id, one batch of format ``campaign`` with the SHA-256 over the copied reasons.
    Returns every copied reason's id -> its copy's id (the earlier copies too)."""
    with transaction.atomic():
        existing = dict(Reason.objects.filter(source_file=source).values_list("source_row", "pk"))
        todo = [(schema_id, reason) for schema_id, reason in copies if reason.pk not in existing]
        if todo:
            originals = sorted({r.pk: r for _, r in todo}.values(), key=lambda r: r.pk)
            lines = [json.dumps({"reason": r.pk, "text": r.text}, ensure_ascii=False) for r in originals]
            checksum = _checksum(lines)
            batch = ImportBatch.objects.create(
                format=ImportFormat.CAMPAIGN,
                files=[{"name": source, "sha256": checksum, "rows": len(originals)}],
                options={"source": source},
                created=len(todo),
                summary={"source": source, "reasons": [r.pk for r in originals]},
            )
            last = dict(
                Reason.objects.filter(schema_id__in={s for s, _ in todo})
                .values("schema_id")
                .annotate(m=models.Max("position"))
                .values_list("schema_id", "m")
            )
            for schema_id, original in todo:
                last[schema_id] = (last.get(schema_id) or 0) + 1
                copy = Reason.objects.create(
                    schema_id=schema_id,
                    position=last[schema_id],
                    text=original.text,
                    origin=origin,
                    plausibility=None,
                    source_file=source,
                    source_row=original.pk,
                    file_checksum=checksum,
                    import_batch=batch,
                )
                existing[original.pk] = copy.pk
    return {reason.pk: existing[reason.pk] for _, reason in copies}
