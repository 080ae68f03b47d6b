"""Who may run and see evaluations: researchers and curators (DESIGN section 1)."""

from typing import Any

from core.roles import user_is_curator, user_is_researcher


def user_can_evaluate(*, user: Any) -> bool:
    """Start runs, read leaderboards and compare runs."""
    return bool(user_is_researcher(user) or user_is_curator(user))
