"""Small, valid source files in each public format, written for the tests (original
sentences, not copied from the data sets), to be broken one way at a time."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

QUESTIONS = [
    (
        "The kettle would not fit on the shelf because",
        "it",
        "was too tall.",
        ["The kettle", "The shelf"],
        "A",
    ),
    ("The kettle would not fit on the shelf because", "it", "was too low.", ["The kettle", "The shelf"], "B"),
    ("Mia lent Omar her bicycle because", "he", "had a flat tyre.", ["Mia", "Omar"], "B"),
    ("Mia lent Omar her bicycle because", "she", "was not using it.", ["Mia", "Omar"], "A"),
]


def winowhy_rows(answers: list[str] | None = None) -> list[dict[str, Any]]:
    rows = []
    for i, (txt1, pron, txt2, cands, answer) in enumerate(QUESTIONS):
        rows.append(
            {
                "text": {"txt1": txt1, "pron": pron, "txt2": txt2},
                "answers": cands,
                "correctAnswer": (answers[i] if answers else answer),
                "source": "winnow-tests",
                "reasons": [
                    [f"reason {i} by a person", "human", 1.0, "Valid"],
                    [f"reason {i} for the twin", "reverse", 0.6, "Undecided"],
                    [f"reason {i} from a model", "gpt", 0.0, "Invalid"],
                ],
            }
        )
    return rows


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


def write_winowhy(folder: Path, rows: list[dict[str, Any]] | None = None) -> Path:
    return write_json(folder / "winowhy.json", rows if rows is not None else winowhy_rows())


def write_categories(folder: Path, data: dict[str, list[int]] | None = None) -> Path:
    return write_json(folder / "cat_ref.json", data or {"Property": [0, 1], "Temporal": [2, 3], "Causal": []})


def _swap(sentence: str, a: str, b: str) -> str:
    return sentence.replace(a, "@").replace(b, a).replace("@", b)


def trichelair_rows() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    switched, associative = [], []
    for i, (txt1, pron, txt2, cands, _answer) in enumerate(QUESTIONS):
        sentence = f"{txt1} [{pron}] {txt2}"
        switched.append(
            {
                "index": i,
                "sentence": sentence,
                "is_switchable": 1 if i < 2 else 0,
                "sentence_switched": _swap(sentence, *(c.removeprefix("The ") for c in cands)),
            }
        )
        associative.append({"index": i, "sentence": sentence, "is_associative": 1 if i == 3 else 0})
    return switched, associative


def write_trichelair(folder: Path, switched=None, associative=None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    s, a = trichelair_rows()
    write_json(folder / "WSC_switched_label.json", switched if switched is not None else s)
    write_json(folder / "WSC_associative_label.json", associative if associative is not None else a)
    return folder


COMVE = [
    ("10", "She watered the plants with lemonade.", "She watered the plants with water.", 0, "B"),
    ("11", "He wore gloves to keep his hands warm.", "He wore gloves to keep his ears warm.", 1, "A"),
    ("12", "The baker put the bread in the oven.", "The baker put the bread in the bathtub.", 1, "C"),
]
OPTIONS = ["Plants need water, not sugar.", "Gloves cover hands.", "Bathtubs do not bake bread."]


def csv_text(rows: list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def comve_files() -> dict[str, str]:
    a = [["id", "sent0", "sent1"]] + [[i, s0, s1] for i, s0, s1, _, _ in COMVE]
    a_answers = [[i, str(f)] for i, _, _, f, _ in COMVE]
    b = [["id", "FalseSent", "OptionA", "OptionB", "OptionC"]] + [
        [i, (s0, s1)[f], OPTIONS[k], f"Option B of {i}.", f"Option C of {i}."]
        for k, (i, s0, s1, f, _) in enumerate(COMVE)
    ]
    b_answers = [[i, opt] for i, _, _, _, opt in COMVE]
    c = [["id", "FalseSent"]] + [[i, (s0, s1)[f]] for i, s0, s1, f, _ in COMVE]
    c_refs = [[i, f"Reference one for {i}.", f"Reference two for {i}.", ""] for i, *_ in COMVE]
    return {
        "subtaskA_dev_data.csv": csv_text(a),
        "subtaskA_gold_answers.csv": csv_text(a_answers),
        "subtaskB_dev_data.csv": csv_text(b),
        "subtaskB_gold_answers.csv": csv_text(b_answers),
        "subtaskC_dev_data.csv": csv_text(c),
        "subtaskC_gold_answers.csv": csv_text(c_refs),
    }


def write_comve(folder: Path, files: dict[str, str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in (files or comve_files()).items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def senmaking_rows() -> list[dict[str, Any]]:
    return [
        {
            "id": i,
            "sentence0": s0,
            "sentence1": s1,
            "false": f,
            "A": OPTIONS[k],
            "B": f"Option B of {i}.",
            "C": f"Option C of {i}.",
            "reason": "A",
        }
        for k, (i, s0, s1, f, _) in enumerate(COMVE)
    ]


def jsonl_text(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def write_senmaking(folder: Path, rows: list[dict[str, Any]] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "dataset.jsonl"
    path.write_text(jsonl_text(rows if rows is not None else senmaking_rows()), encoding="utf-8")
    return path
