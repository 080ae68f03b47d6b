"""Who may do what to a release. Roles come from config/roles.py."""

from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from core.roles import Actor, user_is_curator, user_roles
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
        return bool(user_roles(user))
    return user_can_see_drafts(user=user)


def user_can_change_release(*, user: Actor, release: Release) -> bool:
    """Only a draft's changelog can change, and only by a curator; published never."""
    return user_is_curator(user) and release.status == ReleaseStatus.DRAFT


class HasAnyRole(BasePermission):
    """Published releases are for anyone with a role (researchers above all)."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        return bool(user_roles(request.user))
