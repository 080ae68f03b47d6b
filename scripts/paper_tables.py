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

import json
import os
import re
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# The papers sit beside the data sets in ../shared (WINNOW_DATA_DIR's parent).
PAPERS = Path(
    os.environ.get("WINNOW_PAPERS_DIR")
    or Path(os.environ.get("WINNOW_DATA_DIR") or ROOT.parent / "shared" / "data").parent / "papers"
)
TRICHELAIR = "000_2f521d83e8cb839b.txt"
WINOWHY_PAPER = "001_4c551c598241e083.txt"
WANG = "002_83d6cce00e48605f.txt"
PROPOSAL = "003_d1f3e3587aa20e70.txt"
QASEMI = "004_70b2ddc7d97628a1.txt"

RUNS = "docs/smollm2-runs"
WSC_PARTIAL = f"{RUNS}/wsc273-1.0.0-partial.json"
WSC_FULL = f"{RUNS}/wsc273-1.0.0-full.json"
WSC_PARTIAL_EOT = f"{RUNS}/wsc273-1.0.0-partial-endoftext.json"
WSC_FULL_EOT = f"{RUNS}/wsc273-1.0.0-full-endoftext.json"
CLOZE_21NOV = "docs/cloze-smollm2/results.json"  # 1,000 statements, renormalised equations, <|im_start|>
CLOZE_EOT_200 = "docs/cloze-smollm2/results-endoftext-first200.json"  # the same, <|endoftext|>, first 200
WINOWHY = f"{RUNS}/winowhy-1.0.0.json"
COMVE = f"{RUNS}/comve-test-1.0.0.json"
SENMAKING = f"{RUNS}/senmaking-1.0.0.json"
CLOZE = "docs/cloze-smollm2/results-paper-equations-1000.json"
TYPES = ("Property", "Object", "Eventuality", "Spatial", "Quantity", "Others")
PERCENT = re.compile(r"\d+\.\d+%")


class PaperError(Exception):
    pass


@cache
def paper(name: str) -> str:
    path = PAPERS / name
    if not path.is_file():
        raise PaperError(f"{path}: missing (the papers are in ../shared/papers; set WINNOW_PAPERS_DIR)")
    return path.read_text(encoding="utf-8")


@cache
def run(path: str) -> dict[str, Any]:
    return json.loads((ROOT / path).read_text(encoding="utf-8"))


def row(name: str, label: str, count: int, *, after: str = "") -> list[str]:
    """The first ``count`` percentages of the paper's line that starts with ``label``
    (after the line holding ``after``, when given): the figures exactly as printed."""
    text = paper(name)
    if after:
        start = text.find(after)
        if start < 0:
            raise PaperError(f"{name}: {after!r} not found")
        text = text[start:]
    for line in text.splitlines():
        if line.startswith(label + " "):
            figures = PERCENT.findall(line[len(label) :])
            if len(figures) < count:
                raise PaperError(f"{name}: {label!r} has {len(figures)} figures, expected {count}")
            return figures[:count]
    raise PaperError(f"{name}: no line starts with {label!r}")


def quote(name: str, passage: str) -> str:
    """``passage`` as it stands in the paper (whitespace aside), else an error."""
    if " ".join(passage.split()) not in " ".join(paper(name).split()):
        raise PaperError(f"{name}: {passage!r} not found")
    return passage


def pct(x: float | None, places: int = 2) -> str:
    return "n/a" if x is None else f"{100 * x:.{places}f}%"


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return out + ["| " + " | ".join(r) + " |" for r in rows]


def _smol(name: str) -> str:
    return f"**SmolLM2-135M-Instruct, {name} (Winnow)**"


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


def _right_of_encoded() -> str:
    quote(QASEMI, "we were able to encode 83 examples")
    quote(QASEMI, "find the correct answer in 63 of the 83 examples")
    return "63 of 83"


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


