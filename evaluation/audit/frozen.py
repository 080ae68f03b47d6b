"""Frozen features of texts under one model, and the cache's byte format. No Django.

A text's features are the mean of the model's last hidden states over its tokens
(``evaluation.lm.features.mean_hidden_states``) and its log-probability under the model
(``evaluation.lm.scorers.score_texts``: the causal LM's full-text log-likelihood, or a masked
LM's pseudo-log-likelihood) with the number of tokens it sums over, so that a perplexity
per token can be read back. ``evaluation.lm.features.text_features`` computes all three
(a causal LM in one forward pass over the texts' prefix tree). The cache keys them by the model's SHA-256 and the text's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from evaluation.audit.inputs import AuditInput
from evaluation.lm.features import text_features


@dataclass(frozen=True)
class TextFeatures:
    hidden: npt.NDArray[np.float32]  # (D,)
    logprob: float
    tokens: int


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def hidden_bytes(vector: npt.NDArray[np.float32]) -> bytes:
    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def hidden_from_bytes(data: bytes | memoryview, dim: int) -> npt.NDArray[np.float32]:
    vector = np.frombuffer(bytes(data), dtype="<f4")
    if vector.shape != (dim,):
        raise ValueError(f"a cached feature vector holds {vector.size} values, not {dim}")
    return vector.astype(np.float32)


def compute_features(
    loaded: Any,
    texts: Sequence[str],
    *,
    batch_size: int = 32,
    progress: Callable[[int, int], None] | None = None,
) -> list[TextFeatures]:
    """Each text's features under ``loaded`` (a ``LoadedModel``): the mean hidden states
    and the log-probability with its token count, from one forward pass of a causal LM
    (``evaluation.lm.features.text_features``)."""
    if not texts:
        return []
    arrays = text_features(loaded, texts, batch_size=batch_size, progress=progress)
    return [
        TextFeatures(arrays.hidden[i], float(arrays.logprobs[i]), int(arrays.tokens[i]))
        for i in range(len(texts))
    ]


@dataclass
class ViewFeatures:
    """One view's arrays: ``hidden`` is (N, C, D) for multiple choice, (N, D) otherwise;
    ``logprob`` and ``tokens`` (N, C) or (N,)."""

    hidden: npt.NDArray[np.float32]
    logprob: npt.NDArray[np.float64]
    tokens: npt.NDArray[np.int64]


def view_arrays(audit_input: AuditInput, lookup: Mapping[str, TextFeatures]) -> dict[str, ViewFeatures]:
    """The features of every view of ``audit_input`` from the texts' features."""
    out: dict[str, ViewFeatures] = {}
    for name, view in audit_input.views.items():
        hidden = np.stack([np.stack([lookup[t].hidden for t in options]) for options in view.texts])
        logprob = np.asarray(
            [[lookup[t].logprob for t in options] for options in view.texts], dtype=np.float64
        )
        tokens = np.asarray([[lookup[t].tokens for t in options] for options in view.texts], dtype=np.int64)
        if not view.multiple_choice:
            hidden, logprob, tokens = hidden[:, 0], logprob[:, 0], tokens[:, 0]
        out[name] = ViewFeatures(hidden.astype(np.float32), logprob, tokens)
    return out
