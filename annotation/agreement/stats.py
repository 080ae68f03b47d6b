"""Agreement statistics over crowd judgments: plain numpy, no Django (DESIGN section 6).

Judgments come in as three integer code arrays of equal length, one entry per judgment:
``item_idx`` (0..n_items-1), ``rater_idx`` (0..n_raters-1) and ``category_idx``
(0..n_categories-1). :func:`encode` turns raw labels into such codes. Everything below is
vectorised (``np.bincount``/``np.add.at``, no Python loop over judgments or items), so a
million judgments take milliseconds.

Definitions (each matches the reference named beside it):

- **Fleiss' kappa** (Fleiss 1971) on an items x categories count table; equals
  ``statsmodels.stats.inter_rater.fleiss_kappa(table, method="fleiss")`` whenever every item
  has the same number of judgments (the only case statsmodels accepts). With a varying number
  of judgments per item, an item's agreement is ``sum_j n_ij (n_ij - 1) / (n_i (n_i - 1))``
  and the category shares are taken over the judgments of those items (the usual
  generalisation); items with fewer than two judgments carry no pair and are left out.
- **Average pairwise agreement** as WinoWhy reports its IAA: for each item, the share of
  annotator pairs that gave the same answer; averaged over items (items with fewer than two
  judgments are left out). It is Fleiss' observed agreement ``P-bar``.
- **Cohen's kappa** for each pair of raters, over the items both of them labelled:
  statsmodels' ``cohens_kappa`` on the pair's confusion table (built here for every pair at
  once); equals ``sklearn.metrics.cohen_kappa_score`` on those items.
- **Krippendorff's alpha**, nominal metric, missing answers allowed; equals
  ``krippendorff.alpha(reliability_data, level_of_measurement="nominal")``.
- **Agreement with the majority**, leave-one-out: a judgment agrees when its answer is the
  strict (unique) plurality answer among the *other* judgments of the same item. Items where
  the others tie, or where there are no others, are not counted for that judgment.
- **Gold accuracy**: share of a rater's judgments on gold items that equal the gold answer.
- **Bootstrap confidence intervals** over items (percentile method, seeded). Items are
  grouped by their row of counts, so a resample is one multinomial draw over the distinct
  rows, and all resamples are evaluated at once as matrix products.

Undefined figures (no item with two judgments; chance agreement equal to 1 because every
judgment falls in one category; ...) raise :class:`UndefinedAgreement`, a ``ValueError`` whose
message says why. Callers that show figures turn it into "undefined: <reason>"; no function
here returns NaN.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from statsmodels.stats.inter_rater import cohens_kappa

from core.errors import WinnowError

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


class UndefinedAgreement(WinnowError, ValueError):
    """The statistic has no value on this input; the message says why.

    Callers catch it (as ``ValueError`` too) and show "undefined: <reason>"; should one
    reach a page or the API, it answers 400.
    """

    status = 400


# --------------------------------------------------------------------------- input


@dataclass(frozen=True)
class Codes:
    """Judgments as integer codes, plus the labels each code stands for."""

    item_idx: IntArray
    rater_idx: IntArray
    category_idx: IntArray
    items: list[Any]
    raters: list[Any]
    categories: list[Any]

    @property
    def n_items(self) -> int:
        return len(self.items)

    @property
    def n_raters(self) -> int:
        return len(self.raters)

    @property
    def n_categories(self) -> int:
        return len(self.categories)

    def table(self) -> IntArray:
        return count_table(self.item_idx, self.category_idx, self.n_items, self.n_categories)


def encode(
    items: Sequence[Any] | NDArray[Any],
    raters: Sequence[Any] | NDArray[Any],
    answers: Sequence[Any] | NDArray[Any],
    *,
    categories: Sequence[Any] | None = None,
) -> Codes:
    """Codes for parallel sequences of item keys, rater keys and answers.

    ``categories`` fixes the category order (and may list categories nobody chose); an
    answer outside it is a ValueError. Without it, categories are the sorted answers seen.
    """
    item_arr, rater_arr, answer_arr = np.asarray(items), np.asarray(raters), np.asarray(answers)
    if not (len(item_arr) == len(rater_arr) == len(answer_arr)):
        raise ValueError("items, raters and answers must have the same length")
    item_labels, item_idx = np.unique(item_arr, return_inverse=True)
    rater_labels, rater_idx = np.unique(rater_arr, return_inverse=True)
    if categories is None:
        cat_labels, cat_idx = np.unique(answer_arr, return_inverse=True)
        category_list = cat_labels.tolist()
    else:
        category_list = list(categories)
        if len(set(category_list)) != len(category_list):
            raise ValueError("categories must be distinct")
        lookup = {c: i for i, c in enumerate(category_list)}
        uniq, inverse = np.unique(answer_arr, return_inverse=True)
        unknown = [u for u in uniq.tolist() if u not in lookup]
        if unknown:
            raise ValueError(f"answers outside the categories {category_list!r}: {unknown[:5]!r}")
        cat_idx = np.array([lookup[u] for u in uniq.tolist()], dtype=np.int64)[inverse]
    codes = Codes(
        item_idx=np.asarray(item_idx, dtype=np.int64).reshape(-1),
        rater_idx=np.asarray(rater_idx, dtype=np.int64).reshape(-1),
        category_idx=np.asarray(cat_idx, dtype=np.int64).reshape(-1),
        items=item_labels.tolist(),
        raters=rater_labels.tolist(),
        categories=category_list,
    )
    check_one_answer_per_rater(codes.item_idx, codes.rater_idx, codes.n_raters)
    return codes


def _as_codes(values: Any, name: str) -> IntArray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must hold integer codes")
    arr = arr.astype(np.int64, copy=False)
    if arr.size and arr.min() < 0:
        raise ValueError(f"{name} must not be negative")
    return arr


def check_one_answer_per_rater(item_idx: Any, rater_idx: Any, n_raters: int | None = None) -> None:
    """ValueError if a rater answered the same item twice (judgments would be double-counted)."""
    items, raters = _as_codes(item_idx, "item_idx"), _as_codes(rater_idx, "rater_idx")
    if items.size == 0:
        return
    width = int(n_raters if n_raters is not None else raters.max() + 1)
    keys = items * width + raters
    keys.sort()
    dup = np.flatnonzero(keys[1:] == keys[:-1])
    if dup.size:
        key = int(keys[dup[0]])
        raise ValueError(f"rater {key % width} answered item {key // width} more than once")


def count_table(
    item_idx: Any, category_idx: Any, n_items: int | None = None, n_categories: int | None = None
) -> IntArray:
    """Items x categories table of judgment counts (``np.bincount`` on a flat index)."""
    items, cats = _as_codes(item_idx, "item_idx"), _as_codes(category_idx, "category_idx")
    if items.shape != cats.shape:
        raise ValueError("item_idx and category_idx must have the same length")
    n_i = int(n_items if n_items is not None else (items.max() + 1 if items.size else 0))
    n_c = int(n_categories if n_categories is not None else (cats.max() + 1 if cats.size else 0))
    if items.size and (items.max() >= n_i or cats.max() >= n_c):
        raise ValueError("a code is outside n_items / n_categories")
    flat = np.bincount(items * n_c + cats, minlength=n_i * n_c)
    return flat.reshape(n_i, n_c).astype(np.int64)


def _as_table(table: Any) -> FloatArray:
    arr = np.asarray(table)
    if arr.ndim != 2:
        raise ValueError("the count table must be two-dimensional (items x categories)")
    if arr.size and np.issubdtype(arr.dtype, np.integer):
        if arr.min() < 0:
            raise ValueError("the count table must hold non-negative whole counts")
    elif arr.size and (not np.all(np.isfinite(arr)) or arr.min() < 0 or np.any(arr != np.round(arr))):
        raise ValueError("the count table must hold non-negative whole counts")
    return arr.astype(np.float64)


# --------------------------------------------------------------------------- table statistics
#
# Each statistic is written on a weighted set of count rows: ``rows`` (U x C) and
# ``weights`` (B x U), evaluated for B weightings at once. The point estimate uses the table
# itself with weight 1 per item; the bootstrap uses the distinct rows and multinomial weights.


@dataclass(frozen=True)
class _RowTerms:
    """Per-row sums the three table statistics are made of (rows with >= 2 judgments only)."""

    pairable: FloatArray  # 1 where the row has >= 2 judgments
    n: FloatArray  # judgments in the row (0 where not pairable)
    agree_share: FloatArray  # share of agreeing pairs in the row (0 where not pairable)
    counts: FloatArray  # the row's counts (0 where not pairable)
    coincide: FloatArray  # sum_c n_c (n_c - 1) / (n - 1): Krippendorff's diagonal term


def _row_terms(table: FloatArray) -> _RowTerms:
    n = table.sum(axis=1)
    pairable = (n >= 2).astype(np.float64)
    same_pairs = (table * table).sum(axis=1) - n  # sum_c n_c (n_c - 1)
    safe_n = np.where(n >= 2, n, 2.0)
    agree = np.where(n >= 2, same_pairs / (safe_n * (safe_n - 1.0)), 0.0)
    coincide = np.where(n >= 2, same_pairs / (safe_n - 1.0), 0.0)
    return _RowTerms(
        pairable=pairable,
        n=n * pairable,
        agree_share=agree,
        counts=table * pairable[:, None],
        coincide=coincide,
    )


def _require_pairs(n_pairable: FloatArray) -> None:
    if np.any(n_pairable == 0):
        raise UndefinedAgreement("no item has at least two judgments, so no pair of answers to compare")


def _fleiss_from_terms(terms: _RowTerms, weights: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(kappa, observed agreement) for each weighting; NaN where chance agreement is 1."""
    n_pairable = weights @ terms.pairable
    _require_pairs(n_pairable)
    p_mean = (weights @ terms.agree_share) / n_pairable
    cat_totals = weights @ terms.counts
    p_cat = cat_totals / cat_totals.sum(axis=1, keepdims=True)
    p_exp = (p_cat * p_cat).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(p_exp < 1.0, (p_mean - p_exp) / (1.0 - p_exp), np.nan)
    return kappa, p_mean


