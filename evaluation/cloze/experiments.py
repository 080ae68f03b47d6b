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
from evaluation.cloze.text import content_word_indexes, pair_diff, sentence_length, split_words

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
    statement: Statement, model: ClozeModel, vectors: WordVectors, *, k: int, propose_n: int
) -> dict[str, Any]:
    """Experiment 1 for one statement: every content word masked in turn."""
    words = split_words(statement.text)
    indexes = content_word_indexes(words)
    gaps = [(statement.text[: words[i].start], statement.text[words[i].end :]) for i in indexes]
    proposals = model.fill(gaps, k=k, propose_n=propose_n)
    masked: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    for i, candidates in zip(indexes, proposals, strict=True):
        word = words[i].text
        target = vectors.vector(word)
        if target is None:
            skipped.append({"word": word, "reason": "no vector for the masked word"})
            continue
        kept = [(c, vectors.vector(c.word)) for c in candidates]
        usable = [(c, v) for c, v in kept if v is not None]
        if not usable:
            skipped.append({"word": word, "reason": "no replacement with a vector"})
            continue
        reps = [v for _, v in usable]
        probs = [c.prob for c, _ in usable]
        scores = cm.dispersion_scores(target, reps, probs)
        masked.append(
            {
                "index": i,
                "word": word,
                "replacements": [
                    {"word": c.word, "prob": _r(c.prob), "cos": _r(cm.cosine(v, target))} for c, v in usable
                ],
                "dropped": [c.word for c, v in kept if v is None],
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
            records.append(dispersion_statement(statement, model, vectors, k=k, propose_n=propose_n))
            if on_record:
                on_record(records[-1])
            if progress:
                progress(n, len(items))
    except KeyboardInterrupt:
        interrupted = True  # stopped by hand: keep what was done, say so
    summary = dispersion_summary(records)
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


def confidence_pair(
    pair: Pair,
    model: ClozeModel,
    vectors: WordVectors,
    *,
    k: int,
    propose_n: int,
    seed: int,
    max_span_words: int = 3,
) -> dict[str, Any]:
    """Experiment 2 for one pair: mask the differing span, cluster, score both choices."""
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
        return record
    record["choices"] = list(diff.choices)
    record["context"] = diff.prefix + "___" + diff.suffix
    choice_vectors = [_phrase_vector(words, vectors) for words in diff.choice_words]
    if any(v is None for v in choice_vectors):
        record["reason"] = "no vector for a choice"
        return record
    (candidates,) = model.fill([(diff.prefix, diff.suffix)], k=k, propose_n=propose_n)
    usable = [(c, v) for c, v in ((c, vectors.vector(c.word)) for c in candidates) if v is not None]
    if len(usable) < 2:
        record["reason"] = "fewer than two candidates with vectors"
        return record
    centres, cluster_probs, labels = cm.cluster_candidates(
        [v for _, v in usable], [c.prob for c, _ in usable], seed=seed
    )
    conf = cm.confidences([v for v in choice_vectors if v is not None], centres, cluster_probs)
    sensible_pred = 0 if conf[0] >= conf[1] else 1
    sensible_true = 1 - pair.false_index
    record.update(
        {
            "encoded": True,
            "reason": "",
            "candidates": [
                {"word": c.word, "prob": _r(c.prob), "cluster": lab}
                for (c, _), lab in zip(usable, labels, strict=True)
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
                    pair, model, vectors, k=k, propose_n=propose_n, seed=seed, max_span_words=max_span_words
                )
            )
            if on_record:
                on_record(records[-1])
            if progress:
                progress(n, len(items))
    except KeyboardInterrupt:
        interrupted = True
    summary = confidence_summary(records)
    summary["requested"] = len(items)
    summary["interrupted"] = interrupted
    summary["seconds"] = round(time.perf_counter() - started, 3)
    return records, summary
