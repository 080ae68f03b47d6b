"""Who may run and see evaluations: researchers and curators (DESIGN section 1)."""

from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from core.roles import Actor, user_is_curator, user_is_researcher


def user_can_evaluate(*, user: Actor) -> bool:
    """Start runs, read leaderboards and compare runs."""
    return bool(user_is_researcher(user) or user_is_curator(user))


class IsEvaluator(BasePermission):
    """The API's evaluation endpoints: the pages' rule (:func:`user_can_evaluate`)."""

    message = "Evaluations are for researchers and curators."

    def has_permission(self, request: Request, view: APIView) -> bool:
        return user_can_evaluate(user=request.user)
