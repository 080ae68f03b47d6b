"""Small shared helpers: an accuracy with its counts."""

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Accuracy:
    """``correct`` of ``n`` items; ``value`` is None on an empty set (never a fake 0)."""

    n: int
    correct: int

    @property
    def value(self) -> float | None:
        return self.correct / self.n if self.n else None

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "accuracy": self.value}


def accuracy(correct: Iterable[bool]) -> Accuracy:
    flags = [bool(c) for c in correct]
    return Accuracy(n=len(flags), correct=sum(flags))


KNOWLEDGE_TYPES = ("Property", "Object", "Eventuality", "Spatial", "Quantity", "Others")


def knowledge_type_order(name: str) -> tuple[int, str]:
    """Sort key: the paper's order of knowledge types, then anything else by name."""
    return (KNOWLEDGE_TYPES.index(name) if name in KNOWLEDGE_TYPES else len(KNOWLEDGE_TYPES), name)
