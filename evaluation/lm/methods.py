"""The scoring methods, as one enum (pure: no Django, no torch).

Every comparison with a method goes through :class:`Method` (``evaluation.models.Method``
is its Django field's choices, with the same values); tests/test_architecture.py fails on a
comparison with a quoted method name anywhere else.
"""

from enum import StrEnum
from typing import Literal

ModelKind = Literal["causal", "masked"]


class Method(StrEnum):
    FULL = "full"
    PARTIAL = "partial"
    PLL = "pll"
    RANDOM = "random"
    MAJORITY = "majority"
    FIRST = "first"
    PREDICTIONS = "predictions"

    @property
    def label(self) -> str:
        """What the pages and messages call the method (evaluation.models.Method's labels)."""
        return LABELS[self]

    @property
    def needs_model(self) -> bool:
        return self in MODEL_METHODS

    @property
    def model_kind(self) -> ModelKind | None:
        """The kind of language model the method scores with (None: no model)."""
        if self is Method.PLL:
            return "masked"
        return "causal" if self.needs_model else None


LABELS = {
    Method.FULL: "causal LM, full sentence",
    Method.PARTIAL: "causal LM, partial (after the pronoun)",
    Method.PLL: "masked LM pseudo-log-likelihood",
    Method.RANDOM: "baseline: random (seeded)",
    Method.MAJORITY: "baseline: majority answer",
    Method.FIRST: "baseline: first candidate",
    Method.PREDICTIONS: "uploaded predictions",
}
#: Every method's value, in the enum's order (the choices of ``manage.py evaluate --method``).
METHOD_VALUES: tuple[str, ...] = tuple(m.value for m in Method)
#: Methods that score with a language model; the others take ``model=None``.
MODEL_METHODS: tuple[Method, ...] = (Method.FULL, Method.PARTIAL, Method.PLL)
#: Methods that score whole texts (both model kinds): ComVE and WinoWhy use these.
TEXT_METHODS: tuple[Method, ...] = (Method.FULL, Method.PLL)


def default_method(kind: str) -> Method:
    """The whole-text method of a model kind (masked: PLL, causal: full sentence)."""
    return Method.PLL if kind == "masked" else Method.FULL
