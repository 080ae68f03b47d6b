"""Releases, runs and their figures as pandas DataFrames (``docs/analysis.md``). No Django.

    from evaluation import analysis
    run = analysis.load_run("var/media/evaluation/runs/run-1")
    analysis.wsc_table(run)

Loaders read files (an exported release folder, a run's results folder); tables are computed
from the loaded frames. The site's run pages, leaderboards and comparisons call the same
functions, and their CSV and JSON downloads are these frames.
"""

from evaluation.analysis.frames import (
    ITEM_COLUMNS,
    KEY_COLUMNS,
    AnalysisError,
    join_runs,
    load_predictions,
    load_release,
    load_results,
    load_run,
    run_label,
    type_count,
)
from evaluation.analysis.tables import (
    ACCURACY_COLUMNS,
    COMPARISON_COLUMNS,
    WINOWHY_COLUMNS,
    Comparison,
    accuracy_table,
    compare_runs,
    comparison_table,
    comve_table,
    knowledge_type_row,
    leaderboard,
    run_table,
    switch_row,
    winowhy_table,
    wsc_table,
)
from evaluation.metrics.common import KNOWLEDGE_TYPES
from evaluation.metrics.significance import mcnemar, wilson_interval, wilson_intervals

__all__ = [
    "ACCURACY_COLUMNS",
    "COMPARISON_COLUMNS",
    "ITEM_COLUMNS",
    "KEY_COLUMNS",
    "KNOWLEDGE_TYPES",
    "WINOWHY_COLUMNS",
    "AnalysisError",
    "Comparison",
    "accuracy_table",
    "compare_runs",
    "comparison_table",
    "comve_table",
    "join_runs",
    "knowledge_type_row",
    "leaderboard",
    "load_predictions",
    "load_release",
    "load_results",
    "load_run",
    "mcnemar",
    "run_label",
    "run_table",
    "switch_row",
    "type_count",
    "wilson_interval",
    "wilson_intervals",
    "winowhy_table",
    "wsc_table",
]
