"""An audit's figures from its frozen features. No Django.

``audit_analyse_features`` runs the partial-input baselines (one per view, k-fold grouped
as the data set says), the language model's own answer from its per-option
log-probabilities, dataset cartography and AfLite (``evaluation.audit.baselines``,
``.cartography``, ``.aflite``) over an :class:`~evaluation.audit.inputs.AuditInput` and
returns JSON-ready summaries and per-item columns. ``associativity_scores`` measures how
well the automatic scores find the schemas people marked associative (Trichelair et al.).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from evaluation.audit.aflite import AfliteParams, AfliteResult, aflite
from evaluation.audit.baselines import BaselineResult, partial_input_baseline
from evaluation.audit.cartography import cartography
from evaluation.audit.frozen import ViewFeatures
from evaluation.audit.inputs import AuditInput
from evaluation.metrics.comve import perplexity
from evaluation.metrics.significance import lucky_draw, wilson_interval
from releases.dataset import Dataset


def _plain(value: Any) -> Any:
    """numpy values and arrays as JSON-ready Python values."""
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _plain(dataclasses.asdict(value))
    return value


def _chance(audit_input: AuditInput, view: str) -> float:
    options = len(audit_input.views[view].texts[0]) if audit_input.views[view].multiple_choice else 2
    return 1.0 / options


def accuracy_row(correct: npt.NDArray[np.bool_], chance: float) -> dict[str, Any]:
    n, k = int(correct.size), int(correct.sum())
    low, high = wilson_interval(k, n)
    return {
        "n": n,
        "correct": k,
        "accuracy": k / n,
        "ci_low": low,
        "ci_high": high,
        "p_value": lucky_draw(k, n, chance),
    }


def pair_accuracy(audit_input: AuditInput, correct: npt.NDArray[np.bool_]) -> dict[str, Any] | None:
    """Twin-pair group scoring (Elazar et al. 2021): a pair counts when both twins are right."""
    if not audit_input.twins:
        return None
    index = {k: i for i, k in enumerate(audit_input.keys)}
    pairs = sorted({tuple(sorted((a, b))) for a, b in audit_input.twins.items() if b in index})
    if not pairs:
        return None
    both = np.asarray([bool(correct[index[a]] and correct[index[b]]) for a, b in pairs])
    n, k = int(both.size), int(both.sum())
    low, high = wilson_interval(k, n)
    # a guesser gets a pair right with chance 1/4 (two independent coin flips)
    return {
        "pairs": n,
        "correct": k,
        "accuracy": k / n,
        "ci_low": low,
        "ci_high": high,
        "p_value": lucky_draw(k, n, 0.25),
    }


def lm_answers(audit_input: AuditInput, features: ViewFeatures) -> npt.NDArray[np.int64]:
    """The option the language model picks from its per-option log-probabilities:
    the most probable (Winograd, full scoring), or the statement with the higher
    perplexity per token as the one against sense (ComVE A, ties: statement 0)."""
    if audit_input.lm_picks == "highest_perplexity":
        ppl = np.asarray(
            [
                [perplexity(lp, int(t)) for lp, t in zip(row, toks, strict=True)]
                for row, toks in zip(features.logprob, features.tokens, strict=True)
            ]
        )
        return np.where(ppl[:, 0] >= ppl[:, 1], 0, 1).astype(np.int64)
    return np.argmax(features.logprob, axis=1).astype(np.int64)


def _baseline_fields(result: BaselineResult) -> dict[str, Any]:
    return {
        "n": result.n,
        "correct": result.correct,
        "accuracy": result.accuracy,
        "ci_low": result.wilson_low,
        "ci_high": result.wilson_high,
        "majority": result.majority_accuracy,
        "p_value": result.p_value,
        "repeats": result.repeats,
    }


def audit_analyse_features(
    audit_input: AuditInput,
    features: Mapping[str, ViewFeatures],
    *,
    params: Mapping[str, Any],
    aflite_params: AfliteParams,
) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """(results, per-item columns) of one audit. ``params``: folds, seed, epochs."""
    folds, seed, epochs = int(params["folds"]), int(params["seed"]), int(params["epochs"])
    repeats = int(params.get("repeats", 1))
    labels = audit_input.labels
    per_item: dict[str, list[Any]] = {"key": list(audit_input.keys), "label": _plain(labels)}
    for name, values in audit_input.extra.items():
        per_item[name] = list(values)
    baselines: list[dict[str, Any]] = []
    for name, view in audit_input.views.items():
        result = partial_input_baseline(
            features[name].hidden, labels, groups=audit_input.groups, folds=folds, seed=seed, repeats=repeats
        )
        # twin pairs: an item counts as right when it was right in more than half the repeats
        correct = np.asarray(result.right_share) > 0.5
        row = {"view": name, "title": view.title, **_baseline_fields(result)}
        pairs = pair_accuracy(audit_input, correct)
        if pairs is not None:
            row |= {f"pair_{k}": v for k, v in pairs.items()}
        baselines.append(row)
        per_item[f"baseline_{name}"] = _plain(np.asarray(result.right_share))
    results: dict[str, Any] = {
        "items": audit_input.size,
        "dataset": audit_input.dataset,
        "folds": folds,
        "grouped_by": None
        if audit_input.groups is None
        else ("twin pair" if audit_input.twins else "question"),
        "seed": seed,
        "repeats": repeats,
        "baselines": baselines,
    }
    if audit_input.lm_view is not None:
        view_features = features[audit_input.lm_view]
        answers = lm_answers(audit_input, view_features)
        correct = answers == labels
        results["lm"] = {
            "view": audit_input.lm_view,
            **accuracy_row(correct, _chance(audit_input, audit_input.lm_view)),
        }
        pairs = pair_accuracy(audit_input, correct)
        if pairs is not None:
            results["lm"] |= {f"pair_{k}": v for k, v in pairs.items()}
        per_item["lm_answer"] = _plain(answers)
        per_item["lm_correct"] = _plain(correct)
        if audit_input.dataset == Dataset.WSC and "no_context" in features:
            lp = features["no_context"].logprob
            rows = np.arange(labels.size)
            per_item["lm_margin_no_context"] = _plain(lp[rows, labels] - lp[rows, 1 - labels])
    full = features[audit_input.full_view].hidden
    carto = cartography(full, labels, epochs=epochs, seed=seed)
    regions = [str(r.value) for r in carto.regions]
    results["cartography"] = {
        "view": audit_input.full_view,
        "epochs": epochs,
        "seed": seed,
        "regions": carto.region_counts(),
    }
    per_item["confidence"] = _plain(np.asarray(carto.confidence))
    per_item["variability"] = _plain(np.asarray(carto.variability))
    per_item["correctness"] = _plain(np.asarray(carto.correctness))
    per_item["region"] = regions
    filtered = aflite(full, labels, params=aflite_params)
    results["aflite"], removed_in = aflite_summary(filtered, audit_input.full_view)
    per_item["aflite_removed_in"] = removed_in
    per_item["aflite_score"] = _plain(np.asarray(filtered.scores, dtype=np.float64))
    if audit_input.dataset == Dataset.WSC:
        results["associativity"] = associativity_scores(per_item)
        results["by_associativity"] = subset_accuracies(per_item)
    return results, per_item


def aflite_summary(filtered: AfliteResult, view: str) -> tuple[dict[str, Any], list[int | None]]:
    """AfLite's result as the audit stores it: (summary, each item's iteration of removal or None)."""
    removed_in = [int(r) if r > 0 else None for r in np.asarray(filtered.removed_in).tolist()]
    return {"view": view, **_plain(filtered.summary())}, removed_in


def subset_accuracies(per_item: Mapping[str, list[Any]]) -> list[dict[str, Any]]:
    """The model's own answer and each baseline on the associative and non-associative
    schemas (Trichelair et al. 2019, Table 3), with Wilson intervals."""
    labels = per_item.get("associative") or []
    out: list[dict[str, Any]] = []
    columns = [
        c for c in ("lm_correct", *sorted(c for c in per_item if c.startswith("baseline_"))) if c in per_item
    ]
    for column in columns:
        for subset, wanted in (("associative", True), ("non-associative", False)):
            flags = np.asarray(
                [
                    float(v) > 0.5
                    for v, a in zip(per_item[column], labels, strict=True)
                    if a is not None and bool(a) == wanted
                ]
            )
            if flags.size:
                out.append({"answer": column, "subset": subset, **accuracy_row(flags, 0.5)})
    return out


#: The automatic scores compared with Trichelair's associative labels (higher = more associative).
ASSOCIATIVITY_SCORES = {
    "lm_margin_no_context": "LM log-probability margin without the context before the pronoun",
    "baseline_no_context": "no-context baseline right",
    "baseline_candidates": "candidates-alone baseline right",
    "aflite_score": "AfLite predictability score",
    "confidence": "cartography confidence",
}


def associativity_scores(per_item: Mapping[str, list[Any]]) -> list[dict[str, Any]]:
    """For each automatic score: ROC AUC against the associative label and the overlap of
    its top k with the k associative schemas (k = how many there are)."""
    from sklearn.metrics import roc_auc_score

    labels = per_item.get("associative") or []
    known = [i for i, v in enumerate(labels) if v is not None]
    truth = np.asarray([bool(labels[i]) for i in known])
    k = int(truth.sum())
    out: list[dict[str, Any]] = []
    if k == 0 or k == truth.size:
        return out
    rng = np.random.default_rng(0)
    for name, title in ASSOCIATIVITY_SCORES.items():
        column = per_item.get(name)
        if column is None:
            continue
        scores = np.asarray(
            [np.nan if column[i] is None else float(column[i]) for i in known], dtype=np.float64
        )
        scores = np.where(np.isnan(scores), -np.inf, scores)
        # ties broken at random (seeded) so a 0/1 score's top k is not the first rows
        order = np.lexsort((rng.random(scores.size), -scores))
        top = set(order[:k].tolist())
        hits = int(sum(1 for i in top if truth[i]))
        finite = np.where(np.isinf(scores), np.nanmin(scores[np.isfinite(scores)]) - 1, scores)
        out.append(
            {
                "score": name,
                "title": title,
                "schemas": int(truth.size),
                "associative": k,
                "roc_auc": float(roc_auc_score(truth, finite)),
                "top_k_overlap": hits,
                "top_k_expected_by_chance": k * k / truth.size,
            }
        )
    return out
