"""One entry point per task: score_wsc, score_texts, score_continuations (see __init__)."""

from __future__ import annotations

import csv
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from evaluation.lm.methods import TEXT_METHODS, Method, ModelKind, default_method
from evaluation.lm.scorers.types import (
    METHODS,
    MODEL_METHODS,
    ItemScore,
    PredictionsFileError,
    Progress,
    ScoringError,
    Variant,
    WscItem,
    predictions_jsonl,
    predictions_text,
)
from evaluation.lm.scorers.wsc import substitute

if TYPE_CHECKING:
    from evaluation.lm.modeling import LoadedModel

VARIANTS: tuple[Variant, ...] = ("original", "switched")


def _argmax(scores: Sequence[float]) -> int:
    best = 0
    for i, s in enumerate(scores):
        if s > scores[best]:
            best = i
    return best


def _one_hot(index: int, n: int = 2) -> tuple[float, ...]:
    return tuple(1.0 if i == index else 0.0 for i in range(n))


def _check_items(items: Sequence[WscItem]) -> None:
    seen: set[str] = set()
    for n, item in enumerate(items, start=1):
        if item.answer not in (0, 1):
            raise ScoringError(f"item {n} (id {item.id!r}): answer must be 0 or 1, got {item.answer!r}")
        if len(item.candidates) != 2 or not all(c.strip() for c in item.candidates):
            raise ScoringError(f"item {n} (id {item.id!r}): needs two non-empty candidates")
        if item.id in seen:
            raise ScoringError(f"item {n}: id {item.id!r} appears twice")
        seen.add(item.id)


def majority_answer(items: Sequence[WscItem]) -> int:
    """The most frequent gold answer index over the items' original sentences (ties: 0)."""
    counts = Counter(item.answer for item in items)
    return 1 if counts[1] > counts[0] else 0


def score_wsc(
    model: LoadedModel | None,
    items: Sequence[WscItem],
    method: str,
    *,
    seed: int = 0,
    predictions: dict[tuple[str, str], int] | None = None,
    batch_size: int = 32,
    progress: Progress | None = None,
) -> list[ItemScore]:
    """Score every item variant (original, and switched when present) with one method."""
    if method not in METHODS:
        raise ScoringError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    method = Method(method)
    _check_items(items)
    variants = [(item, variant, text, gold) for item in items for variant, text, gold in item.variants()]
    total = len(variants)

    if method in MODEL_METHODS:
        if model is None:
            raise ScoringError(f"method {method.value!r} needs a model")
        return _score_wsc_model(model, variants, method, batch_size=batch_size, progress=progress)

    out: list[ItemScore] = []
    if method is Method.RANDOM:
        rng = random.Random(seed)
        for item, variant, _, gold in variants:
            choice = rng.randrange(2)
            out.append(ItemScore(item.id, variant, _one_hot(choice), choice, gold))
    elif method in (Method.MAJORITY, Method.FIRST):
        choice = majority_answer(items) if method is Method.MAJORITY else 0
        for item, variant, _, gold in variants:
            out.append(ItemScore(item.id, variant, _one_hot(choice), choice, gold))
    else:  # predictions
        if predictions is None:
            raise ScoringError("method 'predictions' needs predictions (see read_predictions)")
        if not any(key[1] == "switched" for key in predictions):
            # A file with original predictions only scores the original sentences.
            variants = [v for v in variants if v[1] == "original"]
            total = len(variants)
        missing = [
            f"{item.id}/{variant}"
            for item, variant, _, _ in variants
            if (item.id, variant) not in predictions
        ]
        if missing:
            shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
            raise PredictionsFileError(f"the predictions have no row for {len(missing)} item(s): {shown}")
        for item, variant, _, gold in variants:
            choice = predictions[(item.id, variant)]
            out.append(ItemScore(item.id, variant, _one_hot(choice), choice, gold))
    if progress is not None:
        progress(total, total)
    return out


