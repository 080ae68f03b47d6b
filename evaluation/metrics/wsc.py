"""WSC metrics: accuracy, the Trichelair et al. (2019) protocol, knowledge types.

Trichelair et al., "How Reasonable are Common-Sense Reasoning Tasks" (EMNLP 2019):
- *switchable* questions stay sensible when the two candidates exchange places; after
  the switch the right answer is the other candidate. A model that reasons (rather than
  matching the candidate's word) changes its answer with the switch.
- accuracy on the switchable subset before and after switching, and *consistency*: the
  share of switchable items whose predicted candidate changes with the switch;
- accuracy on the *associative* and *non-associative* subsets.

WinoWhy (Zhang et al., ACL 2020) tables 4-5: accuracy per knowledge type of the question
(a question with several major types counts in each) and for questions with a single
type versus several types.

Candidates are indexes into the item's candidate list (0 = first, 1 = second); on the
switched sentence the same index means the same candidate (the same words).
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from evaluation.metrics.common import Accuracy, accuracy, knowledge_type_order


@dataclass(frozen=True)
class WscOutcome:
    """One question's predictions.

    ``switched_predicted`` is the candidate predicted on the switched sentence (only for
    switchable items); ``switched_gold`` defaults to the other candidate.
    """

    item_id: str
    gold: int
    predicted: int
    switchable: bool | None = None
    switched_predicted: int | None = None
    switched_gold: int | None = None
    associative: bool | None = None
    knowledge_types: tuple[str, ...] = ()

    @property
    def correct(self) -> bool:
        return self.predicted == self.gold

    @property
    def gold_after_switch(self) -> int:
        return self.switched_gold if self.switched_gold is not None else 1 - self.gold

    @property
    def switched_correct(self) -> bool | None:
        if self.switched_predicted is None:
            return None
        return self.switched_predicted == self.gold_after_switch


@dataclass(frozen=True)
class SwitchResult:
    n: int
    before: Accuracy
    after: Accuracy
    changed: int

    @property
    def consistency(self) -> float | None:
        return self.changed / self.n if self.n else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "accuracy_before": self.before.value,
            "accuracy_after": self.after.value,
            "correct_before": self.before.correct,
            "correct_after": self.after.correct,
            "changed": self.changed,
            "consistency": self.consistency,
        }


def switch_result(outcomes: Iterable[WscOutcome]) -> SwitchResult:
    """Before/after accuracy and consistency over the switchable items.

    Raises ValueError naming the item when a switchable item has no switched prediction.
    """
    subset = [o for o in outcomes if o.switchable]
    for o in subset:
        if o.switched_predicted is None:
            raise ValueError(f"item {o.item_id}: switchable but no prediction on the switched sentence")
    return SwitchResult(
        n=len(subset),
        before=accuracy(o.correct for o in subset),
        after=accuracy(bool(o.switched_correct) for o in subset),
        changed=sum(1 for o in subset if o.switched_predicted != o.predicted),
    )


def knowledge_type_accuracy(outcomes: Sequence[WscOutcome]) -> dict[str, Accuracy]:
    """Accuracy per knowledge type; a question with several types counts in each."""
    seen = sorted({t for o in outcomes for t in o.knowledge_types}, key=knowledge_type_order)
    return {t: accuracy(o.correct for o in outcomes if t in o.knowledge_types) for t in seen}


def type_count_accuracy(outcomes: Sequence[WscOutcome]) -> dict[str, Accuracy]:
    """Accuracy for questions with one major knowledge type, several, or none recorded."""
    return {
        "single": accuracy(o.correct for o in outcomes if len(set(o.knowledge_types)) == 1),
        "multiple": accuracy(o.correct for o in outcomes if len(set(o.knowledge_types)) > 1),
        "none": accuracy(o.correct for o in outcomes if not o.knowledge_types),
    }


def wsc_metrics(outcomes: Sequence[WscOutcome]) -> dict[str, Any]:
    """Every WSC figure of DESIGN section 8 as a JSON-ready dict."""
    outcomes = list(outcomes)
    ids = [o.item_id for o in outcomes]
    if len(set(ids)) != len(ids):
        duplicated = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"duplicate item ids: {', '.join(duplicated[:5])}")
    return {
        "all": accuracy(o.correct for o in outcomes).as_dict(),
        "switchable": switch_result(outcomes).as_dict(),
        "non_switchable": accuracy(o.correct for o in outcomes if o.switchable is False).as_dict(),
        "associative": accuracy(o.correct for o in outcomes if o.associative is True).as_dict(),
        "non_associative": accuracy(o.correct for o in outcomes if o.associative is False).as_dict(),
        "knowledge_types": {t: a.as_dict() for t, a in knowledge_type_accuracy(outcomes).items()},
        "type_count": {k: a.as_dict() for k, a in type_count_accuracy(outcomes).items()},
    }
