"""Who may do what with items (roles from config/roles.py)."""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from core.roles import Actor, user_is_curator, user_is_researcher


def user_can_import(*, user: Actor) -> bool:
    """Curators (and superusers, who hold every role) import data."""
    return user_is_curator(user)


def user_can_browse_items(*, user: Actor) -> bool:
    """Curators and admins see every item; researchers too: the items are public-source
    data and carry no annotator identity. Annotators may not browse in bulk: they see
    only the item in hand, through the annotation pages."""
    return user_is_curator(user) or user_is_researcher(user)


class CanBrowseItems(BasePermission):
    message = "Only curators, researchers and admins may browse items; annotators see the item in hand."

    def has_permission(self, request: Request, view: Any) -> bool:
        return user_can_browse_items(user=request.user)
