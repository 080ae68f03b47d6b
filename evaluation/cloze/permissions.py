"""Who may see cloze runs: researchers (DESIGN section 1: they run and compare evaluations)."""

from typing import Any

from core.roles import user_is_researcher


def user_can_view_cloze_runs(*, user: Any) -> bool:
    return user_is_researcher(user)