def headline() -> list[str]:
    """The README's table: one comparable row of each paper beside SmolLM2's."""
    full, partial, why, sen, cloze = (
        run(WSC_FULL)["metrics"],
        run(WSC_PARTIAL)["metrics"],
        run(WINOWHY)["metrics"],
        run(SENMAKING)["metrics"],
        run(CLOZE),
    )
    single = row(TRICHELAIR, "Single LM trinh2018simple &", 4)
    single_assoc = row(
        TRICHELAIR, "Single LM trinh2018simple &", 2, after="Model & Associative & Non-Associative"
    )
    gpt2 = row(WINOWHY_PAPER, "GPT-2 (small)", 7, after="(337) (856) (928) (674) (206) (496) (2865)")
    bert_q = row(WINOWHY_PAPER, "BERT (base)", 2, after="Five-fold (q)")
    bert_r = row(WINOWHY_PAPER, "BERT (base)", 2, after="Five-fold (r)")
    bert_wang = row(WANG, "BERT", 2, after="Model Sen-Making Explanation")
    cv = why["cross_validation"]
    rows = [
        [
            "WSC273, whole-sentence probability / consistency on the switched (Trichelair et al. Table 2)",
            f"Single LM {single[0]} / {single[3]}",
            f"full {pct(full['all']['accuracy'])} / {pct(full['switchable']['consistency'])}; partial {pct(partial['all']['accuracy'])} / {pct(partial['switchable']['consistency'])}",
        ],
        [
            "WSC273, associative / non-associative (Table 3)",
            f"Single LM {single_assoc[0]} / {single_assoc[1]}",
            f"full {pct(full['associative']['accuracy'])} / {pct(full['non_associative']['accuracy'])}; partial {pct(partial['associative']['accuracy'])} / {pct(partial['non_associative']['accuracy'])}",
        ],
        [
            "WinoWhy, 2,865 reasons, one threshold (Zhang et al. Table 6; majority 55.67%)",
            f"GPT-2 (small) {gpt2[-1]}",
            pct(why["best_threshold"]["accuracy"]),
        ],
        [
            "WinoWhy, five-fold by question / by reason (Table 7)",
            f"BERT (base) {bert_q[0]} ± {bert_q[1]} / {bert_r[0]} ± {bert_r[1]}",
            f"{pct(cv['by_question']['mean_fold_accuracy'])} ± {pct(cv['by_question']['std_fold_accuracy'])} / {pct(cv['by_reason']['mean_fold_accuracy'])} ± {pct(cv['by_reason']['std_fold_accuracy'])}",
        ],
        [
            "Sen-Making pilot, Sen-Making / Explanation by perplexity (Wang et al. Table 1)",
            f"BERT {bert_wang[0]} / {bert_wang[1]}",
            f"{pct(sen['a']['rules']['perplexity']['accuracy'], 1)} / {pct(sen['b']['rules']['perplexity']['accuracy'], 1)}",
        ],
        [
            "cloze, r(accuracy, precision) uniform / weighted; experiment 2 (Qasemi et al.)",
            f"{quote(QASEMI, '0.390')} / {quote(QASEMI, '0.906')}; {_right_of_encoded()}",
            f"{cloze['dispersion']['pearson_accuracy_precision_uniform']:.3f} / {cloze['dispersion']['pearson_accuracy_precision_weighted']:.3f}; {cloze['confidence']['correct']} of {cloze['confidence']['encoded']}",
        ],
    ]
    return table(["benchmark (paper, table)", "the paper's model", "SmolLM2-135M-Instruct (Winnow)"], rows)


# -- Winnow's own tables (docs/evaluation.md) ---------------------------------------------


def _count(r: dict[str, Any]) -> str:
    return f"{pct(r['accuracy'])} ({r['correct']}/{r['n']})"


