"""The three roles of DESIGN section 1, as Django groups, and their predicates; and the
crowd participant, who may only annotate their own study's campaign."""

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from django.contrib.auth.models import AnonymousUser, User
from django.contrib.auth.views import redirect_to_login
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.db import models
from django.http import HttpRequest, HttpResponse

from core.errors import Forbidden


class Role(models.TextChoices):
    ANNOTATOR = "annotator", "Annotator"
    CURATOR = "curator", "Curator"
    RESEARCHER = "researcher", "Researcher"
    #: a crowd worker who came through a study link (annotation.crowd): annotates their
    #: study's campaign and sees nothing else (no releases: they hold answers)
    PARTICIPANT = "participant", "Crowd participant"


#: The roles of the project's own people (DESIGN section 1); a superuser holds these.
TEAM_ROLES = frozenset({Role.ANNOTATOR.value, Role.CURATOR.value, Role.RESEARCHER.value})


#: The acting user as a view hands it over (``request.user``): Winnow's user model
#: (``settings.AUTH_USER_MODEL`` is Django's own ``User``) or the anonymous user, whom
#: every role predicate refuses.
Actor = User | AnonymousUser


#: How long a user's roles stay in the cache. Changes of group membership made through
#: Django (admin, shell, management commands) clear the entry at once (see
#: `roles_forget`); the time limit bounds anything else, such as SQL written by hand.
ROLES_CACHE_SECONDS = 60


def account_of(user: Actor | None) -> User | None:
    """The account to record as having done something (``created_by`` and the like): the
    user, or None for the anonymous user and for the system (a command run without
    ``--user``)."""
    return user if isinstance(user, User) else None


def signed_in(user: Actor) -> User:
    """The acting user as the user model, for a service that records who did something;
    the anonymous user may do nothing there (403). The views' login checks turn the
    anonymous user away first, so this is the last line."""
    if not isinstance(user, User):
        raise Forbidden("Sign in first.")
    return user


def _roles_key(user_id: Any) -> str:
    return f"winnow:roles:{user_id}"


def user_roles(user: Actor) -> set[str]:
    """The roles a user holds; a superuser holds them all.

    Asked on every request, so the answer is kept on the user object and in the cache
    (Redis in production), not read from the database each time."""
    if not isinstance(user, User) or not user.is_active:
        return set()
    if user.is_superuser:
        return set(TEAM_ROLES)
    cached = getattr(user, "_winnow_roles", None)
    if cached is None:
        key = _roles_key(user.pk)
        stored = cache.get(key)
        if stored is None:
            stored = sorted(
                user.groups.filter(name__in=[r.value for r in Role]).values_list("name", flat=True)
            )
            cache.set(key, stored, ROLES_CACHE_SECONDS)
        cached = set(stored)
        # kept on the instance for the rest of the request (not a field of the model)
        setattr(user, "_winnow_roles", cached)  # noqa: B010
    return set(cached)


def roles_forget(user_ids: Any) -> None:
    """Drop the cached roles of these users (after their groups changed)."""
    keys = [_roles_key(pk) for pk in user_ids]
    if keys:
        cache.delete_many(keys)


def user_has_role(user: Actor, role: Role | str) -> bool:
    return str(role) in user_roles(user)


def user_is_annotator(user: Actor) -> bool:
    return user_has_role(user, Role.ANNOTATOR)


def user_is_curator(user: Actor) -> bool:
    return user_has_role(user, Role.CURATOR)


def user_is_researcher(user: Actor) -> bool:
    return user_has_role(user, Role.RESEARCHER)


def user_is_participant(user: Actor) -> bool:
    return user_has_role(user, Role.PARTICIPANT)


def user_in_team(user: Actor) -> bool:
    """Holds one of the three roles of DESIGN section 1 (a crowd participant holds none)."""
    return bool(user_roles(user) & TEAM_ROLES)


View = TypeVar("View", bound=Callable[..., Any])


def role_required(allowed: Callable[..., bool], message: str) -> Callable[[View], View]:
    """The one way a page refuses a user (docs/architecture.md): ``allowed`` is a predicate
    of the app's ``permissions.py`` (or of this module), called as ``allowed(user=...)``
    with the signed-in user.

    - signed out: the sign-in page, and back here after it (an htmx request gets
      ``HX-Redirect`` to it, so the form never lands inside the page);
    - signed in without the role: a 403 page that says ``message`` ("Evaluations are for
      researchers and curators.").

    A refusal that depends on the object (this campaign, this release) stays in the
    selector or service, which raises a ``WinnowError``."""

    def decorate(view: View) -> View:
        @wraps(view)
        def checked(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
            if not request.user.is_authenticated:
                path = request.get_full_path()
                if request.headers.get("HX-Request") == "true":
                    current = urlsplit(request.headers.get("HX-Current-URL") or path)
                    response = HttpResponse(status=204)
                    response["HX-Redirect"] = redirect_to_login(
                        urlunsplit(("", "", current.path, current.query, ""))
                    ).url
                    return response
                return redirect_to_login(path)
            if not allowed(user=request.user):
                raise PermissionDenied(message)
            return view(request, *args, **kwargs)

        checked.role_required = (allowed, message)  # type: ignore[attr-defined]  # read by tests/test_role_required.py
        return checked  # type: ignore[return-value]  # the same signature as the view

    return decorate


def roles_context(request: HttpRequest) -> dict[str, Any]:
    roles = user_roles(request.user)
    return {
        "is_annotator": Role.ANNOTATOR.value in roles,
        "is_curator": Role.CURATOR.value in roles,
        "is_researcher": Role.RESEARCHER.value in roles,
        "is_participant": Role.PARTICIPANT.value in roles,
    }


def curator_admin_access_grant(*, users: list[Any] | None = None) -> int:
    """Let curators work in the Django admin: the curator group gets every permission on
    the models of each app whose AppConfig sets ``curator_admin = True`` (items, import
    batches, releases), and each of ``users`` becomes staff. Returns how many permissions
    the group holds. Safe to run again."""
    from django.apps import apps
    from django.contrib.auth.models import Group, Permission
    from django.db import transaction

    labels = [c.label for c in apps.get_app_configs() if getattr(c, "curator_admin", False)]
    with transaction.atomic():
        group, _ = Group.objects.get_or_create(name=Role.CURATOR.value)
        permissions = Permission.objects.filter(content_type__app_label__in=labels)
        group.permissions.add(*permissions)
        for user in users or []:
            if not user.is_staff:
                user.is_staff = True
                user.save(update_fields=["is_staff"])
        return group.permissions.filter(content_type__app_label__in=labels).count()
