"""Who may see cloze runs: researchers (DESIGN section 1: they run and compare evaluations)."""

from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from core.roles import Actor, user_is_researcher


def user_can_view_cloze_runs(*, user: Actor) -> bool:
    return user_is_researcher(user)


class IsClozeResearcher(BasePermission):
    """The API's cloze endpoints: the pages' rule (:func:`user_can_view_cloze_runs`)."""

    message = "Cloze analyses are for researchers."

    def has_permission(self, request: Request, view: APIView) -> bool:
        return user_can_view_cloze_runs(user=request.user)
