"""Small release folders written in the test (field names of the releases' docs/formats.md)."""

import hashlib
import json
from pathlib import Path
from typing import Any

WSC_ROWS: list[dict[str, Any]] = [
    {
        "id": "0",
        "text_before": "The city councilmen refused the demonstrators a permit because",
        "pronoun": "they",
        "text_after": "feared violence.",
        "candidates": ["The city councilmen", "The demonstrators"],
        "answer": "A",
        "switchable": True,
        "switched": "The demonstrators refused the city councilmen a permit because [they] feared violence.",
        "associative": False,
        "knowledge_types": ["Eventuality"],
    },
    {
        "id": "1",
        "text_before": "The city councilmen refused the demonstrators a permit because",
        "pronoun": "they",
        "text_after": "advocated violence.",
        "candidates": ["The city councilmen", "The demonstrators"],
        "answer": "B",
        "switchable": True,
        "switched": "The demonstrators refused the city councilmen a permit because [they] advocated violence.",
        # the release also writes the switched sentence cut at its pronoun
        "switched_text_before": "The demonstrators refused the city councilmen a permit because",
        "switched_pronoun": "they",
        "switched_text_after": "advocated violence.",
        "associative": False,
        "knowledge_types": ["Eventuality", "Property"],
    },
    {
        "id": "2",
        "text_before": "The trophy doesn't fit into the brown suitcase because",
        "pronoun": "it",
        "text_after": "is too large.",
        "candidates": ["the trophy", "the suitcase"],
        "answer": "A",
        "switchable": False,
        "switched": "The brown suitcase doesn't fit into the trophy because [it] is too large.",
        "associative": True,
        "knowledge_types": ["Object"],
    },
    {
        "id": "3",
        "text_before": "The trophy doesn't fit into the brown suitcase because",
        "pronoun": "it",
        "text_after": "is too small.",
        "candidates": ["the trophy", "the suitcase"],
        "answer": "B",
        "switchable": False,
        "switched": "",
        "associative": None,
        "knowledge_types": [],
    },
]

WINOWHY_ROWS: list[dict[str, Any]] = [
    # question 0: two positive, one negative, one acceptable (left out)
    {"id": "0.0", "schema_id": "0", "text": "councilmen are responsible for order", "label": "positive"},
    {"id": "0.1", "schema_id": "0", "text": "the demonstrators feared the police", "label": "negative"},
    {"id": "0.2", "schema_id": "0", "text": "they feared it", "label": "acceptable"},
    {"id": "0.3", "schema_id": "0", "text": "permits are given by the council", "label": "positive"},
    # question 1
    {"id": "1.0", "schema_id": "1", "text": "protesters may advocate violence", "label": "positive"},
    {"id": "1.1", "schema_id": "1", "text": "the council is green", "label": "negative"},
    {"id": "1.2", "schema_id": "1", "text": "violence is a word", "label": "negative"},
]
for _row in WINOWHY_ROWS:
    q = WSC_ROWS[int(_row["schema_id"])]
    _row.update(
        sentence=f"{q['text_before']} {q['pronoun']} {q['text_after']}",
        pronoun=q["pronoun"],
        candidates=q["candidates"],
        answer=q["answer"],
        origin="human",
        score=1.0 if _row["label"] == "positive" else 0.0,
        knowledge_type="Property" if _row["schema_id"] == "1" else "",
    )

COMVE_A = [
    {
        "id": "1175",
        "sent0": "He loves to stroll at the park with his bed",
        "sent1": "He loves to stroll with his dog.",
        "answer": 0,
    },
    {
        "id": "452",
        "sent0": "The inverter powered the house.",
        "sent1": "The inverter powered the continent.",
        "answer": 1,
    },
    {"id": "275", "sent0": "I put lemons on my pizza.", "sent1": "I put cheese on my pizza.", "answer": 0},
]
COMVE_B = [
    {
        "id": "1175",
        "false_sent": "He loves to stroll at the park with his bed",
        "option_a": "A bed is too heavy to carry",
        "option_b": "walking is good for health",
        "option_c": "beds come in sizes",
        "answer": "A",
    },
    {
        "id": "452",
        "false_sent": "The inverter powered the continent.",
        "option_a": "An inverter is small",
        "option_b": "An inverter cannot power a continent.",
        "option_c": "An inverter is rechargeable.",
        "answer": "B",
    },
]
COMVE_C = [
    {
        "id": "1175",
        "false_sent": "He loves to stroll at the park with his bed",
        "references": [
            "A bed is too heavy to carry with when strolling at a park",
            "the park does not have beds",
            "",
        ],
    },
    {
        "id": "452",
        "false_sent": "The inverter powered the continent.",
        "references": [
            "An inverter is incapable of powering an entire continent.",
            "The continent is too big",
        ],
    },
]


def _write(
    folder: Path, name: str, version: str, dataset: str, files: dict[str, list[dict[str, Any]]]
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    for filename, rows in files.items():
        data = "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows).encode()
        (folder / filename).write_bytes(data)
        entries.append(
            {
                "name": filename,
                "size": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
                "items": len(rows),
            }
        )
    manifest = {
        "format": "winnow-release/1",
        "name": name,
        "version": version,
        "dataset": dataset,
        "files": entries,
    }
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return folder


def write_wsc_release(folder: Path, *, name: str = "wsc-mini", version: str = "1.0.0", rows=None) -> Path:
    return _write(folder, name, version, "wsc", {"wsc.jsonl": rows if rows is not None else WSC_ROWS})


def write_winowhy_release(folder: Path, *, name: str = "winowhy-mini", version: str = "1.0.0") -> Path:
    return _write(folder, name, version, "winowhy", {"winowhy.jsonl": WINOWHY_ROWS})


def write_comve_release(folder: Path, *, name: str = "comve-mini", version: str = "1.0.0") -> Path:
    return _write(
        folder,
        name,
        version,
        "comve",
        {"comve_a.jsonl": COMVE_A, "comve_b.jsonl": COMVE_B, "comve_c.jsonl": COMVE_C},
    )
