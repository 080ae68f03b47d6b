"""The one interface through which the annotate flow asks about a participation that is
not the annotator's own: a crowd participant's study (annotation.crowd), which decides which
campaigns they see, where they must be (the consent, the end), their next item while
screening, what their progress line counts, and what an answer or a skip means for them.

The annotation views, selectors, services and API import only this module; the crowd
feature registers its implementation when Django starts (``annotation.crowd.apps``), and
without one every method answers "an ordinary annotator" (import-linter keeps it so:
pyproject.toml, docs/architecture.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from annotation.models import Assignment, Campaign, Judgment


@dataclass(frozen=True)
class Step:
    """What comes next for a participant: ``redirect`` (a page of their study instead of
    the item page: the consent, or the end with their code), or ``assignment`` (the item
    their study hands out, e.g. a screening item). Neither: the ordinary next item."""

    redirect: str = ""
    assignment: Assignment | None = None


@dataclass(frozen=True)
class Progress:
    """What a participant's progress line counts (``kind``: "screening" or "batch")."""

    done: int
    total: int
    kind: str


@dataclass(frozen=True)
class Answered:
    """An answer just recorded (inside ``judgment_submit``'s transaction)."""

    judgment: Judgment
    campaign: Campaign
    is_gold: bool
    gold_answer: str


class Participation(Protocol):
    def visible_campaigns(self, *, user: Any, campaigns: QuerySet[Campaign]) -> QuerySet[Campaign]:
        """``campaigns`` narrowed to those ``user`` may work on."""
        ...

    def elsewhere(self, *, user: Any) -> str:
        """Where ``user`` must be instead of the item page ("" for here)."""
        ...

    def next_step(self, *, user: Any, campaign: Campaign) -> Step | None:
        """Before the next item is leased: None for the ordinary next item."""
        ...

    def progress(self, *, user: Any) -> Progress | None:
        """What the progress line counts; None for the campaign's items."""
        ...

    def page_context(self, *, user: Any) -> dict[str, Any]:
        """What the item page shows besides the item (its own template variables)."""
        ...

    def after_answer(self, *, user: Any, answered: Answered) -> None:
        """Inside the answer's transaction: what the answer counts for."""
        ...

    def after_skip(self, *, user: Any, assignment: Assignment) -> None:
        """Inside the skip's transaction: what the skip counts for."""
        ...

    def same_person(self, *, user: Any) -> list[int]:
        """The ids of ``user``'s other accounts (the same person under another study link):
        an item any of them wrote is never handed to ``user``."""
        ...


class _Annotator:
    """No participation registered: everyone is an ordinary annotator."""

    def visible_campaigns(self, *, user: Any, campaigns: QuerySet[Campaign]) -> QuerySet[Campaign]:
        return campaigns

    def elsewhere(self, *, user: Any) -> str:
        return ""

    def next_step(self, *, user: Any, campaign: Campaign) -> Step | None:
        return None

    def progress(self, *, user: Any) -> Progress | None:
        return None

    def page_context(self, *, user: Any) -> dict[str, Any]:
        return {}

    def after_answer(self, *, user: Any, answered: Answered) -> None:
        return None

    def after_skip(self, *, user: Any, assignment: Assignment) -> None:
        return None

    def same_person(self, *, user: Any) -> list[int]:
        return []


_registered: list[Participation] = [_Annotator()]


def participation_register(implementation: Participation) -> None:
    """Called once by the feature that owns participation (annotation.crowd's ``ready()``)."""
    _registered[0] = implementation


def participation() -> Participation:
    return _registered[0]
