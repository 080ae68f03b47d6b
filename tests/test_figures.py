"""Model figures in the README and docs/ are the stored runs' figures (issue 17).

Each entry below names a passage of a document, the stored ``results.json`` it comes from
(kept under ``docs/``) and how the passage prints the figure. The test renders the
passage from the stored results and asserts the document holds it, so a figure typed by
hand, rounded differently or left stale after a new run fails here. To change a figure,
store the new run's ``results.json`` under ``docs/`` and point the entry at it.

Figures not yet covered (older runs whose ``results.json`` was not kept): see the list in
``docs/papers.md``, "Figures and their sources".
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
COMVE = "docs/smollm2-runs/comve-test-1.0.0.json"
SENMAKING = "docs/smollm2-runs/senmaking-1.0.0.json"
CLOZE_PAPER = "docs/cloze-smollm2/results-paper-equations-first100.json"
CLOZE_RENORM = "docs/cloze-smollm2/results-paper-first100-rescored-renormalised.json"
CLOZE_1000 = "docs/cloze-smollm2/results.json"  # 21 Nov 2026, renormalised equations
WINOWHY = "docs/smollm2-runs/winowhy-1.0.0.json"
WSC_PARTIAL = "docs/smollm2-runs/wsc273-1.0.0-partial.json"
WSC_FULL = "docs/smollm2-runs/wsc273-1.0.0-full.json"
WSC_PARTIAL_EOT = "docs/smollm2-runs/wsc273-1.0.0-partial-endoftext.json"
WSC_FULL_EOT = "docs/smollm2-runs/wsc273-1.0.0-full-endoftext.json"
CLOZE_FULL = "docs/cloze-smollm2/results-paper-equations-1000.json"  # 23 Nov 2026, the paper's equations
TYPES = ("Property", "Object", "Eventuality", "Spatial", "Quantity", "Others")


def _fold(r: dict[str, Any]) -> str:
    return f"{_pct(r['mean_fold_accuracy'])} ± {_pct(r['std_fold_accuracy'])}"


@cache
def _results(path: str) -> dict[str, Any]:
    return json.loads((ROOT / path).read_text(encoding="utf-8"))


def _pct(x: float) -> str:
    return f"{100 * x:.2f}%"


def _pct1(x: float) -> str:
    return f"{100 * x:.1f}%"


def _acc(results: dict[str, Any], subset: str) -> float:
    """A WSC run's accuracy on a subset (all, associative, non_associative)."""
    return float(results["metrics"][subset]["accuracy"])


def _of(results: dict[str, Any], subset: str) -> str:
    return _count(results["metrics"][subset])


def _rule(results: dict[str, Any], subtask: str, rule: str) -> dict[str, Any]:
    return results["metrics"][subtask]["rules"][rule]


def _count(r: dict[str, Any]) -> str:
    return f"{r['correct']:,}/{r['n']:,}"


