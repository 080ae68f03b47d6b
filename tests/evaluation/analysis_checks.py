"""One check shared by the analysis tests: every figure of a run's tables equals its results.json."""

import math
from pathlib import Path
from typing import Any

import pandas as pd

from evaluation import analysis


def _same(value: Any, expected: Any) -> bool:
    if expected is None:
        return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))
    return bool(value == expected)


def _row(table: pd.DataFrame, key: str, **expected: Any) -> None:
    row = table.loc[key]
    for column, value in expected.items():
        assert _same(row[column], value), f"{key}.{column}: table {row[column]!r}, results.json {value!r}"


def _accuracy(table: pd.DataFrame, key: str, block: dict[str, Any]) -> None:
    _row(table, key, n=block["n"], correct=block["correct"], accuracy=block["accuracy"])


def _interval(table: pd.DataFrame, key: str, block: dict[str, Any]) -> None:
    low, high = block["wilson_95"]
    _row(table, key, wilson_low=low, wilson_high=high)


def assert_tables_equal_results(folder: str | Path) -> pd.DataFrame:
    """Load the run, compute its table, compare every figure with results.json; the table."""
    results = analysis.load_results(folder)
    metrics = results["metrics"]
    run = analysis.load_run(folder)
    table = analysis.run_table(run)
    if results["dataset"] == "wsc":
        _accuracy(table, "all", metrics["all"])
        _interval(table, "all", metrics["significance"]["all"])
        sw = metrics["switchable"]
        _row(
            table,
            "switchable_before",
            n=sw["n"],
            correct=sw["correct_before"],
            accuracy=sw["accuracy_before"],
        )
        _row(table, "switchable_after", n=sw["n"], correct=sw["correct_after"], accuracy=sw["accuracy_after"])
        _row(table, "consistency", n=sw["n"], correct=sw["changed"], accuracy=sw["consistency"])
        if sw["n"]:
            _interval(table, "switchable_after", metrics["significance"]["switchable_after"])
        for key in ("non_switchable", "associative", "non_associative"):
            _accuracy(table, key, metrics[key])
        types = {k[5:] for k in table.index if k.startswith("type:")}
        assert types == set(metrics["knowledge_types"])
        for name, block in metrics["knowledge_types"].items():
            _accuracy(table, f"type:{name}", block)
        for key, block in metrics["type_count"].items():
            _accuracy(table, key, block)
    elif results["dataset"] == "winowhy":
        best = metrics["best_threshold"]
        _row(table, "all", n=best["n"], correct=best["correct"], accuracy=best["accuracy"])
        _row(table, "all", threshold=best["threshold"], positives=metrics["positives"])
        _row(table, "all", majority_accuracy=metrics["majority_baseline"]["accuracy"])
        _interval(table, "all", metrics["significance"]["best_threshold"])
        types = {k[5:] for k in table.index if k.startswith("type:")}
        assert types == set(metrics["knowledge_types"])
        for name, block in metrics["knowledge_types"].items():
            key = f"type:{name}"
            b, at = block["best"], block["at_overall_threshold"]
            _row(table, key, n=b["n"], correct=b["correct"], accuracy=b["accuracy"], threshold=b["threshold"])
            _row(
                table,
                key,
                at_overall_threshold_correct=at["correct"],
                at_overall_threshold_accuracy=at["accuracy"],
            )
            _row(table, key, majority_accuracy=block["majority_baseline"]["accuracy"])
    else:
        for subtask in ("a", "b"):
            if subtask in metrics:
                _accuracy(table, subtask, metrics[subtask])
                _interval(table, subtask, {"wilson_95": metrics[subtask]["significance"]["wilson_95"]})
                if "length_normalised" in metrics[subtask]:
                    _accuracy(table, f"{subtask}_norm", metrics[subtask]["length_normalised"])
                    _interval(table, f"{subtask}_norm", metrics[subtask]["length_normalised"])
        if metrics.get("c", {}).get("computed"):
            _row(table, "c", n=metrics["c"]["n"], bleu_percent=metrics["c"]["bleu_percent"])
        else:
            assert "c" not in table.index
    board = analysis.leaderboard([results])
    assert _same(board.loc[0, "accuracy"], metrics["summary"]["accuracy"])
    assert board.loc[0, "n"] == metrics["summary"]["n"]
    return table
