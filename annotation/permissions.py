"""Who may do what in annotation (roles from config/roles.py)."""

from typing import Any

from rest_framework.permissions import BasePermission

from core.roles import user_is_annotator, user_is_curator


def user_can_annotate(user: Any) -> bool:
    return user_is_annotator(user)


def user_can_curate(user: Any) -> bool:
    return user_is_curator(user)


class IsAnnotator(BasePermission):
    message = "Only annotators can take and answer items."

    def has_permission(self, request: Any, view: Any) -> bool:
        return user_can_annotate(request.user)
