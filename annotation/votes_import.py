"""Import published votes as the judgments of an imported campaign (service).

``votes_import(format=..., path=..., campaign_name=...)`` reads and checks the whole file
first, then writes everything in one transaction, so a bad file writes nothing; every error
names the file, the row and the field.

Formats
-------
``winowhy``
    WinoWhy's ``winowhy.json``. Each reason's plausibility score is the share of 5 votes;
    it becomes 5 judgments ("plausible" / "implausible") by 5 anonymous raters, users
    ``import-<campaign>-rater-1`` .. ``-5`` (no password, no role). Which rater casts which
    vote is not in the data: a seeded random order (seed 0) decides it, so figures that need
    identities (Cohen's kappa, agreement per annotator) describe that assignment. The
    Reason rows must exist already (import the data set first); a reason is found by
    (collection ``wsc273``, question index, position in the question's list), and its stored
    plausibility, if any, must equal the file's score.
``jsonl``
    One JSON object per line: ``{"item": REF, "annotator": NAME, "answer": VALUE}`` and no
    other keys. ``REF`` names an existing item by its natural key:

    - ``schema:<collection>/<external_id>`` e.g. ``schema:wsc273/12``
    - ``reason:<collection>/<external_id>/<position>`` e.g. ``reason:wsc273/12/3``
    - ``comve:<dataset>/<split>/<external_id>`` e.g. ``comve:comve/test/17``

    ``NAME`` (letters, digits and ``_ . @ + -``, at most 60) becomes the user
    ``import-<campaign>-<NAME>``. ``VALUE`` must be one of the task's answers (e.g.
    plausible/implausible). All items of one file are of the kind the task works on. A
    new campaign needs ``task``; its K is the largest number of judgments of one item.

The campaign is created (or an existing empty one is used), marked ``imported=True`` and
closed (no item is handed out). The judgments are written by
``annotation.services.judgment_import`` (the same answer validation, K check and
``judgment_count`` bookkeeping as every other bulk import).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.models import Campaign, CampaignItem, CampaignStatus, Task
from annotation.services import ImportedVote, JudgmentRefused, judgment_import
from annotation.task_types import TASKS
from core.errors import WinnowError
from core.formulas import formula_refusal
from core.jsonl import JsonLinesError, loads, read_jsonl
from datasets.models import ComVEItem, Reason, Schema

FORMATS = ("winowhy", "jsonl")
WINOWHY_RATERS = 5
WINOWHY_SEED = 0
WINOWHY_COLLECTION = "wsc273"
ANNOTATOR_NAME = re.compile(r"^[A-Za-z0-9_.@+-]{1,60}$")
# The kind of item reference (see _REF) each task with categorical answers takes.
_REF_KIND = {"schemas": "schema", "reasons": "reason", "comve": "comve"}
ITEM_KIND_OF_TASK: dict[str, str] = {
    name: _REF_KIND[spec.item_kinds[0]]
    for name, spec in TASKS.items()
    # a model's explanations have no published votes to import
    if not spec.free_text and spec.item_kinds[0] in _REF_KIND
}


class VotesImportError(WinnowError):
    """The file cannot be imported; the message names file, row and field. Nothing was written."""

    status = 400


@dataclass(frozen=True)
class VotesImportResult:
    campaign: Campaign
    items: int
    judgments: int
    annotators: int


@dataclass(frozen=True)
class _Vote:
    row: int
    item_key: tuple[str, int]  # (kind, pk)
    annotator: str
    answer: str


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise VotesImportError(f"{path}: cannot read the file ({exc.strerror or exc})") from exc


# --------------------------------------------------------------------------- winowhy


def _parse_winowhy(path: Path, raw: bytes) -> tuple[list[_Vote], str]:
    name = path.name
    try:
        questions = loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise VotesImportError(f"{name}: not a WinoWhy JSON file ({exc})") from exc
    if not isinstance(questions, list) or not questions:
        raise VotesImportError(f"{name}: expected a JSON array of questions")
    wanted: dict[tuple[str, int], tuple[int, str, int]] = {}  # (external_id, position) -> (row, field, k)
    for index, question in enumerate(questions):
        row = index + 1
        reasons = question.get("reasons") if isinstance(question, dict) else None
        if not isinstance(reasons, list):
            raise VotesImportError(f"{name}, row {row}, field 'reasons': missing or not a list")
        for position, reason in enumerate(reasons):
            field = f"reasons[{position}][2]"
            score = reason[2] if isinstance(reason, list) and len(reason) >= 3 else None
            if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1:
                raise VotesImportError(
                    f"{name}, row {row}, field '{field}': plausibility score must be a number from 0 to 1, "
                    f"found {score!r}"
                )
            shares = score * WINOWHY_RATERS
            if not math.isclose(shares, round(shares), abs_tol=1e-6):
                raise VotesImportError(
                    f"{name}, row {row}, field '{field}': score {score!r} is not a share of "
                    f"{WINOWHY_RATERS} votes"
                )
            wanted[(str(index), position)] = (row, field, round(shares))
    reasons_found = {
        (r.schema.external_id, r.position): r
        for r in Reason.objects.filter(schema__collection=WINOWHY_COLLECTION).select_related("schema")
    }
    missing = [key for key in wanted if key not in reasons_found]
    if missing:
        row, field, _ = wanted[missing[0]]
        raise VotesImportError(
            f"{name}, row {row}, field '{field.removesuffix('[2]')}': no Reason row for question "
            f"{WINOWHY_COLLECTION}:{missing[0][0]} position {missing[0][1]} ({len(missing)} of "
            f"{len(wanted)} reasons missing); import the data set first (format winowhy)"
        )
    rng = np.random.default_rng(WINOWHY_SEED)
    votes: list[_Vote] = []
    for key, (row, field, plausible) in wanted.items():
        reason = reasons_found[key]
        if reason.plausibility is not None and not math.isclose(
            reason.plausibility, plausible / WINOWHY_RATERS, abs_tol=1e-6
        ):
            raise VotesImportError(
                f"{name}, row {row}, field '{field}': the stored reason has plausibility "
                f"{reason.plausibility} but the file says {plausible / WINOWHY_RATERS}"
            )
        order = rng.permutation(WINOWHY_RATERS)
        for rank, rater in enumerate(order.tolist()):
            votes.append(
                _Vote(
                    row=row,
                    item_key=("reason", reason.pk),
                    annotator=f"rater-{rater + 1}",
                    answer="plausible" if rank < plausible else "implausible",
                )
            )
    return votes, Task.REASON_PLAUSIBILITY


# --------------------------------------------------------------------------- jsonl

_REF = {
    "schema": re.compile(r"^schema:(?P<collection>[^/]+)/(?P<external_id>[^/]+)$"),
    "reason": re.compile(r"^reason:(?P<collection>[^/]+)/(?P<external_id>[^/]+)/(?P<position>\d+)$"),
    "comve": re.compile(r"^comve:(?P<dataset>[^/]+)/(?P<split>[^/]+)/(?P<external_id>[^/]+)$"),
}


def _parse_ref(ref: str) -> tuple[str, tuple[str, ...]] | None:
    for kind, pattern in _REF.items():
        m = pattern.match(ref)
        if m:
            return kind, tuple(m.groups())
    return None


def _resolve(kind: str, keys: set[tuple[str, ...]]) -> dict[tuple[str, ...], int]:
    found: dict[tuple[str, ...], int] = {}
    if kind == "schema":
        for collection in {k[0] for k in keys}:
            ids = [k[1] for k in keys if k[0] == collection]
            for pk, ext in Schema.objects.filter(collection=collection, external_id__in=ids).values_list(
                "pk", "external_id"
            ):
                found[(collection, ext)] = pk
    elif kind == "reason":
        for collection in {k[0] for k in keys}:
            ids = [k[1] for k in keys if k[0] == collection]
            for pk, ext, pos in Reason.objects.filter(
                schema__collection=collection, schema__external_id__in=ids
            ).values_list("pk", "schema__external_id", "position"):
                found[(collection, ext, str(pos))] = pk
    else:
        for dataset, split in {(k[0], k[1]) for k in keys}:
            ids = [k[2] for k in keys if (k[0], k[1]) == (dataset, split)]
            for pk, ext in ComVEItem.objects.filter(
                dataset=dataset, split=split, external_id__in=ids
            ).values_list("pk", "external_id"):
                found[(dataset, split, ext)] = pk
    return found


def _parse_jsonl(path: Path, raw: bytes, task: str) -> list[_Vote]:
    name = path.name
    if task not in ITEM_KIND_OF_TASK:
        raise VotesImportError(f"{name}: task {task!r} has no categorical answers to import")
    expected_kind = ITEM_KIND_OF_TASK[task]
    allowed = TASKS[task].choice_values
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise VotesImportError(f"{name}: not UTF-8 text ({exc})") from exc
    parsed: list[tuple[int, tuple[str, ...], str, str]] = []
    first_row: dict[tuple[tuple[str, ...], str], int] = {}
    try:
        rows = list(read_jsonl(text.split("\n"), name=name, objects=True))
    except JsonLinesError as exc:
        raise VotesImportError(str(exc)) from exc
    for row, obj in rows:
        unknown = sorted(set(obj) - {"item", "annotator", "answer"})
        if unknown:
            raise VotesImportError(
                f"{name}, row {row}, field '{unknown[0]}': unknown field (expected item, annotator, answer)"
            )
        for field in ("item", "annotator", "answer"):
            if not isinstance(obj.get(field), str) or not obj[field].strip():
                raise VotesImportError(
                    f"{name}, row {row}, field '{field}': missing or not a non-empty string"
                )
            refusal = formula_refusal(obj[field].strip())
            if refusal:
                raise VotesImportError(f"{name}, row {row}, field '{field}': {refusal}")
        ref = _parse_ref(obj["item"].strip())
        if ref is None:
            raise VotesImportError(
                f"{name}, row {row}, field 'item': {obj['item']!r} is not schema:<collection>/<id>, "
                "reason:<collection>/<id>/<position> or comve:<dataset>/<split>/<id>"
            )
        if ref[0] != expected_kind:
            raise VotesImportError(
                f"{name}, row {row}, field 'item': a {task} campaign works on {expected_kind} items, "
                f"found a {ref[0]}"
            )
        annotator = obj["annotator"].strip()
        if not ANNOTATOR_NAME.match(annotator):
            raise VotesImportError(
                f"{name}, row {row}, field 'annotator': {annotator!r} must be 1-60 letters, digits or _ . @ + -"
            )
        answer = obj["answer"].strip()
        if answer not in allowed:
            raise VotesImportError(
                f"{name}, row {row}, field 'answer': {answer!r} is not an answer of {task} "
                f"(expected one of {', '.join(allowed)})"
            )
        dup = first_row.setdefault((ref[1], annotator), row)
        if dup != row:
            raise VotesImportError(
                f"{name}, row {row}, field 'annotator': {annotator} already answered {obj['item']} in row {dup}"
            )
        parsed.append((row, ref[1], annotator, answer))
    if not parsed:
        raise VotesImportError(f"{name}: no votes in the file")
    found = _resolve(expected_kind, {p[1] for p in parsed})
    for row, key, _, _ in parsed:
        if key not in found:
            raise VotesImportError(
                f"{name}, row {row}, field 'item': no {expected_kind} {'/'.join(key)} in the database"
            )
    return [
        _Vote(row, (expected_kind, found[key]), annotator, answer) for row, key, annotator, answer in parsed
    ]


# --------------------------------------------------------------------------- the service


def votes_import(
    *, format: str, path: Path | str, campaign_name: str, task: str | None = None, created_by: Any = None
) -> VotesImportResult:
    """Import the votes in ``path`` as the judgments of the imported campaign ``campaign_name``."""
    path = Path(path)
    if format not in FORMATS:
        raise VotesImportError(f"unknown format {format!r} (expected one of: {', '.join(FORMATS)})")
    if not re.match(r"^[-a-zA-Z0-9_]{1,100}$", campaign_name):
        raise VotesImportError(f"campaign name {campaign_name!r} must be a slug (letters, digits, - and _)")
    if task is not None and task not in Task.values:
        raise VotesImportError(f"unknown task {task!r} (expected one of: {', '.join(Task.values)})")
    existing = Campaign.objects.filter(name=campaign_name).first()
    if existing is not None:
        if CampaignItem.objects.filter(campaign=existing).exists():
            raise VotesImportError(
                f"campaign {campaign_name!r} already has items; imported votes go into a new campaign"
            )
        if task is not None and task != existing.task:
            raise VotesImportError(f"campaign {campaign_name!r} is a {existing.task} campaign, not {task}")
        task = existing.task
    raw = _read(path)
    if format == "winowhy":
        if task is not None and task != Task.REASON_PLAUSIBILITY:
            raise VotesImportError(f"winowhy votes are reason plausibility votes, not {task}")
        votes, task = _parse_winowhy(path, raw)
    else:
        if task is None:
            raise VotesImportError("a jsonl import into a new campaign needs the task (--task)")
        votes = _parse_jsonl(path, raw, task)

    per_item = Counter(v.item_key for v in votes)
    annotators = sorted({v.annotator for v in votes})
    selection = {
        "votes_format": format,
        "file": path.name,
        "sha256": _sha256(raw),
        "votes": len(votes),
    }
    if format == "winowhy":
        selection["assignment_seed"] = WINOWHY_SEED
    user_model = get_user_model()
    with transaction.atomic():
        if existing is None:
            campaign = Campaign.objects.create(
                name=campaign_name,
                task=task,
                status=CampaignStatus.CLOSED,
                judgments_per_item=max(per_item.values()),
                imported=True,
                selection=selection,
                created_by=created_by if getattr(created_by, "is_authenticated", False) else None,
            )
        else:
            campaign = existing
            campaign.imported = True
            campaign.status = CampaignStatus.CLOSED
            campaign.selection = selection
            campaign.save(update_fields=["imported", "status", "selection"])
        users = {}
        for annotator in annotators:
            username = f"import-{campaign_name}-{annotator}"
            user = user_model.objects.filter(username=username).first()
            if user is None:
                user = user_model(username=username)
                user.set_unusable_password()
                user.save()
            users[annotator] = user
        field_of = {"schema": "schema_id", "reason": "reason_id", "comve": "comve_item_id"}
        created = CampaignItem.objects.bulk_create(
            [CampaignItem(campaign=campaign, **{field_of[kind]: pk}) for kind, pk in per_item]
        )
        # Re-read with the ComVE row joined: judgment_import checks comve answers against it.
        fresh = CampaignItem.objects.select_related("comve_item").in_bulk([item.pk for item in created])
        item_of = {key: fresh[item.pk] for key, item in zip(per_item, created, strict=True)}
        try:
            written = judgment_import(
                campaign=campaign,
                votes=[
                    ImportedVote(
                        item=item_of[v.item_key],
                        annotator=users[v.annotator],
                        answer=v.answer,
                        where=f"{path.name}, row {v.row}",
                    )
                    for v in votes
                ],
            )
        except JudgmentRefused as exc:
            raise VotesImportError(str(exc)) from exc
    return VotesImportResult(campaign=campaign, items=len(created), judgments=written, annotators=len(users))
