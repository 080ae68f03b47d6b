"""Who may do what to a release. Roles come from config/roles.py."""

from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from core.roles import Actor, user_in_team, user_is_curator
from releases.models import Release, ReleaseStatus


def user_can_create_release(*, user: Actor) -> bool:
    return user_is_curator(user)


# Whether a curator may approve or publish a given release now depends on its state
# and on the second-approver setting: releases.services.release_actions answers it.


def user_can_see_drafts(*, user: Actor) -> bool:
    """Drafts and approved-but-unpublished releases are the curators' business only."""
    return user_is_curator(user)


def user_can_view_release(*, user: Actor, release: Release) -> bool:
    if release.status == ReleaseStatus.PUBLISHED:
        return user_in_team(user)
    return user_can_see_drafts(user=user)


def user_can_change_release(*, user: Actor, release: Release) -> bool:
    """Only a draft's changelog can change, and only by a curator; published never."""
    return user_is_curator(user) and release.status == ReleaseStatus.DRAFT


class HasAnyRole(BasePermission):
    """Published releases are for anyone with a role of the team (researchers above all);
    not for crowd participants, who would find the answers of their items there."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        return user_in_team(request.user)
