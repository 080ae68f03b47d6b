"""Who may start and see audits (DESIGN sections 1 and 11).

Curators start audits and make filtered releases; they see every audit. Researchers see
the audits of published releases (never of a collection or an unpublished release: draft
data). Annotators see none."""

from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from core.roles import Actor, user_is_curator, user_is_researcher
from evaluation.models import Audit
from releases.models import ReleaseStatus


def user_can_start_audit(*, user: Actor) -> bool:
    return user_is_curator(user)


def user_can_see_audits(*, user: Actor) -> bool:
    return bool(user_is_curator(user) or user_is_researcher(user))


def user_can_see_audit(*, user: Actor, audit: Audit) -> bool:
    if user_is_curator(user):
        return True
    return bool(
        user_is_researcher(user)
        and audit.release is not None
        and audit.release.status == ReleaseStatus.PUBLISHED
    )


class SeesAudits(BasePermission):
    message = "Audits are for curators and researchers."

    def has_permission(self, request: Request, view: APIView) -> bool:
        return user_can_see_audits(user=request.user)
