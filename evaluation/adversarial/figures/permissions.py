"""Who sees the adversarial figures: curators and researchers (the figures are counts and
rates per writer, round, model and collection; annotators and crowd participants see none)."""

from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from core.roles import Actor, user_is_curator, user_is_researcher

FIGURES_ONLY = "The adversarial figures are for curators and researchers."


def user_can_see_adversarial_figures(*, user: Actor) -> bool:
    return bool(user_is_curator(user) or user_is_researcher(user))


class SeesAdversarialFigures(BasePermission):
    message = FIGURES_ONLY

    def has_permission(self, request: Request, view: APIView) -> bool:
        return user_can_see_adversarial_figures(user=request.user)
