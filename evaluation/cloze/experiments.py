"""Experiments 1 (dispersion) and 2 (confidence) of Qasemi et al. on ComVE statements.

No Django: the inputs are plain records, the outputs plain dicts ready for JSON.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from evaluation.cloze import math as cm
from evaluation.cloze.candidates import ClozeModel
from evaluation.cloze.embeddings import WordVectors
from evaluation.cloze.text import PairDiff, content_word_indexes, pair_diff, sentence_length, split_words

SCORES = ("accuracy_uniform", "accuracy_weighted", "precision_uniform", "precision_weighted")


@dataclass(frozen=True)
class Statement:
    id: str
    text: str
    sensible: bool | None = None


@dataclass(frozen=True)
class Pair:
    id: str
    sent0: str
    sent1: str
    false_index: int  # ComVE subtask A: which statement is against common sense


Progress = Callable[[int, int], None]
OnRecord = Callable[[dict[str, Any]], None]


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def dispersion_statement(
    statement: Statement,
    model: ClozeModel,
    vectors: WordVectors,
    *,
    k: int,
    propose_n: int,
    equations: str = cm.DEFAULT_EQUATIONS,
) -> dict[str, Any]:
    """Experiment 1 for one statement: every content word masked in turn."""
    words = split_words(statement.text)
    indexes = content_word_indexes(words)
    gaps = [(statement.text[: words[i].start], statement.text[words[i].end :]) for i in indexes]
    proposals = model.fill(gaps, k=k, propose_n=propose_n)
    found = [
        (i, [(c.word, c.prob) for c in candidates]) for i, candidates in zip(indexes, proposals, strict=True)
    ]
    return _dispersion_record(statement, words, found, vectors, equations=equations)


def _dispersion_record(
    statement: Statement,
    words: list[Any],
    found: list[tuple[int, list[tuple[str, float]]]],
    vectors: WordVectors,
    *,
    equations: str,
) -> dict[str, Any]:
    """A statement's record from the replacements (word, probability) of each masked word."""
    masked: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    for i, candidates in found:
        word = words[i].text
        target = vectors.vector(word)
        if target is None:
            skipped.append({"word": word, "reason": "no vector for the masked word"})
            continue
        kept = [(w, prob, vectors.vector(w)) for w, prob in candidates]
        usable = [(w, prob, v) for w, prob, v in kept if v is not None]
        if not usable:
            skipped.append({"word": word, "reason": "no replacement with a vector"})
            continue
        reps = [v for _, _, v in usable]
        probs = [prob for _, prob, _ in usable]
        scores = cm.dispersion_scores(target, reps, probs, equations=equations)
        masked.append(
            {
                "index": i,
                "word": word,
                "replacements": [
                    {"word": w, "prob": _r(prob), "cos": _r(cm.cosine(v, target))} for w, prob, v in usable
                ],
                "dropped": [w for w, _, v in kept if v is None],
                **{name: _r(value) for name, value in scores.items()},
            }
        )
    record: dict[str, Any] = {
        "id": statement.id,
        "text": statement.text,
        "sensible": statement.sensible,
        "length": sentence_length(words),
        "masked": masked,
        "skipped": skipped,
    }
    for name in SCORES:
        record[name] = _r(statistics.fmean(m[name] for m in masked)) if masked else None
    return record


def dispersion_rescore(record: dict[str, Any], vectors: WordVectors, *, equations: str) -> dict[str, Any]:
    """A stored experiment-1 record scored again with other equations (or other word
    vectors) from its stored replacements and probabilities: no language model needed.

    The probabilities are the stored ones (6 decimals). Replacements that had no vector
    when the record was made were stored without their probability, and masked words
    skipped then were stored without replacements: both stay out, as they were.
    """
    statement = Statement(id=record["id"], text=record["text"], sensible=record.get("sensible"))
    words = split_words(statement.text)
    found = [
        (int(m["index"]), [(x["word"], float(x["prob"])) for x in m["replacements"]])
        for m in record["masked"]
    ]
    fresh = _dispersion_record(statement, words, found, vectors, equations=equations)
    dropped = {int(m["index"]): m["dropped"] for m in record["masked"]}
    for m in fresh["masked"]:
        m["dropped"] = dropped.get(int(m["index"]), []) + m["dropped"]
    fresh["skipped"] = list(record.get("skipped", [])) + fresh["skipped"]
    return fresh