def _alpha_from_terms(terms: _RowTerms, weights: FloatArray) -> FloatArray:
    """Krippendorff's nominal alpha for each weighting; NaN where only one value occurs."""
    n_pairable = weights @ terms.pairable
    _require_pairs(n_pairable)
    n_total = weights @ terms.n
    observed_same = weights @ terms.coincide
    n_c = weights @ terms.counts
    expected_diff = n_total * n_total - (n_c * n_c).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(
            expected_diff > 0, 1.0 - (n_total - 1.0) * (n_total - observed_same) / expected_diff, np.nan
        )


ONE_CATEGORY = (
    "every judgment falls in the same category, so chance agreement is 1 and kappa is 0/0 "
    "(agreement is perfect but not distinguishable from chance)"
)
ONE_VALUE = "only one value occurs among the pairable judgments, so alpha is 0/0 (no expected disagreement)"


def fleiss_kappa(table: Any) -> float:
    """Fleiss' kappa of an items x categories count table (see the module docstring)."""
    arr = _as_table(table)
    kappa, _ = _fleiss_from_terms(_row_terms(arr), np.ones((1, arr.shape[0])))
    if np.isnan(kappa[0]):
        raise UndefinedAgreement(ONE_CATEGORY)
    return float(kappa[0])


def pairwise_agreement(table: Any) -> float:
    """WinoWhy's average pairwise agreement: mean over items of the share of agreeing pairs."""
    arr = _as_table(table)
    _, p_mean = _fleiss_from_terms(_row_terms(arr), np.ones((1, arr.shape[0])))
    return float(p_mean[0])


