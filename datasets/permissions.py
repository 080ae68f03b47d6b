"""Who may do what with items (roles from config/roles.py)."""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from core.roles import Actor, user_is_curator


def user_can_import(*, user: Actor) -> bool:
    """Curators (and superusers, who hold every role) import data."""
    return user_is_curator(user)


def user_can_browse_items(*, user: Actor) -> bool:
    """Curators and admins see every item. Researchers do not: the items hold crowd-written
    text and aggregated labels that no release contains yet, and researchers read only
    published releases (DESIGN section 1). Annotators see only the item in hand, through
    the annotation pages."""
    return user_is_curator(user)


class CanBrowseItems(BasePermission):
    message = (
        "Only curators and admins may browse items; researchers read published releases, "
        "annotators see the item in hand."
    )

    def has_permission(self, request: Request, view: Any) -> bool:
        return user_can_browse_items(user=request.user)
