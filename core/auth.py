"""Sign-in throttling (issue 16, item 7): failed sign-ins are counted per account and per
client address; past a limit within a window, further attempts are refused for a while
before any password is checked, so guessing costs the attacker time and the server no
password hashing. A curator or admin lifts a lockout in the admin ("Sign-in throttles").

Limits (settings, from the environment): ``WINNOW_LOGIN_FAILURES`` per account (10),
``WINNOW_LOGIN_ADDRESS_FAILURES`` per address (50), within ``WINNOW_LOGIN_WINDOW`` seconds
(900), locked for ``WINNOW_LOGIN_LOCKOUT`` seconds (900).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.db import transaction
from django.http import HttpRequest
from django.utils import timezone

from core.models import LoginThrottle, ThrottleKind


def client_address(request: HttpRequest | None) -> str:
    """The client's address: REMOTE_ADDR, or behind a trusted proxy (``WINNOW_PROXY_SSL_HEADER``)
    the last address of X-Forwarded-For, the one the proxy itself saw."""
    if request is None:
        return ""
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if forwarded and getattr(settings, "SECURE_PROXY_SSL_HEADER", None):
        return forwarded.split(",")[-1].strip()[:64]
    return str(request.META.get("REMOTE_ADDR", ""))[:64]


def _limits() -> dict[str, int]:
    return {
        ThrottleKind.ACCOUNT: settings.WINNOW_LOGIN_FAILURES,
        ThrottleKind.ADDRESS: settings.WINNOW_LOGIN_ADDRESS_FAILURES,
    }


def _keys(username: str, address: str) -> list[tuple[str, str]]:
    keys = []
    if username:
        keys.append((ThrottleKind.ACCOUNT.value, username.strip().lower()[:150]))
    if address:
        keys.append((ThrottleKind.ADDRESS.value, address))
    return keys


def login_refusal(*, username: str, address: str, now: datetime | None = None) -> str | None:
    """Why a sign-in must be refused before its password is checked, or None."""
    now = now or timezone.now()
    for kind, key in _keys(username, address):
        row = LoginThrottle.objects.filter(kind=kind, key=key, locked_until__gt=now).first()
        if row is not None and row.locked_until is not None:
            minutes = max(1, round((row.locked_until - now).total_seconds() / 60))
            what = "this account" if kind == ThrottleKind.ACCOUNT else "your network address"
            return (
                f"Too many failed sign-ins for {what}: try again in about {minutes} minute"
                f"{'s' if minutes != 1 else ''}, or ask a curator to lift the lock."
            )
    return None


def login_failure_record(*, username: str, address: str, now: datetime | None = None) -> None:
    """Count a failed sign-in; lock the account or address that reaches its limit."""
    now = now or timezone.now()
    window = timedelta(seconds=settings.WINNOW_LOGIN_WINDOW)
    limits = _limits()
    with transaction.atomic():
        for kind, key in _keys(username, address):
            row, created = LoginThrottle.objects.select_for_update().get_or_create(
                kind=kind, key=key, defaults={"window_started": now}
            )
            # (the row is locked: concurrent failures are counted one after the other)
            if not created and row.window_started <= now - window and not _locked(row, now):
                row.failures, row.window_started, row.locked_until = 0, now, None
            row.failures += 1
            row.last_address = address
            if row.failures >= limits[kind] and not _locked(row, now):
                row.locked_until = now + timedelta(seconds=settings.WINNOW_LOGIN_LOCKOUT)
            row.save()


def _locked(row: LoginThrottle, now: datetime) -> bool:
    return row.locked_until is not None and row.locked_until > now


def login_success_record(*, username: str) -> None:
    """A successful sign-in clears the account's count (the address keeps its own)."""
    LoginThrottle.objects.filter(kind=ThrottleKind.ACCOUNT, key=username.strip().lower()).delete()


def login_lockout_lift(*, throttles: Any) -> int:
    """Let the accounts or addresses of these rows sign in again at once; how many were locked."""
    now = timezone.now()
    locked = throttles.filter(locked_until__gt=now).count()
    throttles.update(failures=0, locked_until=None, window_started=now)
    return int(locked)


class ThrottledAuthenticationForm(AuthenticationForm):
    """The sign-in form: a locked account or address is refused before the password is
    checked (no password hash is computed); failures are counted by ``core.apps``' signal
    receiver, so every authentication path (this form, the API) counts them alike."""

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username") or ""
        refusal = login_refusal(username=username, address=client_address(self.request))
        if refusal:
            raise forms.ValidationError(refusal, code="locked")
        return super().clean()