def dispersion_summary(records: list[dict[str, Any]], *, table_rows: int = 5) -> dict[str, Any]:
    scored = [r for r in records if r["accuracy_weighted"] is not None]

    def column(name: str, rows: list[dict[str, Any]] = scored) -> list[float]:
        return [float(r[name]) for r in rows]

    def means(rows: list[dict[str, Any]]) -> dict[str, float | None]:
        return {name: _r(statistics.fmean(column(name, rows))) if rows else None for name in SCORES}

    lengths = [float(r["length"]) for r in scored]
    ranked = sorted(scored, key=lambda r: (r["accuracy_weighted"], r["precision_weighted"]), reverse=True)

    def brief(r: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": r["id"],
            "text": r["text"],
            "sensible": r["sensible"],
            **{name: r[name] for name in SCORES},
            "masked": [
                {"word": m["word"], "replacements": [x["word"] for x in m["replacements"]]}
                for m in r["masked"]
            ],
        }

    return {
        "statements": len(records),
        "scored": len(scored),
        "masked_words": sum(len(r["masked"]) for r in records),
        "skipped_words": sum(len(r["skipped"]) for r in records),
        "mean": means(scored),
        "mean_sensible": means([r for r in scored if r["sensible"] is True]),
        "mean_against_sense": means([r for r in scored if r["sensible"] is False]),
        "pearson_accuracy_precision_uniform": _r(
            cm.pearson(column("accuracy_uniform"), column("precision_uniform"))
        ),
        "pearson_accuracy_precision_weighted": _r(
            cm.pearson(column("accuracy_weighted"), column("precision_weighted"))
        ),
        "pearson_with_length": {name: _r(cm.pearson(column(name), lengths)) for name in SCORES},
        "best": [brief(r) for r in ranked[:table_rows]],
        "worst": [brief(r) for r in reversed(ranked[-table_rows:])] if ranked else [],
        "ranked_by": "accuracy_weighted",
    }