def krippendorff_alpha_nominal(table: Any) -> float:
    """Krippendorff's alpha (nominal) from the items x values count table.

    Missing answers are simply absent from the counts; units with one value are not
    pairable and drop out, as in Krippendorff's definition.
    """
    arr = _as_table(table)
    alpha = _alpha_from_terms(_row_terms(arr), np.ones((1, arr.shape[0])))
    if np.isnan(alpha[0]):
        raise UndefinedAgreement(ONE_VALUE)
    return float(alpha[0])


def item_disagreement(table: Any) -> FloatArray:
    """Per item (row), the share of its annotator pairs that gave different answers: one
    minus the item's term of :func:`pairwise_agreement`; 0 for an item with fewer than two
    judgments (nothing to disagree on). The adjudication page sorts items by it."""
    arr = _as_table(table)
    if arr.shape[0] == 0:
        return np.zeros(0, dtype=np.float64)
    terms = _row_terms(arr)
    return terms.pairable * (1.0 - terms.agree_share)


def category_kappas(table: Any) -> list[float | None]:
    """Fleiss' (1971) kappa for each category against all others (None where undefined).

    kappa_j = 1 - sum_i n_ij (n_i - n_ij) / (sum_i n_i (n_i - 1) p_j q_j), the two-category
    Fleiss' kappa of "category j or not" (equal to it when every item has n judgments).
    """
    arr = _as_table(table)
    terms = _row_terms(arr)
    if terms.pairable.sum() == 0:
        raise UndefinedAgreement("no item has at least two judgments, so no pair of answers to compare")
    out: list[float | None] = []
    for j in range(arr.shape[1]):
        two = np.stack([terms.counts[:, j], terms.n - terms.counts[:, j]], axis=1)
        try:
            out.append(fleiss_kappa(two[terms.pairable > 0]))
        except UndefinedAgreement:
            out.append(None)
    return out