# (document, stored results, passage rendered from them)
FIGURES: list[tuple[str, str, Callable[[dict[str, Any]], str]]] = [
    (
        "README.md",
        COMVE,
        lambda r: (
            f"subtask A {_pct(_rule(r, 'a', 'perplexity')['accuracy'])} "
            f"({_count(_rule(r, 'a', 'perplexity'))}; chance 50%), subtask B "
            f"{_pct(_rule(r, 'b', 'perplexity')['accuracy'])} ({_count(_rule(r, 'b', 'perplexity'))}; chance 33.3%)"
        ),
    ),
    (
        "README.md",
        COMVE,
        lambda r: (
            f"A {_pct(_rule(r, 'a', 'total')['accuracy'])} by total log-probability, "
            f"B {_pct(_rule(r, 'b', 'continuation')['accuracy'])} by the reason's log-probability"
        ),
    ),
    (
        "README.md",
        COMVE,
        lambda r: f"and {_pct(_rule(r, 'b', 'continuation_per_character')['accuracy'])} per character",
    ),
    (
        "README.md",
        SENMAKING,
        lambda r: (
            f"Sen-Making {_pct(_rule(r, 'a', 'perplexity')['accuracy'])}, "
            f"Explanation {_pct(_rule(r, 'b', 'perplexity')['accuracy'])}"
        ),
    ),
    (
        "README.md",
        SENMAKING,
        lambda r: (
            f"by the earlier rules {_pct(_rule(r, 'a', 'total')['accuracy'])} / "
            f"{_pct(_rule(r, 'b', 'continuation')['accuracy'])}"
        ),
    ),
    *[
        (
            "docs/evaluation.md",
            COMVE,
            lambda r, s=subtask, rules=rules: " | ".join(
                f"{'**' if i == 0 else ''}{_pct(_rule(r, s, name)['accuracy'])}{'**' if i == 0 else ''} "
                f"({_count(_rule(r, s, name))})"
                for i, name in enumerate(rules)
            ),
        )
        for subtask, rules in (
            ("a", ("perplexity", "total", "per_character")),
            ("b", ("perplexity", "continuation", "continuation_per_character")),
        )
    ],
    *[
        (
            "docs/evaluation.md",
            SENMAKING,
            lambda r, s=subtask, rules=rules: " | ".join(
                f"{'**' if i == 0 else ''}{_pct(_rule(r, s, name)['accuracy'])}{'**' if i == 0 else ''} "
                f"({_rule(r, s, name)['correct']:,})"
                for i, name in enumerate(rules)
            ),
        )
        for subtask, rules in (
            ("a", ("perplexity", "total", "per_character")),
            ("b", ("perplexity", "continuation", "continuation_per_character")),
        )
    ],
    (
        "docs/evaluation.md",
        WINOWHY,
        lambda r: (
            "| SmolLM2-135M-Instruct, full (here) | "
            + " | ".join(
                _pct(r["metrics"]["knowledge_types"][t]["at_overall_threshold"]["accuracy"]) for t in TYPES
            )
            + f" | {_pct(r['metrics']['best_threshold']['accuracy'])} |"
        ),
    ),
    (
        "docs/evaluation.md",
        WINOWHY,
        lambda r: (
            "| SmolLM2, two-layer feed-forward network, ten epochs (here, as the paper) | "
            f"{_fold(r['metrics']['cross_validation']['by_question'])} | {_fold(r['metrics']['cross_validation']['by_reason'])} |"
        ),
    ),
    (
        "docs/evaluation.md",
        WINOWHY,
        lambda r: (
            "| SmolLM2, logistic regression (here, beside it) | "
            f"{_fold(r['metrics']['cross_validation']['logistic']['by_question'])} | "
            f"{_fold(r['metrics']['cross_validation']['logistic']['by_reason'])} |"
        ),
    ),
    (
        "README.md",
        WINOWHY,
        lambda r: (
            f"best threshold {_pct(r['metrics']['best_threshold']['accuracy'])} "
            f"(majority {_pct(r['metrics']['majority_baseline']['accuracy'])}); five-fold cross-validation, "
            "Table 7's feed-forward network on frozen features: "
            f"{_fold(r['metrics']['cross_validation']['by_question'])} by question, "
            f"{_fold(r['metrics']['cross_validation']['by_reason'])} by reason"
        ),
    ),
    (
        "README.md",
        WSC_PARTIAL,
        lambda r: (
            f"partial {_pct1(_acc(r, 'all'))} ({_of(r, 'all')}), full "
            f"{_pct1(_acc(_results(WSC_FULL), 'all'))} ({_of(_results(WSC_FULL), 'all')}); consistency "
            f"{_pct1(r['metrics']['switchable']['consistency'])} / "
            f"{_pct1(_results(WSC_FULL)['metrics']['switchable']['consistency'])}; associative "
            f"{_pct1(_acc(r, 'associative'))} / {_pct1(_acc(_results(WSC_FULL), 'associative'))}, non-associative "
            f"{_pct1(_acc(r, 'non_associative'))} / {_pct1(_acc(_results(WSC_FULL), 'non_associative'))}"
        ),
    ),
    (
        "README.md",
        WSC_PARTIAL_EOT,
        lambda r: (
            f"partial {_pct(_acc(r, 'all'))} ({_of(r, 'all')}), full "
            f"{_pct(_acc(_results(WSC_FULL_EOT), 'all'))} ({_of(_results(WSC_FULL_EOT), 'all')}), "
            f"exactly DESIGN's {_pct1(_acc(r, 'all'))} / {_pct1(_acc(_results(WSC_FULL_EOT), 'all'))}"
        ),
    ),
    (
        "docs/evaluation.md",
        WSC_PARTIAL_EOT,
        lambda r: (
            f"DESIGN section 8 quotes {_pct1(_acc(r, 'all'))} partial / "
            f"{_pct1(_acc(_results(WSC_FULL_EOT), 'all'))} full for SmolLM2"
        ),
    ),
    (
        "README.md",
        CLOZE_FULL,
        lambda r: (
            f"all {r['dispersion']['scored']:,} statements: r(accuracy, precision) = "
            f"{r['dispersion']['pearson_accuracy_precision_uniform']:.3f} uniform, "
            f"{r['dispersion']['pearson_accuracy_precision_weighted']:.3f} weighted"
        ),
    ),
    (
        "README.md",
        CLOZE_FULL,
        lambda r: (
            f"experiment 2: {r['confidence']['correct']} of {r['confidence']['encoded']} encodable pairs right"
        ),
    ),
    (
        "README.md",
        CLOZE_RENORM,
        lambda r: (
            f"r = {r['dispersion']['pearson_accuracy_precision_weighted']:.3f} weighted, "
            f"{r['confidence']['correct']} of {r['confidence']['encoded']}"
        ),
    ),
    (
        "docs/cloze.md",
        CLOZE_1000,
        lambda r: (
            f"{r['dispersion']['scored']:,} ({r['dispersion']['masked_words']:,} masked content words, none skipped) |"
            f" | r(accuracy, precision), uniform | 0.390 | **{r['dispersion']['pearson_accuracy_precision_uniform']:.3f}** |"
            f" | r(accuracy, precision), weighted | 0.906 | **{r['dispersion']['pearson_accuracy_precision_weighted']:.3f}** |"
        ),
    ),
    (
        "docs/cloze.md",
        CLOZE_PAPER,
        lambda r: (
            f"| r(accuracy, precision), weighted | **{r['dispersion']['pearson_accuracy_precision_weighted']:.3f}** | "
            f"{_results(CLOZE_RENORM)['dispersion']['pearson_accuracy_precision_weighted']:.3f} | 0.906 |"
        ),
    ),
    (
        "docs/cloze.md",
        CLOZE_PAPER,
        lambda r: (
            f"| experiment 2: right of {r['confidence']['encoded']} encoded pairs | "
            f"**{r['confidence']['correct']} ({_pct(r['confidence']['accuracy'])[:-2]}%)** | "
            f"{_results(CLOZE_RENORM)['confidence']['correct']} ({_pct(_results(CLOZE_RENORM)['confidence']['accuracy'])[:-2]}%) |"
        ),
    ),
    (
        "docs/cloze.md",
        CLOZE_PAPER,
        lambda r: (
            "| mean precision uniform / weighted | "
            f"{r['dispersion']['mean']['precision_uniform']:.3f} / **{r['dispersion']['mean']['precision_weighted']:.3f}** | "
            f"{_results(CLOZE_RENORM)['dispersion']['mean']['precision_uniform']:.3f} / "
            f"{_results(CLOZE_RENORM)['dispersion']['mean']['precision_weighted']:.3f} |"
        ),
    ),
]