def run_dispersion(
    statements: Iterable[Statement],
    model: ClozeModel,
    vectors: WordVectors,
    *,
    k: int = 10,
    propose_n: int = 30,
    equations: str = cm.DEFAULT_EQUATIONS,
    progress: Progress | None = None,
    on_record: OnRecord | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Experiment 1 over the statements: per-sentence records and the summary."""
    items = list(statements)
    started = time.perf_counter()
    records = []
    interrupted = False
    try:
        for n, statement in enumerate(items, start=1):
            records.append(
                dispersion_statement(statement, model, vectors, k=k, propose_n=propose_n, equations=equations)
            )
            if on_record:
                on_record(records[-1])
            if progress:
                progress(n, len(items))
    except KeyboardInterrupt:
        interrupted = True  # stopped by hand: keep what was done, say so
    summary = dispersion_summary(records)
    summary["equations"] = equations
    summary["requested"] = len(items)
    summary["interrupted"] = interrupted
    summary["seconds"] = round(time.perf_counter() - started, 3)
    summary["statements_per_second"] = (
        round(len(items) / summary["seconds"], 4) if summary["seconds"] > 0 else None
    )
    return records, summary


def _phrase_vector(words: tuple[str, ...], vectors: WordVectors) -> cm.Vector | None:
    found = [v for v in (vectors.vector(w) for w in words) if v is not None]
    if len(found) != len(words) or not found:
        return None
    return np.mean(np.vstack(found), axis=0)


def _pair_record(
    pair: Pair, vectors: WordVectors, *, max_span_words: int
) -> tuple[dict[str, Any], PairDiff | None, list[cm.Vector]]:
    """A pair's record, its differing span and the choices' vectors; the span is None (and
    the record says why) when the pair cannot be encoded."""
    record: dict[str, Any] = {
        "id": pair.id,
        "sent0": pair.sent0,
        "sent1": pair.sent1,
        "false_index": pair.false_index,
        "encoded": False,
    }
    diff, reason = pair_diff(pair.sent0, pair.sent1, max_span_words=max_span_words)
    if diff is None:
        record["reason"] = reason
        return record, None, []
    record["choices"] = list(diff.choices)
    record["context"] = diff.prefix + "___" + diff.suffix
    found = [_phrase_vector(words, vectors) for words in diff.choice_words]
    choice_vectors = [v for v in found if v is not None]
    if len(choice_vectors) != len(found):
        record["reason"] = "no vector for a choice"
        return record, None, []
    return record, diff, choice_vectors


def confidence_pair(
    pair: Pair,
    model: ClozeModel,
    vectors: WordVectors,
    *,
    k: int,
    propose_n: int,
    seed: int,
    max_span_words: int = 3,
    equations: str = cm.DEFAULT_EQUATIONS,
) -> dict[str, Any]:
    """Experiment 2 for one pair: mask the differing span, cluster, score both choices."""
    record, diff, choice_vectors = _pair_record(pair, vectors, max_span_words=max_span_words)
    if diff is None:
        return record
    (candidates,) = model.fill([(diff.prefix, diff.suffix)], k=k, propose_n=propose_n)
    return _confidence_scored(
        record,
        choice_vectors,
        [(c.word, c.prob) for c in candidates],
        vectors,
        seed=seed,
        equations=equations,
    )


def _confidence_scored(
    record: dict[str, Any],
    choice_vectors: list[cm.Vector],
    candidates: list[tuple[str, float]],
    vectors: WordVectors,
    *,
    seed: int,
    equations: str,
) -> dict[str, Any]:
    """Cluster the candidates (word, probability) and score both choices (equations 3-5)."""
    usable = [
        (w, prob, v)
        for w, prob, v in ((w, prob, vectors.vector(w)) for w, prob in candidates)
        if v is not None
    ]
    if len(usable) < 2:
        record["reason"] = "fewer than two candidates with vectors"
        return record
    eq = cm.equations_get(equations)
    centres, cluster_probs, labels = cm.cluster_candidates(
        [v for _, _, v in usable],
        [prob for _, prob, _ in usable],
        seed=seed,
        covariance_type=eq.covariance_type,
        renormalise=eq.cluster_probability == "renormalised",
    )
    conf = cm.confidences(choice_vectors, centres, cluster_probs, distance=eq.distance)
    sensible_pred = 0 if conf[0] >= conf[1] else 1
    sensible_true = 1 - int(record["false_index"])
    record.update(
        {
            "encoded": True,
            "reason": "",
            "candidates": [
                {"word": w, "prob": _r(prob), "cluster": lab}
                for (w, prob, _), lab in zip(usable, labels, strict=True)
            ],
            "cluster_probs": [_r(p) for p in cluster_probs],
            "confidence": [_r(c) for c in conf],
            "predicted_false_index": 1 - sensible_pred,
            "correct": sensible_pred == sensible_true,
            "confidence_predicted": _r(conf[sensible_pred]),
            "confidence_correct": _r(conf[sensible_true]),
        }
    )
    return record


def confidence_rescore(
    record: dict[str, Any], vectors: WordVectors, *, seed: int, equations: str, max_span_words: int
) -> dict[str, Any]:
    """A stored experiment-2 record scored again from its stored candidates and
    probabilities, with other equations or word vectors: no language model needed."""
    if not record.get("encoded"):
        return dict(record)
    pair = Pair(
        id=record["id"], sent0=record["sent0"], sent1=record["sent1"], false_index=int(record["false_index"])
    )
    fresh, diff, choice_vectors = _pair_record(pair, vectors, max_span_words=max_span_words)
    if diff is None:
        return fresh
    candidates = [(c["word"], float(c["prob"])) for c in record["candidates"]]
    return _confidence_scored(
        fresh,
        choice_vectors,
        candidates,
        vectors,
        seed=seed,
        equations=equations,
    )


def confidence_summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    encoded = [r for r in records if r["encoded"]]
    right = [r for r in encoded if r["correct"]]
    wrong = [r for r in encoded if not r["correct"]]

    def mean(rows: list[dict[str, Any]], name: str) -> float | None:
        return _r(statistics.fmean(r[name] for r in rows)) if rows else None

    return {
        "pairs": len(records),
        "encoded": len(encoded),
        "not_encoded": dict(Counter(r["reason"] for r in records if not r["encoded"])),
        "correct": len(right),
        "accuracy": _r(len(right) / len(encoded)) if encoded else None,
        "confidence_predicted_right": mean(right, "confidence_predicted"),
        "confidence_predicted_wrong": mean(wrong, "confidence_predicted"),
        "confidence_correct_right": mean(right, "confidence_correct"),
        "confidence_correct_wrong": mean(wrong, "confidence_correct"),
    }


def run_confidence(
    pairs: Iterable[Pair],
    model: ClozeModel,
    vectors: WordVectors,
    *,
    k: int = 10,
    propose_n: int = 30,
    seed: int = 0,
    max_span_words: int = 3,
    equations: str = cm.DEFAULT_EQUATIONS,
    progress: Progress | None = None,
    on_record: OnRecord | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Experiment 2 over the pairs: per-pair records and the summary."""
    items = list(pairs)
    started = time.perf_counter()
    records = []
    interrupted = False
    try:
        for n, pair in enumerate(items, start=1):
            records.append(
                confidence_pair(
                    pair,
                    model,
                    vectors,
                    k=k,
                    propose_n=propose_n,
                    seed=seed,
                    max_span_words=max_span_words,
                    equations=equations,
                )
            )
            if on_record:
                on_record(records[-1])
            if progress:
                progress(n, len(items))
    except KeyboardInterrupt:
        interrupted = True
    summary = confidence_summary(records)
    summary["equations"] = equations
    summary["requested"] = len(items)
    summary["interrupted"] = interrupted
    summary["seconds"] = round(time.perf_counter() - started, 3)
    return records, summary


# Qasemi et al. Table 1 ("Some samples from the SemEval training set": sentence, score) and
# Table 2 ("Expanded example for Leopards have spots on their bodies": top-5 replacements
# and score of each masked word), quoted from the paper. The paper does not say which of
# its four scores the tables show, so Winnow reports all four beside them.
PAPER_TABLE_1: tuple[tuple[str, float], ...] = (
    ("Grandma knits with thread.", 0.048),
    ("Leopards have spots on their bodies.", 0.179),
    ("Dogs shake their tails to express their happiness.", 0.364),
    ("He parked the car in the garage.", 0.589),
    ("Very few plants and trees grow in the desert.", 0.728),
    ("A passport is necessary to travel from one country to another.", 0.950),
)
PAPER_TABLE_2: dict[str, tuple[tuple[str, ...], float]] = {
    "Leopards": (("They", "People", "Women", "Men", "Children"), 0.09),
    "spots": (("scars", "tattoos", "spots", "scales", "hair"), 0.20),
    "bodies": (("backs", "back", "faces", "heads", "bodies"), 0.25),
}


def paper_examples(
    model: ClozeModel, vectors: WordVectors, *, k: int, propose_n: int, equations: str
) -> dict[str, Any]:
    """Experiment 1 on the sentences of the paper's Tables 1-2, beside the paper's figures."""
    records = [
        dispersion_statement(
            Statement(id=f"qasemi-table-1-{n}", text=text),
            model,
            vectors,
            k=k,
            propose_n=propose_n,
            equations=equations,
        )
        for n, (text, _) in enumerate(PAPER_TABLE_1, start=1)
    ]
    return paper_examples_table(records)


def paper_examples_table(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The Tables 1-2 comparison from the six statements' records (computed or re-scored)."""
    table_1 = [
        {
            "text": text,
            "paper_score": paper,
            "paper_printed": f"{paper * 100:.1f}%",
            **{name: r[name] for name in SCORES},
        }
        for (text, paper), r in zip(PAPER_TABLE_1, records, strict=True)
    ]
    leopards = records[1]
    table_2 = []
    for m in leopards["masked"]:
        paper_words, paper_score = PAPER_TABLE_2.get(m["word"], ((), None))
        table_2.append(
            {
                "word": m["word"],
                "paper_top_5": list(paper_words),
                "paper_score": paper_score,
                "top_5": [x["word"] for x in m["replacements"][:5]],
                **{name: m[name] for name in SCORES},
            }
        )
    return {"table_1": table_1, "table_2": table_2, "records": records}
