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
TYPES = ("Property", "Object", "Eventuality", "Spatial", "Quantity", "Others")


def _fold(r: dict[str, Any]) -> str:
    return f"{_pct(r['mean_fold_accuracy'])} ± {_pct(r['std_fold_accuracy'])}"


@cache
def _results(path: str) -> dict[str, Any]:
    return json.loads((ROOT / path).read_text(encoding="utf-8"))


def _pct(x: float) -> str:
    return f"{100 * x:.2f}%"


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
            f"| {_pct(r['metrics']['best_threshold']['accuracy'])} / "
            f"{_fold(r['metrics']['cross_validation']['by_question'])} and "
            f"{_fold(r['metrics']['cross_validation']['by_reason'])} |"
        ),
    ),
    (
        "README.md",
        CLOZE_PAPER,
        lambda r: (
            f"first {r['dispersion']['scored']} statements and {r['confidence']['pairs']} pairs: "
            f"r(accuracy, precision) = {r['dispersion']['pearson_accuracy_precision_uniform']:.3f} uniform, "
            f"{r['dispersion']['pearson_accuracy_precision_weighted']:.3f} weighted"
        ),
    ),
    (
        "README.md",
        CLOZE_PAPER,
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
        "README.md",
        CLOZE_1000,
        lambda r: (
            f"on all {r['dispersion']['scored']:,} statements (21 Nov): "
            f"{r['dispersion']['pearson_accuracy_precision_uniform']:.3f} / {r['dispersion']['pearson_accuracy_precision_weighted']:.3f}"
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
