"""Who acts in annotation's services: the signed-in user, as the user model.

Views hand over ``request.user``, typed as the user model or the anonymous user; the login
checks of the views have turned the anonymous user away already, and a service that
records who did something narrows it here once.
"""

from django.contrib.auth.models import AnonymousUser, User

from core.errors import Forbidden


def signed_in(user: User | AnonymousUser) -> User:
    """The acting user as the user model; the anonymous user may do nothing here (403)."""
    if isinstance(user, AnonymousUser):
        raise Forbidden("Sign in first.")
    return user
