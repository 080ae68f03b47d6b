"""Release-shaped folders written straight from ../shared/data (for real-data tests and runs).

Until the importers and releases are merged, this writes the files a published release
would hold, with the field names of the releases' docs/formats.md, from the public files:
WinoWhy's winowhy.json and cat_ref.json, Trichelair et al.'s switched/associative labels,
and the ComVE CSVs. Labels follow the papers: a reason is positive with at least 4 of 5
plausible votes, negative with at most 1 (WinoWhy 3.3).
"""

import csv
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evaluation.release_data import split_switched
from releases import services as releases
from tests.datasets.realdata import import_real_data
from tests.evaluation.factories import _write

KNOWLEDGE_TYPE_NAMES = {"Temporal": "Eventuality"}


def _questions(data_dir: Path) -> tuple[list[dict[str, Any]], dict[int, list[str]]]:
    questions = json.loads((data_dir / "winowhy" / "winowhy.json").read_text(encoding="utf-8"))
    cats = json.loads((data_dir / "winowhy" / "cat_ref.json").read_text(encoding="utf-8"))
    types: dict[int, list[str]] = {}
    for name, indexes in cats.items():
        for i in indexes:
            types.setdefault(int(i), []).append(KNOWLEDGE_TYPE_NAMES.get(name, name))
    return questions, types


def wsc_rows(data_dir: Path) -> list[dict[str, Any]]:
    questions, types = _questions(data_dir)
    switched = {
        r["index"]: r for r in json.loads((data_dir / "wsc_switched" / "WSC_switched_label.json").read_text())
    }
    associative = {
        r["index"]: r
        for r in json.loads((data_dir / "wsc_switched" / "WSC_associative_label.json").read_text())
    }
    rows = []
    for i, q in enumerate(questions):
        cut = split_switched(switched[i]["sentence_switched"], q["text"]["pron"].strip(), f"switched {i}")
        rows.append(
            {
                "switched_text_before": cut.text_before,
                "switched_pronoun": cut.pronoun,
                "switched_text_after": cut.text_after,
                "id": str(i),
                "collection": "wsc273",
                "text_before": q["text"]["txt1"].strip(),
                "pronoun": q["text"]["pron"].strip(),
                "text_after": q["text"]["txt2"].strip(),
                "candidates": [a.strip() for a in q["answers"]],
                "answer": q["correctAnswer"].strip().rstrip("."),
                "source": q["source"],
                "switched": switched[i]["sentence_switched"],
                "switchable": bool(switched[i]["is_switchable"]),
                "associative": bool(associative[i]["is_associative"]),
                "knowledge_types": sorted(set(types.get(i, []))),
            }
        )
    return rows


def winowhy_rows(data_dir: Path) -> list[dict[str, Any]]:
    """Reasons as the release writes them, plus ``knowledge_types``: the question's major types
    (cat_ref.json), which the per-type WinoWhy figures need (not yet in the release format)."""
    questions, types = _questions(data_dir)
    rows = []
    for i, q in enumerate(questions):
        for position, (text, origin, score, source_label) in enumerate(q["reasons"]):
            label = "positive" if score >= 0.8 - 1e-9 else "negative" if score <= 0.2 + 1e-9 else "acceptable"
            rows.append(
                {
                    "id": f"{i}.{position}",
                    "schema_id": str(i),
                    "position": position,
                    "sentence": " ".join(
                        p.strip() for p in (q["text"]["txt1"], q["text"]["pron"], q["text"]["txt2"])
                    ),
                    "pronoun": q["text"]["pron"].strip(),
                    "candidates": [a.strip() for a in q["answers"]],
                    "answer": q["correctAnswer"].strip().rstrip("."),
                    "text": text.strip(),
                    "origin": {"gpt": "generated"}.get(origin, origin),
                    "score": score,
                    "label": label,
                    "source_label": source_label,
                    "knowledge_type": "",
                    "knowledge_types": sorted(set(types.get(i, []))),
                }
            )
    return rows


def comve_files(data_dir: Path, split: str = "test") -> dict[str, list[dict[str, Any]]]:
    folder = data_dir / "comve" / split

    def read(name: str, header: bool) -> list[list[str]]:
        with (folder / name).open(encoding="utf-8", errors="replace", newline="") as f:
            rows = list(csv.reader(f))
        return rows[1:] if header else rows

    a_answers = dict(read("subtaskA_gold_answers.csv", False))
    b_answers = dict(read("subtaskB_gold_answers.csv", False))
    refs = {r[0]: r[1:] for r in read("subtaskC_gold_answers.csv", False)}
    return {
        "comve_a.jsonl": [
            {"id": r[0], "sent0": r[1], "sent1": r[2], "answer": int(a_answers[r[0]])}
            for r in read(f"subtaskA_{split}_data.csv", True)
        ],
        "comve_b.jsonl": [
            {
                "id": r[0],
                "false_sent": r[1],
                "option_a": r[2],
                "option_b": r[3],
                "option_c": r[4],
                "answer": b_answers[r[0]],
            }
            for r in read(f"subtaskB_{split}_data.csv", True)
        ],
        "comve_c.jsonl": [
            {"id": r[0], "false_sent": r[1], "references": refs[r[0]]}
            for r in read(f"subtaskC_{split}_data.csv", True)
        ],
    }


def export_wsc(data_dir: Path, out: Path) -> Path:
    return _write(out, "wsc273", "1.0.0", "wsc", {"wsc.jsonl": wsc_rows(data_dir)})


def export_winowhy(data_dir: Path, out: Path) -> Path:
    return _write(out, "winowhy", "1.0.0", "winowhy", {"winowhy.jsonl": winowhy_rows(data_dir)})


def export_comve(data_dir: Path, out: Path, split: str = "test") -> Path:
    return _write(out, f"comve-{split}", "1.0.0", "comve", comve_files(data_dir, split))


def publish_real_releases(data_dir: Path, curator: Any, capture: Callable[..., Any]) -> dict[str, str]:
    """WSC273, WinoWhy and ComVE test imported from ``data_dir`` through the importers and
    published as 1.0.0 under the names scripts/real_releases.sh uses; NAME@VERSION by name.
    ``capture`` is pytest-django's ``django_capture_on_commit_callbacks`` (the build runs on
    commit)."""
    import_real_data(data_dir)
    specs = {}
    for name, dataset, split in (
        ("wsc273", "wsc", ""),
        ("winowhy", "winowhy", ""),
        ("comve-test", "comve", "test"),
    ):
        with capture(execute=True):
            release = releases.release_create(
                name=name, dataset=dataset, split=split, version="1.0.0", changelog="Real data.", user=curator
            )
        releases.release_approve(release=release, user=curator)
        releases.release_publish(release=release, user=curator)
        specs[name] = f"{name}@1.0.0"
    return specs


if __name__ == "__main__":  # python -m tests.evaluation.realdata DATA_DIR OUT_DIR
    data, target = Path(sys.argv[1]), Path(sys.argv[2])
    print(
        export_wsc(data, target / "wsc273"),
        export_winowhy(data, target / "winowhy"),
        export_comve(data, target / "comve-test"),
    )
