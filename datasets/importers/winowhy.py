"""WinoWhy: ``winowhy.json`` (questions with 15 reasons each) and ``cat_ref.json``.

The two files are told apart by content: the questions are a JSON array of objects,
the categories a JSON object mapping a knowledge type to question indexes.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from datasets.importers.base import (
    DatasetImportError,
    SourceFile,
    clean,
    collect_files,
    load_json_array,
    load_json_document,
    looks_like_json,
    read_source,
    require,
)
from datasets.importers.records import Origin, ReasonRecord, SchemaRecord, WinoWhyData
from datasets.importers.twins import TwinCandidate, find_twins

ORIGINS = {"human": "human", "reverse": "reverse", "gpt": "generated", "generated": "generated"}
SOURCE_LABELS = {"valid": "Valid", "invalid": "Invalid", "undecided": "Undecided"}
EXPECTED_SOURCE_LABEL = {"positive": "Valid", "negative": "Invalid", "acceptable": "Undecided"}
# cat_ref.json's names -> the paper's knowledge types (Temporal is the paper's Eventuality).
CATEGORY_NAMES = {
    "property": "Property",
    "object": "Object",
    "temporal": "Eventuality",
    "eventuality": "Eventuality",
    "spatial": "Spatial",
    "quantity": "Quantity",
    "others": "Others",
}
# Named in cat_ref.json but not one of the six types; allowed only while empty.
EMPTY_ONLY_CATEGORIES = {"causal"}
ANSWER_RE = re.compile(r"^\s*([AB])\s*\.?\s*$", re.IGNORECASE)
EPS = 1e-9


def plausibility_label(score: float) -> str:
    """WinoWhy 3.3: >= 4/5 plausible votes positive, <= 1/5 negative, else acceptable."""
    if score >= 0.8 - EPS:
        return "positive"
    if score <= 0.2 + EPS:
        return "negative"
    return "acceptable"


def normalise_answer(value: Any) -> str | None:
    """'A', 'a', 'A.' -> 'A'; anything else -> None."""
    if not isinstance(value, str):
        return None
    match = ANSWER_RE.match(value)
    return match.group(1).upper() if match else None


def parse_winowhy(paths: list[Path], options: dict[str, Any]) -> WinoWhyData:
    skipped: list[str] = []
    files = collect_files(paths, looks_right=looks_like_json, skipped=skipped)
    if options.get("categories"):
        files.append(Path(options["categories"]))
    questions: SourceFile | None = None
    categories: tuple[SourceFile, Any] | None = None
    for path in files:
        source = read_source(path, kind="json")
        document: Any
        stripped = source.text.lstrip()
        if stripped.startswith("{"):
            document = load_json_document(source)
            if categories is not None:
                raise source.error(f"a second categories file (the first was {categories[0].name})")
            categories = (source, document)
        elif stripped.startswith("["):
            if questions is not None:
                raise source.error(f"a second questions file (the first was {questions.name})")
            questions = source
        else:
            raise source.error(
                "not JSON: expected winowhy.json (an array of questions) or cat_ref.json (an object)", row=1
            )
    if questions is None:
        raise DatasetImportError(
            "no questions file: give winowhy.json (a JSON array of questions)",
            file=", ".join(f.name for f in files),
        )
    schemas = _parse_questions(questions)
    warnings = skipped + _check_labels(schemas)
    pairs = find_twins(
        [
            TwinCandidate(
                key=s.external_id,
                answer=s.answer,
                candidates=(s.candidate_a, s.candidate_b),
                text_before=s.text_before,
                text_after=s.text_after,
            )
            for s in schemas
        ]
    )
    by_id = {s.external_id: s for s in schemas}
    for a, b in pairs:
        by_id[a].twin_external_id = b
        by_id[b].twin_external_id = a
    described = [questions.describe()]
    if categories is not None:
        _apply_categories(categories[0], categories[1], schemas)
        described.append(categories[0].describe())
    return WinoWhyData(
        schemas=schemas,
        twin_pairs=pairs,
        categories_given=categories is not None,
        files=described,
        warnings=warnings,
    )


def _parse_questions(source: SourceFile) -> list[SchemaRecord]:
    rows = load_json_array(source)
    if not rows:
        raise source.error("the array of questions is empty", row=1)
    schemas: list[SchemaRecord] = []
    seen: dict[tuple[str, str, str], int] = {}
    for row, obj in rows:
        if not isinstance(obj, dict):
            raise source.error(f"expected a question object, found {type(obj).__name__}", row=row)
        text = require(source, obj, "text", row=row, kind=dict)
        parts = []
        for key in ("txt1", "pron", "txt2"):
            if key not in text:
                raise source.error("missing", row=row, field=f"text.{key}")
            if not isinstance(text[key], str):
                raise source.error(
                    f"expected a string, found {text[key]!r:.40}", row=row, field=f"text.{key}"
                )
            source.formula_check(text[key], row=row, field=f"text.{key}")
            parts.append(clean(text[key]))
        before, pronoun, after = parts
        if not pronoun:
            raise source.error("the pronoun is empty", row=row, field="text.pron")
        answers = require(source, obj, "answers", row=row, kind=list)
        if len(answers) != 2 or not all(isinstance(a, str) and a.strip() for a in answers):
            raise source.error(
                f"expected two non-empty candidates, found {answers!r:.80}", row=row, field="answers"
            )
        for position, candidate in enumerate(answers):
            source.formula_check(candidate, row=row, field=f"answers[{position}]")
        raw_answer = require(source, obj, "correctAnswer", row=row, kind=str)
        answer = normalise_answer(raw_answer)
        if answer is None:
            raise source.error(f"unknown answer key {raw_answer!r}", row=row, field="correctAnswer")
        origin = Origin(source_file=source.name, source_row=row, file_checksum=source.sha256)
        same = (before.lower(), pronoun.lower(), after.lower())
        if same in seen:
            raise source.error(
                f"duplicate question: the same text as row {seen[same]}", row=row, field="text"
            )
        seen[same] = row
        raw_source = obj.get("source", "")
        schema = SchemaRecord(
            external_id=str(row - 1),
            text_before=before,
            pronoun=pronoun,
            text_after=after,
            candidate_a=clean(answers[0]),
            candidate_b=clean(answers[1]),
            answer=answer,
            source=clean(raw_source) if isinstance(raw_source, str) else "",
            provenance=origin,
        )
        reasons = require(source, obj, "reasons", row=row, kind=list)
        for position, reason in enumerate(reasons):
            schema.reasons.append(_parse_reason(source, row, position, reason, origin))
        schemas.append(schema)
    return schemas


def _parse_reason(source: SourceFile, row: int, position: int, reason: Any, origin: Origin) -> ReasonRecord:
    field = f"reasons[{position}]"
    if not isinstance(reason, list) or len(reason) != 4:
        raise source.error(
            f"expected [text, source, plausibility score, label], found {reason!r:.80}", row=row, field=field
        )
    text, raw_origin, score, raw_label = reason
    if not isinstance(text, str) or not text.strip():
        raise source.error("the reason text is empty or not a string", row=row, field=f"{field}[0]")
    source.formula_check(text, row=row, field=f"{field}[0]")
    kind = ORIGINS.get(raw_origin.strip().lower()) if isinstance(raw_origin, str) else None
    if kind is None:
        raise source.error(
            f"unknown reason source {raw_origin!r} (expected human, gpt or reverse)",
            row=row,
            field=f"{field}[1]",
        )
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1:
        raise source.error(
            f"plausibility score must be a number from 0 to 1, found {score!r}", row=row, field=f"{field}[2]"
        )
    source_label = SOURCE_LABELS.get(raw_label.strip().lower()) if isinstance(raw_label, str) else None
    if source_label is None:
        raise source.error(
            f"unknown label {raw_label!r} (expected Valid, Invalid or Undecided)",
            row=row,
            field=f"{field}[3]",
        )
    return ReasonRecord(
        position=position,
        text=text,  # as written (GPT-2's reasons start with a space): a release ships the source's text
        origin=kind,
        plausibility=float(score),
        label=plausibility_label(float(score)),
        source_label=source_label,
        provenance=origin,
    )


def _check_labels(schemas: list[SchemaRecord]) -> list[str]:
    warnings = []
    for schema in schemas:
        for reason in schema.reasons:
            if EXPECTED_SOURCE_LABEL[reason.label] != reason.source_label:
                warnings.append(
                    f"{reason.provenance.source_file} row {reason.provenance.source_row} field "
                    f"'reasons[{reason.position}][3]': label {reason.source_label} disagrees with score "
                    f"{reason.plausibility} ({reason.label}); the score decides"
                )
    return warnings


def _apply_categories(source: SourceFile, document: Any, schemas: list[SchemaRecord]) -> None:
    if not isinstance(document, dict) or not all(isinstance(v, list) for v in document.values()):
        raise source.error("expected an object mapping each knowledge type to a list of question indexes")
    types: dict[int, set[str]] = {i: set() for i in range(len(schemas))}
    for name, indexes in document.items():
        kind = CATEGORY_NAMES.get(str(name).strip().lower())
        if kind is None:
            if str(name).strip().lower() in EMPTY_ONLY_CATEGORIES and not indexes:
                continue
            raise source.error(
                f"unknown knowledge type {name!r} (expected Property, Object, Temporal/Eventuality, "
                "Spatial, Quantity or Others)",
                field=str(name),
            )
        for position, index in enumerate(indexes):
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(schemas):
                raise source.error(
                    f"question index {index!r} is not in the questions file (0..{len(schemas) - 1})",
                    row=position + 1,
                    field=str(name),
                )
            types[index].add(kind)
    for index, schema in enumerate(schemas):
        schema.knowledge_types = sorted(types[index])
