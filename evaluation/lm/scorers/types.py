"""Plain data types shared by the scorers and their callers (no Django, no torch)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from core.errors import WinnowError
from core.jsonl import JsonLinesError, read_jsonl
from evaluation.lm.methods import MODEL_METHODS as MODEL_METHODS
from evaluation.lm.methods import Method as Method

#: Every scoring method `score_wsc` understands (the `--method` choices of `manage.py evaluate`).
METHODS: tuple[str, ...] = tuple(m.value for m in Method)
Variant = Literal["original", "switched"]

START_HELP = (
    "causal LMs: the token every text is conditioned on: bos (the tokenizer's BOS token, "
    "else EOS; the default), eos, a token id or a token's text (e.g. '<|endoftext|>'); "
    "recorded with the run"
)


def start_token_parse(value: str | int | None) -> str | int | None:
    """'bos', 'eos', a token id (as text or int) or a token's text -> what `load_model`
    takes (whether the token exists is the loader's check); ValueError for anything else."""
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"start token must be bos, eos, a token id or a token's text, not {value!r}")
    if isinstance(value, int):
        return value
    text = value.strip()
    if text.lower() in ("bos", "eos"):
        return text.lower()
    if text.isdigit():
        return int(text)
    if not text or len(text) > 64 or any(c.isspace() for c in text):
        raise ValueError(f"start token must be bos, eos, a token id or a token's text, not {value!r}")
    return text


#: progress(done, total): called after each batch, and once with done == total at the end.
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class WscText:
    """A Winograd sentence split at the pronoun: text_before + pronoun + text_after.

    The parts are joined with single spaces where there is no whitespace already and the
    next part does not start with punctuation (see `scorers.wsc.join_parts`).
    """

    text_before: str
    pronoun: str
    text_after: str


@dataclass(frozen=True)
class WscItem:
    """One Winograd schema question.

    id: stable item id from the release (written back in every ItemScore).
    candidates: the two answers as released (e.g. "The city councilmen"); the scorer
        substitutes them for the pronoun, lower-casing a leading determiner mid-sentence and
        adding "'s" for a possessive pronoun, as lm-evaluation-harness's wsc273 does.
    answer: index (0 or 1) of the correct candidate in the original sentence.
    switched: Trichelair et al.'s switched sentence (the two candidates exchange places),
        or None when the item has none. Its gold answer is 1 - answer.
    """

    id: str
    text_before: str
    pronoun: str
    text_after: str
    candidates: tuple[str, str]
    answer: int
    switched: WscText | None = None

    @property
    def text(self) -> WscText:
        return WscText(self.text_before, self.pronoun, self.text_after)

    def variants(self) -> list[tuple[Variant, WscText, int]]:
        """(variant, sentence, gold answer) for the original and, if any, the switched sentence."""
        out: list[tuple[Variant, WscText, int]] = [("original", self.text, self.answer)]
        if self.switched is not None:
            out.append(("switched", self.switched, 1 - self.answer))
        return out


@dataclass(frozen=True)
class ItemScore:
    """The score of one item variant.

    scores: one float per candidate, higher = more likely the referent. For `full` and
        `partial` these are log-probabilities in nats (natural log, summed over tokens);
        for `pll` pseudo-log-likelihoods; for the baselines and uploaded predictions 1.0
        for the predicted candidate and 0.0 for the other.
    prediction: index of the chosen candidate (argmax of scores; ties go to candidate 0).
    """

    id: str
    variant: Variant
    scores: tuple[float, ...]
    prediction: int
    answer: int
    details: dict[str, object] = field(default_factory=dict)

    @property
    def correct(self) -> bool:
        return self.prediction == self.answer


class ScoringError(WinnowError, ValueError):
    """A scoring request that cannot be served (wrong method for the model, bad input)."""

    status = 400


class PredictionsFileError(ScoringError):
    """An uploaded predictions file that cannot be read; the message names file, row and field."""


def predictions_text(path: Path) -> str:
    """An uploaded predictions file as text (any data set): refuses a missing file and
    bytes that are not UTF-8."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PredictionsFileError(f"{path}: no such file") from None
    except UnicodeDecodeError as exc:
        raise PredictionsFileError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def predictions_jsonl(text: str, path: Path) -> list[tuple[int, dict[str, Any]]]:
    """The rows of a JSON-Lines predictions file, each a JSON object, with their numbers."""
    try:
        return list(read_jsonl(text.split("\n"), name=str(path), objects=True))
    except JsonLinesError as exc:
        raise PredictionsFileError(str(exc)) from None