def _score_wsc_model(
    model: LoadedModel,
    variants: list[tuple[WscItem, Variant, Any, int]],
    method: Method,
    *,
    batch_size: int,
    progress: Progress | None,
) -> list[ItemScore]:
    subs = [[substitute(text, cand) for cand in item.candidates] for item, _, text, _ in variants]
    scorer = scorer_for(model, method)
    if method is Method.PARTIAL:
        for (item, variant, _, _), pair in zip(variants, subs, strict=True):
            if any(not s.continuation.strip() for s in pair):
                raise ScoringError(
                    f"item {item.id!r} ({variant}): partial scoring needs text after the pronoun"
                )
        requests = [(s.context, s.continuation) for pair in subs for s in pair]
        flat = scorer.continuations(model, requests, batch_size=batch_size, progress=progress)
    else:
        flat = scorer.texts(
            model, [s.sentence for pair in subs for s in pair], batch_size=batch_size, progress=progress
        )

    out = []
    for k, (item, variant, _, gold) in enumerate(variants):
        scores = (flat[2 * k], flat[2 * k + 1])
        out.append(
            ItemScore(
                item.id,
                variant,
                scores,
                _argmax(scores),
                gold,
                details={"sentences": [s.sentence for s in subs[k]]}
                if method is not Method.PARTIAL
                else {"contexts": [s.context for s in subs[k]], "continuation": subs[k][0].continuation},
            )
        )
    return out


# --- one scorer per kind of language model ------------------------------------------------


class Scorer(Protocol):
    """What a kind of language model scores: whole texts, continuations after a context, and
    the number of tokens a whole text's score covers."""

    kind: ModelKind

    def texts(
        self, model: LoadedModel, texts: Sequence[str], *, batch_size: int, progress: Progress | None
    ) -> list[float]: ...

    def continuations(
        self,
        model: LoadedModel,
        pairs: Sequence[tuple[str, str]],
        *,
        batch_size: int,
        progress: Progress | None,
    ) -> list[float]: ...

    def token_counts(self, model: LoadedModel, texts: Sequence[str]) -> list[int]: ...


class CausalScorer:
    """log P(text) after the start token, log P(continuation | context) (lm-evaluation-harness)."""

    kind: ModelKind = "causal"

    def texts(
        self, model: LoadedModel, texts: Sequence[str], *, batch_size: int, progress: Progress | None
    ) -> list[float]:
        return self.continuations(model, [("", t) for t in texts], batch_size=batch_size, progress=progress)

    def continuations(
        self,
        model: LoadedModel,
        pairs: Sequence[tuple[str, str]],
        *,
        batch_size: int,
        progress: Progress | None,
    ) -> list[float]:
        from evaluation.lm.scorers.causal import loglikelihood

        return [lp for lp, _ in loglikelihood(model, list(pairs), batch_size=batch_size, progress=progress)]

    def token_counts(self, model: LoadedModel, texts: Sequence[str]) -> list[int]:
        from evaluation.lm.scorers.causal import encode_pair

        return [len(encode_pair(model, "", t)[1]) for t in texts]


class MaskedScorer:
    """Pseudo-log-likelihoods: of a whole text, of a continuation's tokens with the context visible."""

    kind: ModelKind = "masked"

    def texts(
        self, model: LoadedModel, texts: Sequence[str], *, batch_size: int, progress: Progress | None
    ) -> list[float]:
        from evaluation.lm.scorers.masked import pseudo_log_likelihood

        return pseudo_log_likelihood(model, list(texts), batch_size=batch_size, progress=progress)

    def continuations(
        self,
        model: LoadedModel,
        pairs: Sequence[tuple[str, str]],
        *,
        batch_size: int,
        progress: Progress | None,
    ) -> list[float]:
        from evaluation.lm.scorers.masked import pseudo_log_likelihood_spans

        return pseudo_log_likelihood_spans(model, list(pairs), batch_size=batch_size, progress=progress)

    def token_counts(self, model: LoadedModel, texts: Sequence[str]) -> list[int]:
        from evaluation.lm.scorers.masked import _encode

        return [len(_encode(model, t)[1]) for t in texts]


#: The scorer of each kind of language model.
SCORERS: dict[ModelKind, Scorer] = {"causal": CausalScorer(), "masked": MaskedScorer()}


def scorer_for(model: LoadedModel, method: str | None = None) -> Scorer:
    """The scorer of ``model``'s kind. With a ``method``, the scorer that method needs, and a
    ScoringError when the model is not of its kind (no method: the model's own kind)."""
    chosen = Method(method) if method else default_method(model.kind)
    kind = chosen.model_kind
    if kind is None:
        raise ScoringError(f"method {chosen.value!r} scores without a language model")
    _require_kind(model, kind, chosen)
    return SCORERS[kind]


def _require_kind(model: LoadedModel, kind: str, method: str) -> None:
    if model.kind != kind:
        raise ScoringError(
            f"method {str(method)!r} needs a {kind} language model; {model.settings.get('path')} is a {model.kind} one"
        )