def wsc_smollm2() -> list[str]:
    runs = [run(WSC_PARTIAL)["metrics"], run(WSC_FULL)["metrics"]]
    timing = [run(WSC_PARTIAL)["timing"], run(WSC_FULL)["timing"]]

    def each(cell: Callable[[dict[str, Any]], str]) -> list[str]:
        return [cell(m) for m in runs]

    n_assoc, n_non = runs[0]["associative"]["n"], runs[0]["non_associative"]["n"]
    single, multiple = runs[0]["type_count"]["single"]["n"], runs[0]["type_count"]["multiple"]["n"]
    rows = [
        [
            "all",
            *each(
                lambda m: (
                    f"{_count(m['all'])}, Wilson 95% {100 * m['significance']['all']['wilson_95'][0]:.1f}-{100 * m['significance']['all']['wilson_95'][1]:.1f}%"
                )
            ),
        ],
        [
            "lucky draw: P(coin flipper >= this) / best of 10",
            *each(
                lambda m: (
                    f"{pct(m['significance']['all']['lucky_draw'])} / {pct(m['significance']['all']['lucky_draw_best_of'], 1)}"
                )
            ),
        ],
        [
            f"switchable ({runs[0]['switchable']['n']}): before / after switching",
            *each(
                lambda m: (
                    f"{pct(m['switchable']['accuracy_before'])} / {pct(m['switchable']['accuracy_after'])}"
                )
            ),
        ],
        [
            "consistency (the prediction moves with the switch)",
            *each(
                lambda m: (
                    f"{pct(m['switchable']['consistency'])} ({m['switchable']['changed']}/{m['switchable']['n']})"
                )
            ),
        ],
        [
            f"associative ({n_assoc}) / non-associative ({n_non})",
            *each(lambda m: f"{pct(m['associative']['accuracy'])} / {pct(m['non_associative']['accuracy'])}"),
        ],
        [
            f"single / multiple knowledge types ({single} / {multiple})",
            *each(
                lambda m: (
                    f"{pct(m['type_count']['single']['accuracy'])} / {pct(m['type_count']['multiple']['accuracy'])}"
                )
            ),
        ],
        [
            " / ".join(TYPES),
            *each(
                lambda m: " / ".join(f"{100 * m['knowledge_types'][t]['accuracy']:.1f}" for t in TYPES) + "%"
            ),
        ],
        [
            "seconds: loading the model / scoring and metrics (one thread, shared machine)",
            *(f"{t['load_seconds']:.0f} / {t['score_and_metrics_seconds']:.0f}" for t in timing),
        ],
    ]
    return table(["WSC273 (`wsc273@1.0.0`)", "partial (Trinh and Le)", "full sentence"], rows)


def _first(path: str, n: int) -> dict[str, float]:
    from statistics import correlation, mean

    scores = run(path)["scores"]
    return {
        "accuracy_uniform": mean(scores["accuracy_uniform"][:n]),
        "accuracy_weighted": mean(scores["accuracy_weighted"][:n]),
        "r_uniform": correlation(scores["accuracy_uniform"][:n], scores["precision_uniform"][:n]),
        "r_weighted": correlation(scores["accuracy_weighted"][:n], scores["precision_weighted"][:n]),
    }


def start_token() -> list[str]:
    bos = [run(WSC_PARTIAL)["metrics"], run(WSC_FULL)["metrics"]]
    eot = [run(WSC_PARTIAL_EOT)["metrics"], run(WSC_FULL_EOT)["metrics"]]
    n = run(CLOZE_EOT_200)["dispersion"]["scored"]
    cloze = [_first(CLOZE_21NOV, n), _first(CLOZE_EOT_200, n)]
    pairs = [run(CLOZE_21NOV)["confidence"], run(CLOZE_EOT_200)["confidence"]]
    rows = [
        ["WSC273 partial", _count(bos[0]["all"]), _count(eot[0]["all"])],
        ["WSC273 full", _count(bos[1]["all"]), _count(eot[1]["all"])],
        *[
            [
                f"WSC273 {name}: switchable before / after, consistency",
                *(
                    f"{pct(m['switchable']['accuracy_before'])} / {pct(m['switchable']['accuracy_after'])}, {pct(m['switchable']['consistency'])}"
                    for m in (bos[i], eot[i])
                ),
            ]
            for i, name in enumerate(("partial", "full"))
        ],
        *[
            [
                f"WSC273 {name}: associative / non-associative",
                *(
                    f"{pct(m['associative']['accuracy'])} / {pct(m['non_associative']['accuracy'])}"
                    for m in (bos[i], eot[i])
                ),
            ]
            for i, name in enumerate(("partial", "full"))
        ],
        [
            f"cloze, first {n} statements (renormalised equations): mean accuracy uniform / weighted",
            *(f"{c['accuracy_uniform']:.3f} / {c['accuracy_weighted']:.3f}" for c in cloze),
        ],
        [
            f"cloze, first {n}: r(accuracy, precision) uniform / weighted",
            *(f"{c['r_uniform']:.3f} / {c['r_weighted']:.3f}" for c in cloze),
        ],
        [f"cloze experiment 2: pairs right of {pairs[0]['encoded']}", *(str(p["correct"]) for p in pairs)],
    ]
    return table(["SmolLM2, start token", "`<|im_start|>` (bos, default)", "`<|endoftext|>`"], rows)


