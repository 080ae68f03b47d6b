"""Scorers: turn a model (or a baseline) and items into per-candidate scores. Pure Python/torch.

Interface for the `evaluate` command, Celery tasks and metrics (all keyword arguments
after the first three; nothing here imports Django; torch is imported only when a
model method runs):

    from evaluation.lm.modeling import load_model, LoadedModel      # local paths only
    from evaluation.lm.scorers import (
        METHODS, MODEL_METHODS, WscItem, WscText, ItemScore,
        score_wsc, score_texts, score_continuations, read_predictions,
        ScoringError, PredictionsFileError,
    )

    model = load_model("path/to/hf-folder-or-file.gguf", dtype=torch.float32, threads=None)
    model.settings        # JSON-able dict to store with the run (path, format, kind,
                          # architecture, dtype, threads, start token id and string, sha256)

    scores: list[ItemScore] = score_wsc(
        model,            # LoadedModel, or None for random/majority/first/predictions
        items,            # list[WscItem]
        method,           # one of METHODS
        seed=0,           # random baseline
        predictions=None, # dict[(id, variant), int] from read_predictions(path, items)
        batch_size=32, progress=None,  # progress(done, total)
    )
    # one ItemScore(id, variant, scores, prediction, answer) per item and variant
    # ("original", and "switched" when item.switched is set), in item order.

    score_texts(model, texts, method="full"|"pll", ...) -> list[float]
        Plausibility of each whole text, higher = more plausible: causal LM log P(text)
        (natural log, summed over tokens, conditioned on the model's start token); masked
        LM pseudo-log-likelihood. Convention for callers: WinoWhy reason score =
        score_texts of the reason sentence; ComVE A: the statement with the LOWER score is
        the one against common sense; ComVE B: see score_continuations.

    text_token_counts(model, texts, method=...) -> list[int]
        The number of tokens score_texts scores in each text: a perplexity is
        exp(-score / count) (ComVE's rules as the papers write them).

    score_continuations(model, pairs, method="full"|"pll", ...) -> list[float]
        For (context, continuation) pairs: log P(continuation | context) (causal; exactly
        lm-evaluation-harness's loglikelihood), or the PLL of the continuation's tokens with
        the context visible (masked). ComVE B: pairs (false statement, " " + option); the
        option with the HIGHEST score is the reason chosen.

    read_predictions(path, items) -> dict[(id, variant), int]
        JSONL ({"id", "prediction", optional "variant"}) or CSV with header id,prediction
        [,variant]; prediction = candidate index 0/1, letter A/B, or the candidate's text
        (case-insensitive). Raises PredictionsFileError naming file, row and field.

    scorer_for(model, method=None) -> Scorer
        The scorer of the model's kind (CausalScorer, MaskedScorer: texts, continuations,
        token_counts); with a method, the one it needs (a model of another kind: ScoringError).
        score_texts, text_token_counts, score_continuations and score_wsc dispatch through it.

The causal primitive `evaluation.lm.scorers.causal.loglikelihood(model, requests)` has the
contract of lm-evaluation-harness's `HFLM.loglikelihood`: list[(context, continuation)]
-> list[(logprob, is_greedy)]. See docs/scoring.md.
"""

from evaluation.lm.scorers.api import (
    SCORERS,
    Scorer,
    read_predictions,
    score_continuations,
    score_texts,
    score_wsc,
    scorer_for,
    text_token_counts,
)
from evaluation.lm.scorers.types import (
    METHODS,
    MODEL_METHODS,
    ItemScore,
    Method,
    PredictionsFileError,
    Progress,
    ScoringError,
    Variant,
    WscItem,
    WscText,
)

__all__ = [
    "METHODS",
    "MODEL_METHODS",
    "SCORERS",
    "Scorer",
    "ItemScore",
    "Method",
    "PredictionsFileError",
    "Progress",
    "ScoringError",
    "Variant",
    "WscItem",
    "WscText",
    "read_predictions",
    "score_continuations",
    "score_texts",
    "text_token_counts",
    "score_wsc",
    "scorer_for",
]
