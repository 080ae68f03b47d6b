"""Who may see cloze runs: researchers (DESIGN section 1: they run and compare evaluations)."""

from core.roles import Actor, user_is_researcher


def user_can_view_cloze_runs(*, user: Actor) -> bool:
    return user_is_researcher(user)