def _passage_id(entry: tuple[str, str, Callable[[dict[str, Any]], str]]) -> str:
    return f"{entry[0]}<-{Path(entry[1]).name}"


@pytest.mark.parametrize("document, stored, passage", FIGURES, ids=[_passage_id(f) for f in FIGURES])
def test_the_document_prints_the_stored_runs_figure(document, stored, passage):
    expected = passage(_results(stored))
    text = " ".join((ROOT / document).read_text(encoding="utf-8").split())
    assert " ".join(expected.split()) in text, f"{document} should say: {expected}"


def test_a_figure_changed_by_hand_is_caught(tmp_path):
    """The check reads the text: one digit changed in the README's copy fails it."""
    document, stored, passage = FIGURES[0]
    expected = passage(_results(stored))
    readme = (ROOT / document).read_text(encoding="utf-8")
    assert expected in readme
    tampered = readme.replace(expected, expected.replace("68.70%", "68.71%"), 1)
    assert tampered != readme and expected not in tampered


# -- the papers' tables, generated (scripts/paper_tables.py) --------------------------------


def _paper_tables() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("paper_tables", ROOT / "scripts" / "paper_tables.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def tables() -> Any:
    """scripts/paper_tables.py, with the papers present (skips without them, fails in CI)."""
    module = _paper_tables()
    if not (module.PAPERS / module.QASEMI).is_file():
        message = (
            f"the papers are not in {module.PAPERS}: they come with the Winnow repository's sibling "
            "folder `shared/papers/` (or set WINNOW_PAPERS_DIR). CI sets WINNOW_REQUIRE_DATA=1, "
            "which turns this skip into a failure."
        )
        if os.environ.get("WINNOW_REQUIRE_DATA") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return module


@pytest.mark.parametrize("document", ["docs/papers.md", "README.md"])
def test_the_generated_tables_are_the_papers_and_the_stored_runs(tables, document):
    text = (ROOT / document).read_text(encoding="utf-8")
    regions = [m["name"] for m in tables.MARKER.finditer(text)]
    assert regions, f"{document} has no generated tables"
    assert tables.render(text) == text, (
        f"{document} is out of date: run python scripts/paper_tables.py --write"
    )


def test_every_table_of_the_papers_named_by_the_issue_is_in_docs_papers(tables):
    text = (ROOT / "docs" / "papers.md").read_text(encoding="utf-8")
    assert [m["name"] for m in tables.MARKER.finditer(text)] == list(tables.PAPER_REGIONS)


def test_a_number_changed_by_hand_in_a_generated_table_is_caught(tables):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    region = next(tables.MARKER.finditer(readme))
    figure = tables.PERCENT.search(region["body"])
    assert figure is not None
    old = figure.group(0)
    new = ("9" if old[0] != "9" else "8") + old[1:]
    tampered = (
        readme[: region.start("body") + figure.start()] + new + readme[region.start("body") + figure.end() :]
    )
    assert tables.render(tampered) == readme != tampered


def test_a_paper_row_is_read_from_the_paper_not_typed(tables):
    assert tables.row(tables.TRICHELAIR, "Single LM trinh2018simple &", 4) == [
        "54.58%",
        "54.96%",
        "54.20%",
        "56.49%",
    ]
    assert tables.row(tables.WINOWHY_PAPER, "Majority Voting", 7)[-1] == "55.67%"
    with pytest.raises(tables.PaperError, match="not found"):
        tables.quote(tables.QASEMI, "0.907 0.391")


# Lines outside the generated tables that give a SmolLM2 figure must be covered by a
# passage of FIGURES above: a decimal figure (57.51%, 0.303, 2.35) typed on such a line
# with no stored run behind it fails here. A figure the line quotes from a paper must be
# in the paper's text; the benchmarks' rows (speed, memory) print their own figures.
DECIMAL = re.compile(r"(?<![\w.])-?\d+\.\d+(?:%|(?![\w.%]))")


@pytest.mark.parametrize("document", ["README.md", "docs/evaluation.md", "docs/cloze.md"])
def test_no_smollm2_figure_outside_the_stored_runs(tables, document):
    text = tables.MARKER.sub("", (ROOT / document).read_text(encoding="utf-8"))
    # the speed sections give the benchmarks' figures (bench/ prints them)
    text = re.sub(r"^(#+) Speed\n.*?(?=^#+ |\Z)", "", text, flags=re.M | re.S)
    covered = set(DECIMAL.findall(" ".join(p(_results(s)) for d, s, p in FIGURES if d == document)))
    papers = (tables.TRICHELAIR, tables.WINOWHY_PAPER, tables.WANG, tables.PROPOSAL, tables.QASEMI)
    quoted = set(DECIMAL.findall(" ".join(tables.paper(name) for name in papers)))
    loose = [
        f"{figure} in: {line[:100]}"
        for line in text.splitlines()
        if "SmolLM2" in line and "bench/" not in line
        for figure in DECIMAL.findall(line)
        if figure not in covered and figure not in quoted
    ]
    assert not loose, f"{document}: figures with no stored run or paper behind them:\n" + "\n".join(loose)