# --------------------------------------------------------------------------- bootstrap


@dataclass(frozen=True)
class Interval:
    low: float | None
    high: float | None
    resamples: int
    undefined_resamples: int
    level: float


@dataclass(frozen=True)
class TableFigures:
    fleiss_kappa: float | None
    fleiss_kappa_reason: str | None
    pairwise_agreement: float | None
    pairwise_agreement_reason: str | None
    krippendorff_alpha: float | None
    krippendorff_alpha_reason: str | None
    fleiss_kappa_ci: Interval | None
    pairwise_agreement_ci: Interval | None
    krippendorff_alpha_ci: Interval | None
    items_pairable: int


def _percentile(values: FloatArray, level: float, resamples: int) -> Interval:
    ok = values[~np.isnan(values)]
    undefined = int(values.size - ok.size)
    if ok.size == 0:
        return Interval(None, None, resamples, undefined, level)
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(ok, [tail, 100.0 - tail])
    return Interval(float(low), float(high), resamples, undefined, level)


def bootstrap_weights(n_rows: int, row_counts: IntArray, resamples: int, seed: int) -> FloatArray:
    """B x U multinomial weights: each resample draws n_rows items with replacement.

    Drawing items uniformly and counting how often each distinct row came up is exactly a
    multinomial draw over the distinct rows with probabilities row_count / n_rows.
    """
    rng = np.random.default_rng(seed)
    probs = row_counts / row_counts.sum()
    return rng.multinomial(n_rows, probs, size=resamples).astype(np.float64)


