"""The SmolLM2 tables of the README and the docs (scripts/paper_tables.py): the headline
beside each paper, the WSC273 runs, the start-token comparison and the cloze analysis on
1,000 statements, from the stored runs under ``docs/`` and the papers' text."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paper_sources import (  # noqa: E402
    CLOZE,
    CLOZE_21NOV,
    CLOZE_EOT_200,
    QASEMI,
    SENMAKING,
    TRICHELAIR,
    TYPES,
    WANG,
    WINOWHY,
    WINOWHY_PAPER,
    WSC_FULL,
    WSC_FULL_EOT,
    WSC_PARTIAL,
    WSC_PARTIAL_EOT,
    _right_of_encoded,
    pct,
    quote,
    row,
    run,
    table,
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
