"""DRF authentication classes (a module of their own: DRF imports them while it loads its
views, so they may not import ``rest_framework.views``)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.authentication import BasicScheme
from rest_framework import authentication
from rest_framework.exceptions import AuthenticationFailed

from core.auth import client_address, login_refusal


class ThrottledBasicAuthentication(authentication.BasicAuthentication):
    """HTTP Basic (outside production only), refused before the password is checked for a
    locked account or address, like the sign-in form (core.auth)."""

    def authenticate_credentials(self, userid: str, password: str, request: Any = None) -> Any:
        refusal = login_refusal(username=userid, address=client_address(request))
        if refusal:
            raise AuthenticationFailed(refusal)
        return super().authenticate_credentials(userid, password, request)


class ThrottledBasicScheme(BasicScheme):
    """The OpenAPI description of ThrottledBasicAuthentication: HTTP Basic, as DRF's."""

    target_class = "core.authentication.ThrottledBasicAuthentication"
