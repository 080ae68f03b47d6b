"""Who may do what in annotation (roles from config/roles.py)."""

from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from rest_framework.permissions import BasePermission

from core.errors import Forbidden
from core.roles import user_is_annotator, user_is_curator

#: The acting user as a view hands it over (``request.user``): the user model, or an
#: anonymous visitor, whom the views' login checks have turned away already.
RequestUser = User | AnonymousUser


def signed_in(user: RequestUser) -> User:
    """The acting user as the user model; an anonymous visitor may do nothing here."""
    if isinstance(user, AnonymousUser):
        raise Forbidden("Sign in first.")
    return user


def user_can_annotate(user: Any) -> bool:
    return user_is_annotator(user)


def user_can_curate(user: Any) -> bool:
    return user_is_curator(user)


class IsAnnotator(BasePermission):
    message = "Only annotators can take and answer items."

    def has_permission(self, request: Any, view: Any) -> bool:
        return user_can_annotate(request.user)
