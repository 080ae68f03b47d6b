"""Releases and runs as pandas DataFrames, and runs joined item by item. No Django.

Everything here reads files: an exported release folder (``manifest.json`` and
``wsc.jsonl``, ``winowhy.jsonl`` or ``comve_*.jsonl``, read by ``evaluation.release_data``,
the one reader of those files) and a run's results folder (``results.json`` and
``predictions.jsonl``, written by ``evaluation.services``). The columns and dtypes of each
frame are listed in ``docs/analysis.md``; tests hold them to it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from core.errors import WinnowError
from core.jsonl import JsonLinesError, read_jsonl
from evaluation import release_data
from evaluation.lm.methods import Method
from releases.dataset import Dataset

RESULTS_FILE = "results.json"
PREDICTIONS_FILE = "predictions.jsonl"
#: Columns that name an item (and its variant) in the frames below; joins use those present.
KEY_COLUMNS = ("subtask", "id", "variant")
#: Columns that describe the item, not the run: a join takes them once, from the first run.
ITEM_COLUMNS = (
    "gold",
    "switched_gold",
    "candidates",
    "question_id",
    "positive",
    "switchable",
    "associative",
    "knowledge_types",
    "n_knowledge_types",
    "type_count",
)


class AnalysisError(WinnowError, ValueError):
    """A release or run folder that cannot be read into a frame; the message says why."""

    status = 400


# --------------------------------------------------------------------------- releases


def type_count(types: Sequence[str]) -> str:
    """ "single", "multiple" or "none": how many major knowledge types a question has
    (WinoWhy table 5)."""
    distinct = len(set(types))
    return "none" if distinct == 0 else "single" if distinct == 1 else "multiple"


def load_release(folder: str | Path) -> pd.DataFrame:
    """The items of an exported release folder, one row per item (ComVE: per subtask item).

    ``frame.attrs`` holds ``name``, ``version``, ``dataset`` and ``path``.
    """
    try:
        release = release_data.open_release_folder(folder)
        if release.dataset == Dataset.WSC:
            frame = _wsc_items(release)
        elif release.dataset == Dataset.WINOWHY:
            frame = _winowhy_items(release)
        else:
            frame = _comve_items(release)
    except release_data.ReleaseDataError as exc:
        raise AnalysisError(str(exc)) from exc
    frame.attrs.update(
        name=release.name, version=release.version, dataset=release.dataset, path=str(release.path)
    )
    return frame


def _types_columns(types: list[tuple[str, ...]]) -> dict[str, Any]:
    return {
        "knowledge_types": pd.Series(types, dtype=object),
        "n_knowledge_types": pd.Series([len(t) for t in types], dtype="int64"),
        "type_count": pd.Series([type_count(t) for t in types], dtype="str"),
    }


def _wsc_items(release: release_data.ReleaseFolder) -> pd.DataFrame:
    rows = release_data.read_wsc(release)
    return pd.DataFrame(
        {
            "id": pd.Series([r.item.id for r in rows], dtype="str"),
            "text_before": pd.Series([r.item.text_before for r in rows], dtype="str"),
            "pronoun": pd.Series([r.item.pronoun for r in rows], dtype="str"),
            "text_after": pd.Series([r.item.text_after for r in rows], dtype="str"),
            "candidate_0": pd.Series([r.item.candidates[0] for r in rows], dtype="str"),
            "candidate_1": pd.Series([r.item.candidates[1] for r in rows], dtype="str"),
            "answer": pd.Series([r.item.answer for r in rows], dtype="int64"),
            "switchable": pd.Series([r.switchable for r in rows], dtype="boolean"),
            "associative": pd.Series([r.associative for r in rows], dtype="boolean"),
            **_types_columns([r.knowledge_types for r in rows]),
        }
    )


def _winowhy_items(release: release_data.ReleaseFolder) -> pd.DataFrame:
    rows = release_data.read_winowhy(release)
    return pd.DataFrame(
        {
            "id": pd.Series([r.id for r in rows], dtype="str"),
            "question_id": pd.Series([r.question_id for r in rows], dtype="str"),
            "text": pd.Series([r.text for r in rows], dtype="str"),
            "positive": pd.Series([r.positive for r in rows], dtype="boolean"),
            **_types_columns([r.knowledge_types for r in rows]),
        }
    )


def _comve_items(release: release_data.ReleaseFolder) -> pd.DataFrame:
    data = release_data.read_comve(release)
    rows: list[dict[str, Any]] = []
    rows += [
        {"subtask": "a", "id": x.id, "answer": str(x.answer), "statement_0": x.statements[0]}
        | {"statement_1": x.statements[1]}
        for x in data.a
    ]
    rows += [
        {"subtask": "b", "id": x.id, "answer": x.answer, "false_sent": x.false_sent}
        | dict(zip(("option_a", "option_b", "option_c"), x.options, strict=True))
        for x in data.b
    ]
    rows += [
        {"subtask": "c", "id": x.id, "false_sent": x.false_sent, "references": x.references} for x in data.c
    ]
    columns = ["subtask", "id", "answer", "statement_0", "statement_1", "false_sent"]
    columns += ["option_a", "option_b", "option_c", "references"]
    frame = pd.DataFrame.from_records(rows, columns=columns)
    text = [c for c in columns if c != "references"]
    return frame.astype(dict.fromkeys(text, "str")).astype({"references": object})


# --------------------------------------------------------------------------- runs


def _run_file(path: str | Path, name: str) -> Path:
    p = Path(path)
    file = p / name if p.is_dir() else p
    if not file.is_file():
        raise AnalysisError(
            f"{file}: missing (a run's results folder holds {RESULTS_FILE} and {PREDICTIONS_FILE})"
        )
    return file


def load_results(path: str | Path) -> dict[str, Any]:
    """``results.json`` of a run (its folder, or the file itself) as written."""
    file = _run_file(path, RESULTS_FILE)
    try:
        results = json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AnalysisError(f"{file}: not JSON ({exc})") from exc
    if not isinstance(results, dict) or "metrics" not in results:
        raise AnalysisError(f"{file}: not a run's results (no 'metrics')")
    return results


def load_predictions(path: str | Path) -> pd.DataFrame:
    """``predictions.jsonl`` of a run (its folder, or the file itself), one row per line.

    Columns: ``id``, ``variant`` (str); ``prediction``, ``gold`` (as the file holds them);
    ``correct`` (boolean, NA where the file has none: ComVE C); ``scores`` (lists, or None);
    and what else the file holds (``question_id``, ``candidates``, ``prediction_norm``; for
    ComVE model runs since 23 Nov 2026 ``correct_rule_NAME`` per rule of ``COMVE_RULES``).
    """
    file = _run_file(path, PREDICTIONS_FILE)
    try:
        records = [row for _, row in read_jsonl(file, name=file.name, objects=True)]
    except JsonLinesError as exc:
        raise AnalysisError(str(exc)) from exc
    frame = pd.DataFrame.from_records(records)
    for column in ("id", "variant", "prediction", "gold", "correct", "scores"):
        if column not in frame:
            frame[column] = None
    frame["id"] = frame["id"].astype("str")
    frame["variant"] = frame["variant"].astype("str")
    frame["correct"] = frame["correct"].astype("boolean")
    for column in ("scores", "candidates", "gold"):
        if column in frame and frame[column].map(lambda v: isinstance(v, list)).any():
            frame[column] = frame[column].map(lambda v: tuple(v) if isinstance(v, list) else v).astype(object)
    if "question_id" in frame:
        frame["question_id"] = frame["question_id"].astype("str")
    return frame


def load_run(path: str | Path, release: str | Path | None = None) -> pd.DataFrame:
    """A run's predictions joined with its release's items: one row per item.

    ``path`` is the run's results folder; ``release`` the exported release folder it was
    scored on (default: the folder named in ``results.json``). Columns per data set in
    ``docs/analysis.md``; ``frame.attrs`` holds ``run``, ``dataset``, ``method``,
    ``model``, ``release`` (NAME@VERSION) and ``label``.
    """
    results = load_results(path)
    predictions = load_predictions(path)
    folder = release if release is not None else (results.get("release") or {}).get("path")
    if not folder:
        raise AnalysisError(f"{path}: results.json names no release folder; pass release=FOLDER")
    items = load_release(folder)
    dataset = str(results.get("dataset") or items.attrs["dataset"])
    if dataset != items.attrs["dataset"]:
        raise AnalysisError(
            f"the run scored {dataset} items, the release {folder} holds {items.attrs['dataset']}"
        )
    if dataset == Dataset.WSC:
        frame = _wsc_run(predictions, items)
    elif dataset == Dataset.WINOWHY:
        frame = _winowhy_run(predictions, items)
    else:
        frame = _comve_run(predictions, items)
    frame.attrs.update(run_attrs(results))
    frame.attrs["release"] = f"{items.attrs['name']}@{items.attrs['version']}"
    return frame


def run_model(results: Mapping[str, Any]) -> str:
    """What a run scored: the model's registry name, else its file or folder name; for
    uploaded predictions the uploaded file's name; for a baseline its method."""
    settings = results.get("settings") or {}
    if results.get("model_name"):
        return str(results["model_name"])
    if results.get("model_path"):
        return Path(str(results["model_path"])).name
    if results.get("method") == Method.PREDICTIONS and settings.get("predictions_name"):
        return str(settings["predictions_name"])
    return str(results.get("method") or "")