def _text_method(model: LoadedModel, method: str | None, what: str) -> str:
    """The whole-text method asked for (default: the model's own); a ScoringError for another."""
    method = method or default_method(model.kind)
    if method not in TEXT_METHODS:
        raise ScoringError(
            f"{what} the methods 'full' (causal LM) and 'pll' (masked LM), not {str(method)!r}"
        )
    return method


def score_texts(
    model: LoadedModel,
    texts: Sequence[str],
    *,
    method: str | None = None,
    batch_size: int = 32,
    progress: Progress | None = None,
) -> list[float]:
    """Whole-text plausibility, higher = more plausible (see module __init__ for the convention)."""
    scorer = scorer_for(model, _text_method(model, method, "score_texts supports"))
    return scorer.texts(model, texts, batch_size=batch_size, progress=progress)


def text_token_counts(model: LoadedModel, texts: Sequence[str], *, method: str | None = None) -> list[int]:
    """How many tokens ``score_texts`` scores in each text (the divisor of a perplexity):
    causal LMs every token of the text after the start token, masked LMs every token but
    the tokenizer's special ones."""
    return scorer_for(model, _text_method(model, method, "token counts are for")).token_counts(model, texts)


def score_continuations(
    model: LoadedModel,
    pairs: Sequence[tuple[str, str]],
    *,
    method: str | None = None,
    batch_size: int = 32,
    progress: Progress | None = None,
) -> list[float]:
    """log P(continuation | context) (causal) or the continuation's PLL given the context (masked)."""
    scorer = scorer_for(model, _text_method(model, method, "score_continuations supports"))
    return scorer.continuations(model, pairs, batch_size=batch_size, progress=progress)


def _parse_prediction(raw: object, item: WscItem, where: str) -> int:
    if isinstance(raw, bool):
        raise PredictionsFileError(
            f"{where}, field 'prediction': expected 0/1, A/B or a candidate, got {raw!r}"
        )
    if isinstance(raw, int) and raw in (0, 1):
        return raw
    if isinstance(raw, str):
        value = raw.strip()
        if value in ("0", "1"):
            return int(value)
        if value.upper() in ("A", "B"):
            return "AB".index(value.upper())
        lowered = [c.strip().lower() for c in item.candidates]
        if value.lower() in lowered and lowered[0] != lowered[1]:
            return lowered.index(value.lower())
    raise PredictionsFileError(
        f"{where}, field 'prediction': {raw!r} is not 0/1, A/B or one of the candidates "
        f"{item.candidates[0]!r} / {item.candidates[1]!r}"
    )


def read_predictions(path: str | Path, items: Sequence[WscItem]) -> dict[tuple[str, str], int]:
    """Read an uploaded predictions file (JSONL or CSV, detected from content, not the name)."""
    path = Path(path)
    by_id = {item.id: item for item in items}
    text = predictions_text(path)

    if not text.strip():
        raise PredictionsFileError(f"{path}: no predictions (the file is empty)")
    rows: list[tuple[int, dict[str, Any]]] = []
    first = text.lstrip()[:1]
    if first == "{":
        rows = predictions_jsonl(text, path)
    else:
        reader = csv.DictReader(text.splitlines())
        fields = [f.strip() for f in (reader.fieldnames or [])]
        if "id" not in fields or "prediction" not in fields:
            raise PredictionsFileError(
                f"{path}, row 1: a CSV predictions file needs a header with 'id' and 'prediction' (got {fields})"
            )
        for n, row in enumerate(reader, start=2):
            rows.append((n, {(k or "").strip(): v for k, v in row.items()}))
    if not rows:
        raise PredictionsFileError(f"{path}: no predictions")

    out: dict[tuple[str, str], int] = {}
    for n, row in rows:
        where = f"{path}, row {n}"
        if "id" not in row or row["id"] in (None, ""):
            raise PredictionsFileError(f"{where}, field 'id': missing")
        item_id = str(row["id"]).strip()
        if item_id not in by_id:
            raise PredictionsFileError(f"{where}, field 'id': {item_id!r} is not an item of this release")
        variant = str(row.get("variant") or "original").strip()
        if variant not in VARIANTS:
            raise PredictionsFileError(
                f"{where}, field 'variant': {variant!r} is not one of {', '.join(VARIANTS)}"
            )
        if "prediction" not in row:
            raise PredictionsFileError(f"{where}, field 'prediction': missing")
        key = (item_id, variant)
        if key in out:
            raise PredictionsFileError(
                f"{where}, field 'id': a second prediction for {item_id!r} ({variant})"
            )
        out[key] = _parse_prediction(row["prediction"], by_id[item_id], where)
    return out
