"""Accuracy on an adversarial release's items (issue 27), pure: no Django.

A release of a collection written with models in the loop carries, per item written that
way, its ``round``, the models it fooled (``models_fooled``) and, built with ANLI's splits,
its ``adversarial_split``. ``adversarial_metrics`` gives a run's accuracy per round, on the
items that fooled a model of their round and on those that did not, and per split.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from evaluation.metrics.common import accuracy
from evaluation.metrics.significance import wilson_interval


@dataclass(frozen=True)
class AdversarialOutcome:
    """One scored item: its round (None: not an adversarial item), whether it fooled a model
    of its round, its split (None without ANLI's splits) and whether the run got it right."""

    round: int | None
    fooling: bool
    split: str | None
    correct: bool


def _figure(flags: list[bool]) -> dict[str, Any]:
    out = accuracy(flags).as_dict()
    out["wilson_95"] = list(wilson_interval(out["correct"], out["n"])) if out["n"] else None
    return out


def adversarial_metrics(outcomes: Iterable[AdversarialOutcome]) -> dict[str, Any] | None:
    """``{"items", "other_items", "by_round": [{"round": 1, **figure}, ...], "fooling":
    figure, "non_fooling": figure, "by_split": [{"split": "train", **figure}, ...]}`` where a
    figure is ``{n, correct, accuracy, wilson_95}`` (accuracy None on an empty set); lists
    keep their order in a JSONB column. None when no item is adversarial."""
    scored = list(outcomes)
    written = [o for o in scored if o.round is not None]
    if not written:
        return None
    rounds = sorted({o.round for o in written if o.round is not None})
    order = ("train", "dev", "test")
    splits = sorted(
        {o.split for o in written if o.split}, key=lambda s: (order.index(s) if s in order else 3, s)
    )
    return {
        "items": len(written),
        "other_items": len(scored) - len(written),
        "by_round": [{"round": r, **_figure([o.correct for o in written if o.round == r])} for r in rounds],
        "fooling": _figure([o.correct for o in written if o.fooling]),
        "non_fooling": _figure([o.correct for o in written if not o.fooling]),
        "by_split": [{"split": s, **_figure([o.correct for o in written if o.split == s])} for s in splits],
    }
