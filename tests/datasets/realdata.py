"""Rows from the real data sets for the release tests.

Uses the foundation importers (``datasets.services.dataset_import``) when they are in
the tree; until then a minimal loader reads the same files (WinoWhy + Trichelair labels
+ ComVE test) into Schema, Reason and ComVEItem rows with their provenance.
"""

import csv
import hashlib
import json
import re
from pathlib import Path
from typing import Any

from datasets.models import ComVEItem, ImportBatch, ImportFormat, Reason, Schema

ORIGINS = {"human": "human", "gpt": "generated", "reverse": "reverse"}
KNOWLEDGE_TYPES = {"Temporal": "Eventuality"}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _batch(fmt: str, paths: list[Path]) -> ImportBatch:
    return ImportBatch.objects.create(
        format=fmt,
        files=[{"path": str(p), "name": p.name, "sha256": _sha(p), "size": p.stat().st_size} for p in paths],
    )


def _label(score: float) -> str:
    if score >= 0.8 - 1e-9:
        return "positive"
    if score <= 0.2 + 1e-9:
        return "negative"
    return "acceptable"


def load_wsc_winowhy(data_dir: Path) -> None:
    winowhy = data_dir / "winowhy" / "winowhy.json"
    cat_ref = data_dir / "winowhy" / "cat_ref.json"
    switched = data_dir / "wsc_switched" / "WSC_switched_label.json"
    associative = data_dir / "wsc_switched" / "WSC_associative_label.json"
    batch = _batch(ImportFormat.WINOWHY, [winowhy, cat_ref])
    checksum = _sha(winowhy)
    questions = json.loads(winowhy.read_text(encoding="utf-8"))
    types: dict[int, list[str]] = {}
    for kind, indexes in json.loads(cat_ref.read_text(encoding="utf-8")).items():
        for index in indexes:
            types.setdefault(index, []).append(KNOWLEDGE_TYPES.get(kind, kind))
    switch_rows = {r["index"]: r for r in json.loads(switched.read_text(encoding="utf-8"))}
    assoc_rows = {r["index"]: r for r in json.loads(associative.read_text(encoding="utf-8"))}
    schemas = []
    for i, q in enumerate(questions):
        sw = switch_rows[i]
        schemas.append(
            Schema(
                collection="wsc273",
                external_id=str(i),
                text_before=q["text"]["txt1"].strip(),
                pronoun=q["text"]["pron"].strip(),
                text_after=q["text"]["txt2"].strip(),
                candidate_a=q["answers"][0].strip(),
                candidate_b=q["answers"][1].strip(),
                answer=re.sub(r"[^AB]", "", q["correctAnswer"].upper())[:1],
                source=q.get("source", ""),
                switched_text=" ".join(
                    sw["sentence_switched"].split()
                ),  # [pronoun] kept, as the importer does
                switchable=bool(sw["is_switchable"]),
                associative=bool(assoc_rows[i]["is_associative"]),
                knowledge_types=sorted(set(types.get(i, []))),
                source_file="winowhy/winowhy.json",
                source_row=i + 1,
                file_checksum=checksum,
                import_batch=batch,
            )
        )
    Schema.objects.bulk_create(schemas)
    saved = list(Schema.objects.filter(collection="wsc273").order_by("id"))
    # Twins: consecutive questions with the same candidates and the other answer.
    i = 0
    while i < len(saved) - 1:
        a, b = saved[i], saved[i + 1]
        if {a.candidate_a.lower(), a.candidate_b.lower()} == {b.candidate_a.lower(), b.candidate_b.lower()}:
            a.twin, b.twin = b, a
            i += 2
        else:
            i += 1
    Schema.objects.bulk_update(saved, ["twin"])
    reasons = []
    for schema, q in zip(saved, questions, strict=True):
        for position, (text, origin, score, source_label) in enumerate(q["reasons"]):
            reasons.append(
                Reason(
                    schema=schema,
                    position=position,
                    text=text.strip(),
                    origin=ORIGINS[origin],
                    plausibility=float(score),
                    label=_label(float(score)),
                    source_label=source_label,
                    source_file="winowhy/winowhy.json",
                    source_row=int(schema.external_id) + 1,
                    file_checksum=checksum,
                    import_batch=batch,
                )
            )
    Reason.objects.bulk_create(reasons)


def _csv(path: Path, header: bool) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    return rows[1:] if header else rows


def load_comve_test(data_dir: Path) -> None:
    folder = data_dir / "comve" / "test"
    names = {
        "a": "subtaskA_test_data.csv",
        "a_ans": "subtaskA_gold_answers.csv",
        "b": "subtaskB_test_data.csv",
        "b_ans": "subtaskB_gold_answers.csv",
        "c": "subtaskC_test_data.csv",
        "c_ans": "subtaskC_gold_answers.csv",
    }
    paths = {k: folder / v for k, v in names.items()}
    batch = _batch(ImportFormat.COMVE, list(paths.values()))
    items: dict[str, dict[str, Any]] = {}
    for row_no, (ext, s0, s1) in enumerate(_csv(paths["a"], True), start=1):
        items[ext] = {
            "external_id": ext,
            "statement_0": s0,
            "statement_1": s1,
            "has_a": True,
            "source_row": row_no,
        }
    for ext, answer in _csv(paths["a_ans"], False):
        items[ext]["false_index"] = int(answer)
    for row_no, (ext, false_sent, oa, ob, oc) in enumerate(_csv(paths["b"], True), start=1):
        item = items.setdefault(ext, {"external_id": ext, "source_row": row_no})
        item.update(false_statement=false_sent, option_a=oa, option_b=ob, option_c=oc, has_b=True)
    for ext, answer in _csv(paths["b_ans"], False):
        items[ext]["correct_option"] = answer.strip().upper()[:1]
    for row_no, (ext, false_sent) in enumerate(_csv(paths["c"], True), start=1):
        item = items.setdefault(ext, {"external_id": ext, "source_row": row_no})
        item.update(false_statement=false_sent, has_c=True)
    for ext, *refs in _csv(paths["c_ans"], False):
        items[ext]["references"] = [r for r in refs if r]
    checksum = _sha(paths["a"])
    ComVEItem.objects.bulk_create(
        ComVEItem(
            dataset="comve",
            split="test",
            source_file="comve/test/subtaskA_test_data.csv",
            file_checksum=checksum,
            import_batch=batch,
            **fields,
        )
        for fields in items.values()
    )


def import_real_data(data_dir: Path) -> str:
    """Import WinoWhy, the Trichelair labels and ComVE test; says which loader it used."""
    try:
        from datasets.services import dataset_import  # type: ignore[attr-defined]
    except ImportError:  # before the foundation branch is merged
        load_wsc_winowhy(data_dir)
        load_comve_test(data_dir)
        return "minimal loader (tests/datasets/realdata.py)"
    dataset_import(
        format="winowhy",
        paths=[data_dir / "winowhy" / "winowhy.json"],
        options={"categories": data_dir / "winowhy" / "cat_ref.json"},
    )
    dataset_import(format="trichelair", paths=[data_dir / "wsc_switched"])
    dataset_import(format="comve", paths=[data_dir / "comve" / "test"])
    return "datasets.services.dataset_import"
