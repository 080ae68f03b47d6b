"""Who may run and see evaluations: researchers and curators (DESIGN section 1)."""

from core.roles import Actor, user_is_curator, user_is_researcher


def user_can_evaluate(*, user: Actor) -> bool:
    """Start runs, read leaderboards and compare runs."""
    return bool(user_is_researcher(user) or user_is_curator(user))
