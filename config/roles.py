"""The three roles of DESIGN section 1, as Django groups, and their predicates."""

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import models
from django.http import HttpRequest


class Role(models.TextChoices):
    ANNOTATOR = "annotator", "Annotator"
    CURATOR = "curator", "Curator"
    RESEARCHER = "researcher", "Researcher"


UserLike = AbstractBaseUser | AnonymousUser


def user_roles(user: Any) -> set[str]:
    """The roles a user holds; a superuser holds them all."""
    if not getattr(user, "is_authenticated", False) or not getattr(user, "is_active", False):
        return set()
    if getattr(user, "is_superuser", False):
        return {r.value for r in Role}
    cached = getattr(user, "_winnow_roles", None)
    if cached is None:
        cached = set(user.groups.filter(name__in=[r.value for r in Role]).values_list("name", flat=True))
        user._winnow_roles = cached
    return set(cached)


def user_has_role(user: Any, role: Role | str) -> bool:
    return str(role) in user_roles(user)


def user_is_annotator(user: Any) -> bool:
    return user_has_role(user, Role.ANNOTATOR)


def user_is_curator(user: Any) -> bool:
    return user_has_role(user, Role.CURATOR)


def user_is_researcher(user: Any) -> bool:
    return user_has_role(user, Role.RESEARCHER)


def roles_context(request: HttpRequest) -> dict[str, Any]:
    roles = user_roles(request.user)
    return {
        "is_annotator": Role.ANNOTATOR.value in roles,
        "is_curator": Role.CURATOR.value in roles,
        "is_researcher": Role.RESEARCHER.value in roles,
    }