def table_figures(
    table: Any, *, resamples: int = 1000, seed: int = 0, level: float = 0.95, chunk: int = 200
) -> TableFigures:
    """Fleiss' kappa, pairwise agreement and Krippendorff's alpha with bootstrap intervals."""
    arr = _as_table(table)
    if not 0.0 < level < 1.0:
        raise ValueError("level must be between 0 and 1")
    if resamples < 0:
        raise ValueError("resamples must not be negative")
    terms = _row_terms(arr)
    items_pairable = int(terms.pairable.sum())
    values: dict[str, float | None] = {}
    reasons: dict[str, str | None] = {}
    for name, fn in (
        ("fleiss_kappa", fleiss_kappa),
        ("pairwise_agreement", pairwise_agreement),
        ("krippendorff_alpha", krippendorff_alpha_nominal),
    ):
        try:
            values[name], reasons[name] = fn(arr), None
        except UndefinedAgreement as exc:
            values[name], reasons[name] = None, str(exc)
    intervals: dict[str, Interval | None] = dict.fromkeys(values)
    if items_pairable and resamples:
        pairable_rows = arr[terms.pairable > 0]
        distinct, counts = np.unique(pairable_rows, axis=0, return_counts=True)
        dterms = _row_terms(distinct)
        kappas, means, alphas = [], [], []
        for start in range(0, resamples, chunk):
            w = bootstrap_weights(items_pairable, counts, min(chunk, resamples - start), seed + start)
            k, m = _fleiss_from_terms(dterms, w)
            kappas.append(k)
            means.append(m)
            alphas.append(_alpha_from_terms(dterms, w))
        intervals["fleiss_kappa"] = _percentile(np.concatenate(kappas), level, resamples)
        intervals["pairwise_agreement"] = _percentile(np.concatenate(means), level, resamples)
        intervals["krippendorff_alpha"] = _percentile(np.concatenate(alphas), level, resamples)
    return TableFigures(
        fleiss_kappa=values["fleiss_kappa"],
        fleiss_kappa_reason=reasons["fleiss_kappa"],
        pairwise_agreement=values["pairwise_agreement"],
        pairwise_agreement_reason=reasons["pairwise_agreement"],
        krippendorff_alpha=values["krippendorff_alpha"],
        krippendorff_alpha_reason=reasons["krippendorff_alpha"],
        fleiss_kappa_ci=intervals["fleiss_kappa"],
        pairwise_agreement_ci=intervals["pairwise_agreement"],
        krippendorff_alpha_ci=intervals["krippendorff_alpha"],
        items_pairable=items_pairable,
    )


def bootstrap_interval(
    per_item: Any, *, resamples: int = 1000, seed: int = 0, level: float = 0.95
) -> Interval:
    """Percentile interval of the mean of per-item values (NaN entries are left out)."""
    vals = np.asarray(per_item, dtype=np.float64)
    vals = vals[~np.isnan(vals)]
    if vals.size == 0 or resamples == 0:
        return Interval(None, None, resamples, resamples, level)
    distinct, counts = np.unique(vals, return_counts=True)
    w = bootstrap_weights(vals.size, counts, resamples, seed)
    means = (w @ distinct) / vals.size
    return _percentile(means, level, resamples)


# --------------------------------------------------------------------------- rater statistics


@dataclass(frozen=True)
class PairKappa:
    rater_a: int
    rater_b: int
    items: int
    observed: float
    kappa: float | None
    reason: str | None


def _judgment_pairs(item_idx: IntArray, rater_idx: IntArray) -> tuple[IntArray, IntArray]:
    """Indices (first, second) of every pair of judgments on the same item, rater of first < second.

    Judgments are sorted by (item, rater); pairs at distance d within an item group are
    found with one vectorised comparison per d, so the loop runs max-judgments-per-item times.
    """
    order = np.lexsort((rater_idx, item_idx))
    items_sorted = item_idx[order]
    firsts, seconds = [], []
    d = 1
    while d < len(order):
        same = np.flatnonzero(items_sorted[d:] == items_sorted[:-d])
        if same.size == 0:
            break
        firsts.append(order[same])
        seconds.append(order[same + d])
        d += 1
    if not firsts:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    return np.concatenate(firsts), np.concatenate(seconds)