def cloze_1000() -> list[str]:
    """docs/cloze.md: all 1,000 statements by the paper's equations, beside the renormalised
    run of 21 Nov and the paper; then the paper's Table 1 sentences scored by the model."""
    new, old = run(CLOZE), run(CLOZE_21NOV)
    dn, do = new["dispersion"], old["dispersion"]
    cn, co = new["confidence"], old["confidence"]

    def both(cell: Callable[[dict[str, Any]], str]) -> list[str]:
        return [cell(dn), cell(do)]

    def pair(a: float, b: float) -> str:
        return f"{a:.3f} / {b:.3f}"

    rows = [
        [
            "statements (masked content words)",
            *both(lambda d: f"{d['scored']:,} ({d['masked_words']:,})"),
            quote(QASEMI, "1,000"),
        ],
        [
            "mean accuracy uniform / weighted",
            *both(lambda d: pair(d["mean"]["accuracy_uniform"], d["mean"]["accuracy_weighted"])),
            "",
        ],
        [
            "mean precision uniform / weighted",
            *both(lambda d: pair(d["mean"]["precision_uniform"], d["mean"]["precision_weighted"])),
            "",
        ],
        [
            "r(accuracy, precision), uniform",
            *both(lambda d: f"{d['pearson_accuracy_precision_uniform']:.3f}"),
            quote(QASEMI, "0.390"),
        ],
        [
            "r(accuracy, precision), weighted",
            *both(lambda d: f"{d['pearson_accuracy_precision_weighted']:.3f}"),
            quote(QASEMI, "0.906"),
        ],
        [
            "r with sentence length: accuracy u / w, precision u / w",
            *both(
                lambda d: " / ".join(
                    f"{d['pearson_with_length'][k]:.3f}"
                    for k in (
                        "accuracy_uniform",
                        "accuracy_weighted",
                        "precision_uniform",
                        "precision_weighted",
                    )
                )
            ),
            quote(QASEMI, "0.548") + " (score not named)",
        ],
        [
            "mean weighted accuracy, sensible / against sense",
            *both(
                lambda d: pair(
                    d["mean_sensible"]["accuracy_weighted"], d["mean_against_sense"]["accuracy_weighted"]
                )
            ),
            "",
        ],
        [
            "experiment 2: right of the encoded pairs",
            *(f"{c['correct']} of {c['encoded']} ({pct(c['accuracy'], 1)})" for c in (cn, co)),
            _right_of_encoded(),
        ],
        [
            "mean confidence of the predicted choice, right / wrong",
            *(pair(c["confidence_predicted_right"], c["confidence_predicted_wrong"]) for c in (cn, co)),
            quote(QASEMI, "less than 50%") + " in both",
        ],
        [
            "mean confidence of the correct choice, right / wrong",
            *(pair(c["confidence_correct_right"], c["confidence_correct_wrong"]) for c in (cn, co)),
            "",
        ],
    ]
    out = table(
        [
            "SmolLM2, ComVE train",
            "`paper` equations (23 Nov)",
            "`renormalised` (21 Nov)",
            "Qasemi et al. (RoBERTa, GloVe)",
        ],
        rows,
    )
    examples = new.get("paper_examples", {}).get("table_1", [])
    if examples:
        out += [
            "",
            "The paper's Table 1 sentences scored by the same run (SmolLM2 by the paper's equations):",
            "",
        ]
        sentence_rows = []
        for e in examples:
            quote(QASEMI, e["paper_printed"])
            sentence_rows.append(
                [
                    f"*{e['text']}*",
                    e["paper_printed"],
                    f"{e['accuracy_uniform']:.3f}",
                    f"{e['accuracy_weighted']:.3f}",
                ]
            )
        out += table(["sentence", "paper's score", "accuracy uniform", "accuracy weighted"], sentence_rows)
    return out


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
