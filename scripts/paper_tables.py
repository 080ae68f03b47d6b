"""The papers' result tables beside Winnow's SmolLM2 figures, generated (issue 17).

    python scripts/paper_tables.py            # check: exit 1 and show what differs
    python scripts/paper_tables.py --write    # rewrite the generated regions in place

Each table is built from two sources only: the paper's own text in ``../shared/papers/``
(``WINNOW_PAPERS_DIR``; the rows are parsed from it, never typed) and a stored run's
``results.json`` under ``docs/``. The tables go between the markers
``<!-- generated:NAME -->`` and ``<!-- /generated:NAME -->`` in ``docs/papers.md`` and
``README.md``; ``tests/test_figures.py`` regenerates them and fails when the text says
anything else, so a figure typed by hand or left stale cannot stay.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paper_smollm2 import cloze_1000, headline, start_token, wsc_smollm2  # noqa: E402
from paper_sources import (  # noqa: E402
    CLOZE,
    COMVE,
    PROPOSAL,
    QASEMI,
    ROOT,
    SENMAKING,
    TRICHELAIR,
    TYPES,
    WANG,
    WINOWHY,
    WINOWHY_PAPER,
    WSC_FULL,
    WSC_PARTIAL,
    PaperError,
    _smol,
    paper,
    pct,
    quote,
    row,
    run,
    table,
)

# PAPERS and PERCENT are read here by tests/test_figures.py
from paper_sources import PAPERS as PAPERS  # noqa: E402
from paper_sources import PERCENT as PERCENT  # noqa: E402

# -- Trichelair et al. 2018 ------------------------------------------------------------


def _wsc(run_path: str) -> dict[str, Any]:
    return dict(run(run_path)["metrics"])


# Trichelair et al.'s models, each row's label followed by its citation key in their text
TRICHELAIR_MODELS = (
    ("Single LM", "trinh2018simple &"),
    ("Ensemble 10 LMs", "trinh2018simple &"),
    ("Ensemble 14 LMs", "trinh2018simple &"),
    ("Knowledge Hunter", "emami2018generalized &"),
)


def _trichelair_rows(count: int, *, after: str = "") -> list[list[str]]:
    return [
        [label, *row(TRICHELAIR, f"{label} {cite}", count, after=after)] for label, cite in TRICHELAIR_MODELS
    ]


def trichelair_2() -> list[str]:
    rows = _trichelair_rows(4)
    for method, path in (("full", WSC_FULL), ("partial", WSC_PARTIAL)):
        m = _wsc(path)
        s = m["switchable"]
        rows.append(
            [
                _smol(method),
                pct(m["all"]["accuracy"]),
                pct(s["accuracy_before"]),
                pct(s["accuracy_after"]),
                pct(s["consistency"]),
            ]
        )
    return table(["model", "WSC273", "switchable, unswitched", "switchable, switched", "consistency"], rows)


def trichelair_3() -> list[str]:
    rows = _trichelair_rows(2, after="Model & Associative & Non-Associative")
    for method, path in (("full", WSC_FULL), ("partial", WSC_PARTIAL)):
        m = _wsc(path)
        rows.append([_smol(method), pct(m["associative"]["accuracy"]), pct(m["non_associative"]["accuracy"])])
    n = _wsc(WSC_FULL)
    return table(
        ["model", f"associative ({n['associative']['n']})", f"non-associative ({n['non_associative']['n']})"],
        rows,
    )


# -- Zhang et al. 2020 (WinoWhy) ---------------------------------------------------------

WINOWHY_WSC_MODELS = (
    "BERT (base)",
    "BERT (large)",
    "RoBERTa (base)",
    "RoBERTa (large)",
    "GPT-2 (small, full)",
    "GPT-2 (small, partial)",
    "GPT-2 (large, full)",
    "GPT-2 (large, partial)",
    "BERT (large) + WSCR",
    "RoBERTa (large) + Grande",
)


def winowhy_4() -> list[str]:
    after = "Model Property Object Eventuality Spatial Quantity Others Overall\n(32)"
    rows = [[label, *row(WINOWHY_PAPER, label, 7, after=after)] for label in WINOWHY_WSC_MODELS]
    for method, path in (("full", WSC_FULL), ("partial", WSC_PARTIAL)):
        m = _wsc(path)
        types = m["knowledge_types"]
        rows.append([_smol(method), *(pct(types[t]["accuracy"]) for t in TYPES), pct(m["all"]["accuracy"])])
    counts = _wsc(WSC_FULL)["knowledge_types"]
    n = _wsc(WSC_FULL)["all"]["n"]
    return table(["model", *(f"{t} ({counts[t]['n']})" for t in TYPES), f"Overall ({n})"], rows)


def winowhy_5() -> list[str]:
    after = "Model Single Multiple"
    rows = [[label, *row(WINOWHY_PAPER, label, 2, after=after)] for label in WINOWHY_WSC_MODELS]
    for method, path in (("full", WSC_FULL), ("partial", WSC_PARTIAL)):
        k = _wsc(path)["type_count"]
        rows.append([_smol(method), pct(k["single"]["accuracy"]), pct(k["multiple"]["accuracy"])])
    k = _wsc(WSC_FULL)["type_count"]
    return table(["model", f"Single ({k['single']['n']})", f"Multiple ({k['multiple']['n']})"], rows)


def winowhy_6() -> list[str]:
    after = "(337) (856) (928) (674) (206) (496) (2865)"
    labels = (
        "Majority Voting",
        "BERT (base)",
        "BERT (large)",
        "RoBERTa (base)",
        "RoBERTa (large)",
        "GPT-2 (small)",
        "GPT-2 (large)",
        "RoBERTa (large) + Grande",
    )
    rows = [[label, *row(WINOWHY_PAPER, label, 7, after=after)] for label in labels]
    m = run(WINOWHY)["metrics"]
    types = m["knowledge_types"]
    rows.append(
        [
            _smol("full, one threshold"),
            *(pct(types[t]["at_overall_threshold"]["accuracy"]) for t in TYPES),
            pct(m["best_threshold"]["accuracy"]),
        ]
    )
    rows.append(
        [
            "**majority per type (Winnow)**",
            *(pct(types[t]["majority_baseline"]["accuracy"]) for t in TYPES),
            pct(m["majority_baseline"]["accuracy"]),
        ]
    )
    rows.append(
        [_smol("full, each type's own threshold"), *(pct(types[t]["best"]["accuracy"]) for t in TYPES), ""]
    )
    return table(
        [
            "model",
            *(f"{t} ({types[t]['majority_baseline']['n']})" for t in TYPES),
            f"Overall ({m['best_threshold']['n']})",
        ],
        rows,
    )


def winowhy_7() -> list[str]:
    rows = []
    for setting, after in (("q", "Five-fold (q) Glove + LSTM"), ("r", "Five-fold (r) Glove + LSTM")):
        text_after = after
        first = row(WINOWHY_PAPER, f"Five-fold ({setting}) Glove + LSTM", 2)
        rows.append([f"Five-fold ({setting})", "Glove + LSTM", *first])
        for label in (
            "BERT (base)",
            "BERT (large)",
            "RoBERTa (base)",
            "RoBERTa (large)",
            "GPT-2 (small)",
            "GPT-2 (large)",
        ):
            rows.append(["", label, *row(WINOWHY_PAPER, label, 2, after=text_after)])
        cv = run(WINOWHY)["metrics"]["cross_validation"]
        key = "by_question" if setting == "q" else "by_reason"
        for name, result in (
            ("feed-forward, as the paper", cv[key]),
            ("logistic regression", cv["logistic"][key]),
        ):
            rows.append(
                ["", _smol(name), pct(result["mean_fold_accuracy"]), pct(result["std_fold_accuracy"])]
            )
    return table(["setting", "model", "accuracy", "std"], rows)


# -- Wang et al. 2019 and the task proposal ---------------------------------------------------


def _comve_rows(path: str) -> list[list[str]]:
    m = run(path)["metrics"]
    return [
        [
            _smol("perplexity, as the paper"),
            pct(m["a"]["rules"]["perplexity"]["accuracy"], 1),
            pct(m["b"]["rules"]["perplexity"]["accuracy"], 1),
        ],
        [
            _smol("total log-probability; the reason alone"),
            pct(m["a"]["rules"]["total"]["accuracy"], 1),
            pct(m["b"]["rules"]["continuation"]["accuracy"], 1),
        ],
    ]


def wang_1() -> list[str]:
    rows = [
        [label, *row(WANG, label, 2, after="Model Sen-Making Explanation")]
        for label in ("Random", "ELMo", "BERT", "fine-tuned ELMo", "Human Performance")
    ]
    n = run(SENMAKING)["metrics"]["a"]["n"]
    return table(["model", "Sen-Making", "Explanation"], rows + _comve_rows(SENMAKING)) + [
        "",
        f"Winnow's rows: `senmaking@1.0.0`, the pilot data set ({n:,} items).",
    ]


def proposal_1() -> list[str]:
    after = "Validation\tExplanation (Multi-Choice)"
    rows = []
    text = paper(PROPOSAL)
    start = text.find(after)
    for line in text[start:].splitlines()[1:5]:
        label, *figures = line.split("\t")
        rows.append([label, *figures[:2]])
    n = run(SENMAKING)["metrics"]["a"]["n"]
    return table(["model", "Validation", "Explanation (Multi-Choice)"], rows + _comve_rows(SENMAKING)) + [
        "",
        f"Winnow's rows: the same pilot data (`senmaking@1.0.0`, {n:,} items).",
    ]


def comve_test() -> list[str]:
    m = run(COMVE)["metrics"]
    rows = _comve_rows(COMVE)
    rows.append(
        [
            _smol("per character (lm-evaluation-harness acc_norm)"),
            pct(m["a"]["rules"]["per_character"]["accuracy"], 1),
            pct(m["b"]["rules"]["continuation_per_character"]["accuracy"], 1),
        ]
    )
    return table(["ComVE 2020 test (`comve-test@1.0.0`, 1,000 items)", "subtask A", "subtask B"], rows)


# -- Qasemi et al. ------------------------------------------------------------------------


def qasemi() -> list[str]:
    r = run(CLOZE)
    d, c = r["dispersion"], r["confidence"]
    rows = [
        ["experiment 1: statements", quote(QASEMI, "1,000"), f"{d['scored']:,}"],
        [
            "r(accuracy, precision), uniform weights",
            quote(QASEMI, "0.390"),
            f"{d['pearson_accuracy_precision_uniform']:.3f}",
        ],
        [
            "r(accuracy, precision), weighted",
            quote(QASEMI, "0.906"),
            f"{d['pearson_accuracy_precision_weighted']:.3f}",
        ],
        [
            "r(sentence length, score)",
            quote(QASEMI, "0.548") + " (score not named)",
            " / ".join(
                f"{d['pearson_with_length'][k]:.3f}" for k in ("accuracy_weighted", "precision_weighted")
            )
            + " (weighted accuracy / precision)",
        ],
        [
            "experiment 2: right of the encodable pairs",
            f"{quote(QASEMI, '63')} of {quote(QASEMI, '83')}",
            f"{c['correct']} of {c['encoded']} ({pct(c['accuracy'], 1)})",
        ],
        [
            "mean confidence of the prediction, right / wrong cases",
            quote(QASEMI, "less than 50%") + " in both",
            f"{pct(c['confidence_predicted_right'], 1)} / {pct(c['confidence_predicted_wrong'], 1)}",
        ],
    ]
    return table(
        ["", "Qasemi et al. (RoBERTa, GloVe)", "SmolLM2-135M-Instruct (Winnow, the paper's equations)"], rows
    )


REGIONS: dict[str, Callable[[], list[str]]] = {
    "cloze-1000": cloze_1000,
    "wsc-smollm2": wsc_smollm2,
    "start-token": start_token,
    "headline": headline,
    "trichelair-2": trichelair_2,
    "trichelair-3": trichelair_3,
    "winowhy-4": winowhy_4,
    "winowhy-5": winowhy_5,
    "winowhy-6": winowhy_6,
    "winowhy-7": winowhy_7,
    "wang-1": wang_1,
    "proposal-1": proposal_1,
    "comve-test": comve_test,
    "qasemi": qasemi,
}
PAPER_REGIONS = (
    "trichelair-2",
    "trichelair-3",
    "winowhy-4",
    "winowhy-5",
    "winowhy-6",
    "winowhy-7",
    "wang-1",
    "proposal-1",
    "comve-test",
    "qasemi",
)
DOCUMENTS = ("docs/papers.md", "README.md", "docs/evaluation.md", "docs/cloze.md")
MARKER = re.compile(
    r"(<!-- generated:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /generated:(?P=name) -->)", re.S
)


def render(text: str) -> str:
    """``text`` with every generated region filled from the papers and the stored runs."""

    def fill(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in REGIONS:
            raise PaperError(f"unknown generated region {name!r}")
        return match.group(1) + "\n".join(REGIONS[name]()) + "\n" + match.group(4)

    return MARKER.sub(fill, text)


def main(argv: list[str]) -> int:
    write = "--write" in argv
    stale = []
    for document in DOCUMENTS:
        path = ROOT / document
        text = path.read_text(encoding="utf-8")
        new = render(text)
        if new != text:
            stale.append(document)
            if write:
                path.write_text(new, encoding="utf-8")
    if stale and not write:
        print("out of date (run scripts/paper_tables.py --write): " + ", ".join(stale))
        return 1
    print(("rewrote " + ", ".join(stale)) if stale else "up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