def run_label(results: Mapping[str, Any]) -> str:
    """How pages name a run: ``#ID MODEL (METHOD)``, or ``#ID METHOD`` for a baseline;
    a run its researcher named: ``#ID NAME``."""
    if results.get("name"):
        return f"#{results.get('run')} {results['name']}"
    method, model = str(results.get("method") or ""), run_model(results)
    return (
        f"#{results.get('run')} {model} ({method})" if model != method else f"#{results.get('run')} {method}"
    )


def run_attrs(results: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "run": results.get("run"),
        "dataset": results.get("dataset"),
        "method": results.get("method"),
        "model": run_model(results),
        "label": run_label(results),
    }


def _attach_items(
    frame: pd.DataFrame, items: pd.DataFrame, columns: list[str], on: list[str]
) -> pd.DataFrame:
    missing = ~frame.set_index(on).index.isin(items.set_index(on).index)
    if missing.any():
        first = frame.loc[missing, on].iloc[0].tolist()
        raise AnalysisError(
            f"{int(missing.sum())} predicted items are not in the release, for example {'/'.join(map(str, first))}"
        )
    return frame.merge(items[on + columns], on=on, how="left", validate="one_to_one")


def _wsc_run(predictions: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    original = predictions[predictions["variant"] == "original"]
    switched = predictions[predictions["variant"] == "switched"]
    frame = original[["id", "gold", "prediction", "correct", "scores"]].reset_index(drop=True)
    frame = frame.merge(
        switched[["id", "gold", "prediction", "correct"]].rename(
            columns={
                "gold": "switched_gold",
                "prediction": "switched_prediction",
                "correct": "switched_correct",
            }
        ),
        on="id",
        how="left",
        validate="one_to_one",
    )
    frame = frame.astype(
        {
            "gold": "int64",
            "prediction": "int64",
            "correct": "bool",
            "switched_gold": "Int64",
            "switched_prediction": "Int64",
            "switched_correct": "boolean",
        }
    )
    frame["changed"] = (frame["switched_prediction"] != frame["prediction"]).astype("boolean")
    frame.loc[frame["switched_prediction"].isna(), "changed"] = pd.NA
    frame = _attach_items(
        frame,
        items,
        ["switchable", "associative", "knowledge_types", "n_knowledge_types", "type_count"],
        ["id"],
    )
    # A switchable item scored without its switched sentence (an upload of originals only)
    # cannot enter the switch protocol: its label is left out, as the run's metrics do.
    unscored = frame["switchable"].eq(True).fillna(False) & frame["switched_prediction"].isna()
    frame.loc[unscored, "switchable"] = pd.NA
    return frame


def _winowhy_run(predictions: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    frame = predictions[["id", "question_id", "scores", "prediction", "gold", "correct"]].reset_index(
        drop=True
    )
    frame.insert(2, "score", frame["scores"].map(lambda s: float(s[0])).astype("float64"))
    frame = frame.drop(columns=["scores"])
    frame["positive"] = frame["gold"].eq("positive").astype("bool")
    frame = frame.astype({"prediction": "str", "gold": "str", "correct": "bool"})
    return _attach_items(frame, items, ["knowledge_types", "n_knowledge_types", "type_count"], ["id"])


def _same_answer(chosen: pd.Series, gold: pd.Series) -> pd.Series:
    """Whether each chosen answer is the gold one; NA where none was chosen. Element by
    element: subtask C's rows carry a list of references as their gold, which pandas'
    vectorised string comparison refuses."""
    return pd.Series(
        [pd.NA if pd.isna(c) else c == g for c, g in zip(chosen, gold, strict=True)],
        index=chosen.index,
        dtype="boolean",
    )


def _comve_run(predictions: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    frame = predictions.rename(columns={"variant": "subtask"}).reset_index(drop=True)
    columns = ["subtask", "id", "prediction", "gold", "correct"]
    if "prediction_norm" in frame:
        columns.append("prediction_norm")
        norm = frame["prediction_norm"]
        frame["correct_norm"] = _same_answer(norm, frame["gold"])
        columns.append("correct_norm")
    if "prediction_by_rule" in frame:
        # each named rule's answer (evaluation.metrics.comve.COMVE_RULES), right or not
        by_rule = frame["prediction_by_rule"].map(lambda d: d if isinstance(d, dict) else {})
        for name in sorted({name for d in by_rule for name in d}):
            chosen = by_rule.map(lambda d, name=name: d.get(name))
            frame[f"correct_rule_{name}"] = _same_answer(chosen, frame["gold"])
            columns.append(f"correct_rule_{name}")
    frame = frame[columns]
    frame = frame.astype({"subtask": "str", "correct": "boolean"})
    return _attach_items(frame, items, [], ["subtask", "id"])


# --------------------------------------------------------------------------- joins


def join_runs(runs: Mapping[str, pd.DataFrame], *, how: str = "inner") -> pd.DataFrame:
    """Two or more runs' frames side by side, item by item.

    ``runs`` maps a name to a frame of :func:`load_predictions` or :func:`load_run` (all
    of one kind). They are joined on the key columns they share (``subtask``, ``id``,
    ``variant``); each run's own columns are prefixed ``NAME_`` (``a_correct``), the item's
    columns (``gold``, ``switchable``, ``knowledge_types``, ...) are taken once, from the
    first run. Rows keep the first run's order; ``how="outer"`` keeps items of any run.
    """
    if len(runs) < 2:
        raise AnalysisError("join at least two runs")
    if how not in ("inner", "left", "outer"):
        raise AnalysisError(f"how must be 'inner', 'left' or 'outer', not {how!r}")
    frames = list(runs.items())
    keys = [k for k in KEY_COLUMNS if all(k in f for _, f in frames)]
    if "id" not in keys:
        raise AnalysisError("every frame needs an 'id' column")
    first = frames[0][1]
    joined = first[keys + [c for c in ITEM_COLUMNS if c in first]]
    for name, frame in frames:
        if frame.duplicated(keys).any():
            raise AnalysisError(f"run {name!r} has more than one row for an item ({', '.join(keys)})")
        own = frame.drop(columns=[c for c in ITEM_COLUMNS if c in frame])
        own = own.rename(columns={c: f"{name}_{c}" for c in own.columns if c not in keys})
        joined = joined.merge(own, on=keys, how=how, validate="one_to_one")
    return joined.reset_index(drop=True)
