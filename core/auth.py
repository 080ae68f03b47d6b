"""Sign-in throttling (issue 16, item 7; study integrity, item 6): failed sign-ins are
counted per account *and address together* (as django-axes does by default), per address,
and per account alone; past a limit within a window, further attempts are refused for a
while before any password is checked, so guessing costs the attacker time and the server
no password hashing. No one can lock anyone else out: wrong passwords for a curator's
account from one address lock that account *from that address* only, and the curator
signs in from anywhere else. The account alone is only slowed down: past its own limit
(failures from all addresses together) each further failure makes the address that sent
it wait a few seconds before its next try for that account. A curator or admin lifts a
lockout in the admin ("Sign-in throttles").

Limits (settings, from the environment): ``WINNOW_LOGIN_FAILURES`` per account from one
address (10), ``WINNOW_LOGIN_ADDRESS_FAILURES`` per address (50), within
``WINNOW_LOGIN_WINDOW`` seconds (900), locked for ``WINNOW_LOGIN_LOCKOUT`` seconds (900);
``WINNOW_LOGIN_ACCOUNT_FAILURES`` per account from all addresses (10) before each further
failure costs its address ``WINNOW_LOGIN_SLOWDOWN`` seconds (5).
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
        ThrottleKind.ACCOUNT_ADDRESS: settings.WINNOW_LOGIN_FAILURES,
        ThrottleKind.ADDRESS: settings.WINNOW_LOGIN_ADDRESS_FAILURES,
        ThrottleKind.ACCOUNT: settings.WINNOW_LOGIN_ACCOUNT_FAILURES,
    }


def _account(username: str) -> str:
    return username.strip().lower()[:150]


def _keys(username: str, address: str) -> list[tuple[str, str]]:
    """The rows a sign-in counts on: (account, address), the address, the account."""
    keys = []
    if username:
        keys.append((ThrottleKind.ACCOUNT_ADDRESS.value, f"{_account(username)}|{address}"))
    if address:
        keys.append((ThrottleKind.ADDRESS.value, address))
    if username:
        keys.append((ThrottleKind.ACCOUNT.value, _account(username)))
    return keys


_REFUSED_FOR = {
    ThrottleKind.ACCOUNT_ADDRESS: "this account from your network address",
    ThrottleKind.ADDRESS: "your network address",
}


def login_refusal(*, username: str, address: str, now: datetime | None = None) -> str | None:
    """Why a sign-in must be refused before its password is checked, or None. Only the
    (account, address) pair and the address are ever locked, never the account alone."""
    now = now or timezone.now()
    for kind, key in _keys(username, address):
        if kind == ThrottleKind.ACCOUNT:
            continue
        row = LoginThrottle.objects.filter(kind=kind, key=key, locked_until__gt=now).first()
        if row is not None and row.locked_until is not None:
            seconds = (row.locked_until - now).total_seconds()
            if seconds < 90:
                wait = f"{max(1, round(seconds))} second{'s' if round(seconds) > 1 else ''}"
            else:
                minutes = round(seconds / 60)
                wait = f"about {minutes} minute{'s' if minutes != 1 else ''}"
            return (
                f"Too many failed sign-ins for {_REFUSED_FOR[ThrottleKind(kind)]}: try again in {wait}, "
                "or ask a curator to lift the lock."
            )
    return None


def login_failure_record(*, username: str, address: str, now: datetime | None = None) -> None:
    """Count a failed sign-in: lock the (account, address) pair or the address that reaches
    its limit; past the account's own limit, make this address wait before its next try."""
    now = now or timezone.now()
    window = timedelta(seconds=settings.WINNOW_LOGIN_WINDOW)
    limits = _limits()
    rows: dict[str, LoginThrottle] = {}
    with transaction.atomic():
        # always in the same order (pair, address, account), so concurrent failures never deadlock
        for kind, key in _keys(username, address):
            row, created = LoginThrottle.objects.select_for_update().get_or_create(
                kind=kind, key=key, defaults={"window_started": now}
            )
            # (the row is locked: concurrent failures are counted one after the other)
            if not created and row.window_started <= now - window and not _locked(row, now):
                row.failures, row.window_started, row.locked_until = 0, now, None
            row.failures += 1
            row.last_address = address
            if kind != ThrottleKind.ACCOUNT and row.failures >= limits[kind] and not _locked(row, now):
                row.locked_until = now + timedelta(seconds=settings.WINNOW_LOGIN_LOCKOUT)
            rows[kind] = row
        account, pair = rows.get(ThrottleKind.ACCOUNT), rows.get(ThrottleKind.ACCOUNT_ADDRESS)
        if account is not None and pair is not None and account.failures > limits[ThrottleKind.ACCOUNT]:
            slowed = now + timedelta(seconds=settings.WINNOW_LOGIN_SLOWDOWN)
            if pair.locked_until is None or pair.locked_until < slowed:
                pair.locked_until = slowed
        for row in rows.values():
            row.save()


def _locked(row: LoginThrottle, now: datetime) -> bool:
    return row.locked_until is not None and row.locked_until > now


def login_success_record(*, username: str, address: str) -> None:
    """A successful sign-in clears the account's counts, alone and from this address (the
    address keeps its own, and the account's locks from other addresses stay)."""
    account = _account(username)
    LoginThrottle.objects.filter(kind=ThrottleKind.ACCOUNT, key=account).delete()
    LoginThrottle.objects.filter(kind=ThrottleKind.ACCOUNT_ADDRESS, key=f"{account}|{address}").delete()


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