def cohen_kappa_pairs(
    item_idx: Any, rater_idx: Any, category_idx: Any, n_categories: int | None = None
) -> list[PairKappa]:
    """Cohen's kappa for every pair of raters who labelled at least one item in common."""
    items = _as_codes(item_idx, "item_idx")
    raters = _as_codes(rater_idx, "rater_idx")
    cats = _as_codes(category_idx, "category_idx")
    if not (items.shape == raters.shape == cats.shape):
        raise ValueError("item_idx, rater_idx and category_idx must have the same length")
    if items.size == 0:
        return []
    check_one_answer_per_rater(items, raters)
    n_c = int(n_categories if n_categories is not None else cats.max() + 1)
    first, second = _judgment_pairs(items, raters)
    if first.size == 0:
        return []
    n_r = int(raters.max() + 1)
    pair_key = raters[first] * n_r + raters[second]
    keys, pair_id = np.unique(pair_key, return_inverse=True)
    n_pairs = keys.size
    conf = np.bincount(
        (pair_id * n_c + cats[first]) * n_c + cats[second], minlength=n_pairs * n_c * n_c
    ).reshape(n_pairs, n_c, n_c)
    n = conf.sum(axis=(1, 2)).astype(np.float64)
    observed = np.trace(conf, axis1=1, axis2=2) / n
    # chance agreement is 1 only when both raters used one and the same category throughout
    single = (conf.reshape(n_pairs, -1) == n[:, None]).any(axis=1) & (observed == 1.0)
    result = []
    for k in range(n_pairs):
        if single[k]:
            kappa, reason = None, "both raters used a single, identical category on their common items"
        else:
            # the statistic is statsmodels'; only the pair's confusion table is built here
            kappa, reason = float(cohens_kappa(conf[k], return_results=False)), None
        result.append(
            PairKappa(
                rater_a=int(keys[k] // n_r),
                rater_b=int(keys[k] % n_r),
                items=int(n[k]),
                observed=float(observed[k]),
                kappa=kappa,
                reason=reason,
            )
        )
    return result


@dataclass(frozen=True)
class RaterMajority:
    judgments: IntArray  # all judgments of each rater
    compared: IntArray  # judgments where the others had a unique plurality answer
    agreed: IntArray  # ... and the rater gave it

    def shares(self) -> list[float | None]:
        return [(float(a) / float(c) if c else None) for a, c in zip(self.agreed, self.compared, strict=True)]


def majority_agreement(
    item_idx: Any,
    rater_idx: Any,
    category_idx: Any,
    n_raters: int | None = None,
    n_categories: int | None = None,
) -> RaterMajority:
    """Each rater's agreement with the leave-one-out majority (see the module docstring)."""
    items = _as_codes(item_idx, "item_idx")
    raters = _as_codes(rater_idx, "rater_idx")
    cats = _as_codes(category_idx, "category_idx")
    if not (items.shape == raters.shape == cats.shape):
        raise ValueError("item_idx, rater_idx and category_idx must have the same length")
    n_r = int(n_raters if n_raters is not None else (raters.max() + 1 if raters.size else 0))
    if items.size == 0:
        zero = np.zeros(n_r, dtype=np.int64)
        return RaterMajority(zero, zero.copy(), zero.copy())
    n_c = int(n_categories if n_categories is not None else cats.max() + 1)
    table = count_table(items, cats, int(items.max() + 1), n_c)
    others = table[items]
    others[np.arange(items.size), cats] -= 1
    top = others.max(axis=1)
    unique_top = (others == top[:, None]).sum(axis=1) == 1
    compared = unique_top & (top > 0)
    agreed = compared & (others[np.arange(items.size), cats] == top)
    return RaterMajority(
        judgments=np.bincount(raters, minlength=n_r),
        compared=np.bincount(raters, weights=compared, minlength=n_r).astype(np.int64),
        agreed=np.bincount(raters, weights=agreed, minlength=n_r).astype(np.int64),
    )


@dataclass(frozen=True)
class RaterGold:
    seen: IntArray
    correct: IntArray

    def shares(self) -> list[float | None]:
        return [(float(c) / float(s) if s else None) for c, s in zip(self.correct, self.seen, strict=True)]


def gold_accuracy(rater_idx: Any, correct: Any, n_raters: int | None = None) -> RaterGold:
    """Per rater: gold judgments seen and answered correctly (``correct`` is a bool per judgment)."""
    raters = _as_codes(rater_idx, "rater_idx")
    ok = np.asarray(correct, dtype=bool)
    if ok.shape != raters.shape:
        raise ValueError("rater_idx and correct must have the same length")
    n_r = int(n_raters if n_raters is not None else (raters.max() + 1 if raters.size else 0))
    return RaterGold(
        seen=np.bincount(raters, minlength=n_r),
        correct=np.bincount(raters, weights=ok, minlength=n_r).astype(np.int64),
    )
