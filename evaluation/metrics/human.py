"""The human score of a model's generated explanations (ComVE subtask C; issue 13). No Django.

People judge each explanation plausible or not (the ``explanation_plausibility`` task, K
votes, plausible when more than half say so); the score is the share of the judged
explanations that are plausible, with its Wilson 95% interval, and how many of the run's
explanations were judged so far.
"""

from __future__ import annotations

from dataclasses import dataclass

from evaluation.metrics.significance import wilson_interval


@dataclass(frozen=True)
class HumanScore:
    plausible: int
    judged: int
    total: int
    #: None while no explanation is judged
    share: float | None
    low: float | None
    high: float | None

    def as_dict(self) -> dict[str, int | float | None]:
        return {
            "human_plausible": self.plausible,
            "human_judged": self.judged,
            "human_total": self.total,
            "human_score": self.share,
            "human_low": self.low,
            "human_high": self.high,
        }


def human_score(plausible: int, judged: int, total: int, confidence: float = 0.95) -> HumanScore:
    """Share of ``judged`` explanations judged plausible with its Wilson interval
    (statsmodels' ``proportion_confint(method="wilson")``); ``total`` is how many the run
    generated (judged or not). No value while nothing is judged."""
    if not 0 <= judged <= total:
        raise ValueError(f"judged ({judged}) must be between 0 and the total ({total})")
    if not 0 <= plausible <= judged:
        raise ValueError(f"plausible ({plausible}) must be between 0 and judged ({judged})")
    if judged == 0:
        return HumanScore(plausible, judged, total, None, None, None)
    low, high = wilson_interval(plausible, judged, confidence)
    return HumanScore(plausible, judged, total, plausible / judged, low, high)
