"""Sign-in throttling (issue 16, item 7; study integrity, item 6): wrong passwords lock an
account from one address, or a client address, for a while, never the account from
everywhere (the account alone is only slowed down), a locked sign-in costs no password hash, a curator lifts the lock in
the admin, and the API's authentication is throttled the same way."""

from __future__ import annotations

import base64
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import forms as auth_forms
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from core.models import LoginThrottle, ThrottleKind
from core.roles import curator_admin_access_grant

pytestmark = pytest.mark.django_db
LOGIN = "/accounts/login/"


@pytest.fixture(autouse=True)
def _limits(settings: Any) -> None:
    settings.WINNOW_LOGIN_FAILURES = 3
    settings.WINNOW_LOGIN_ADDRESS_FAILURES = 6
    settings.WINNOW_LOGIN_WINDOW = 900
    settings.WINNOW_LOGIN_LOCKOUT = 600
    settings.WINNOW_LOGIN_ACCOUNT_FAILURES = 4
    settings.WINNOW_LOGIN_SLOWDOWN = 5


def _login(client: Any, username: str, password: str, address: str = "10.0.0.1") -> Any:
    return client.post(LOGIN, {"username": username, "password": password}, REMOTE_ADDR=address)


def _signed_in(response: Any) -> bool:
    return response.status_code == 302 and response["Location"] == reverse("home")


@pytest.fixture
def hashes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every password check the sign-in form asks for."""
    calls: list[str] = []
    real = auth_forms.authenticate  # type: ignore[attr-defined]  # imported there by Django, not declared in the stubs

    def counting(request: Any = None, **credentials: Any) -> Any:
        calls.append(credentials.get("username", ""))
        return real(request, **credentials)

    monkeypatch.setattr(auth_forms, "authenticate", counting)
    return calls


def test_wrong_passwords_lock_the_account_from_that_address_even_against_the_right_password(
    client, annotator, hashes
):
    for _ in range(3):
        assert _login(client, "anna", "wrong").status_code == 200
    assert len(hashes) == 3
    response = _login(client, "anna", "pw-anna")
    assert not _signed_in(response)
    assert "Too many failed sign-ins for this account from your network address" in response.content.decode()
    assert len(hashes) == 3  # refused before any password was checked
    row = LoginThrottle.objects.get(kind=ThrottleKind.ACCOUNT_ADDRESS, key="anna|10.0.0.1")
    assert row.failures == 3 and row.locked_until is not None
    account = LoginThrottle.objects.get(kind=ThrottleKind.ACCOUNT, key="anna")
    assert account.failures == 3 and account.locked_until is None  # the account alone is never locked


def test_the_user_name_is_matched_without_case(client, annotator):
    for name in ("Anna", "ANNA", "anna"):
        _login(client, name, "wrong")
    assert "Too many failed" in _login(client, "anna", "pw-anna").content.decode()


def test_the_lock_ends_by_itself_and_a_success_clears_the_count(client, annotator):
    for _ in range(3):
        _login(client, "anna", "wrong")
    LoginThrottle.objects.filter(key__startswith="anna").update(
        locked_until=timezone.now() - timedelta(seconds=1)
    )
    assert _signed_in(_login(client, "anna", "pw-anna"))
    assert not LoginThrottle.objects.filter(kind=ThrottleKind.ACCOUNT, key="anna").exists()
    assert not LoginThrottle.objects.filter(kind=ThrottleKind.ACCOUNT_ADDRESS, key="anna|10.0.0.1").exists()


def test_failures_older_than_the_window_start_a_new_count(client, annotator):
    for _ in range(2):
        _login(client, "anna", "wrong")
    LoginThrottle.objects.filter(key__startswith="anna").update(
        window_started=timezone.now() - timedelta(hours=1)
    )
    _login(client, "anna", "wrong")
    assert LoginThrottle.objects.get(kind=ThrottleKind.ACCOUNT, key="anna").failures == 1
    assert _signed_in(_login(client, "anna", "pw-anna"))


def test_one_address_guessing_many_accounts_is_locked(client, annotator):
    for n in range(6):
        _login(client, f"guess{n}", "wrong", address="10.9.9.9")
    response = _login(client, "anna", "pw-anna", address="10.9.9.9")
    assert "Too many failed sign-ins for your network address" in response.content.decode()
    assert _signed_in(_login(client, "anna", "pw-anna", address="10.0.0.2"))  # elsewhere: fine


def test_ten_failures_from_one_address_leave_the_account_usable_from_another(client, curator, settings):
    """Nobody locks a curator out by guessing their password from somewhere else."""
    settings.WINNOW_LOGIN_FAILURES = settings.WINNOW_LOGIN_ACCOUNT_FAILURES = 10
    for _ in range(10):
        _login(client, "cora", "wrong", address="203.0.113.9")
    assert "Too many failed" in _login(client, "cora", "pw-cora", address="203.0.113.9").content.decode()
    assert _signed_in(_login(client, "cora", "pw-cora", address="198.51.100.4"))


def test_past_its_own_limit_the_account_is_slowed_down_per_address_not_locked(client, annotator):
    # four failures from four addresses: no pair and no address reaches its limit
    for n in range(4):
        _login(client, "anna", "wrong", address=f"10.1.0.{n}")
    assert LoginThrottle.objects.filter(locked_until__isnull=False).count() == 0
    # the fifth failure (past the account's limit of 4) makes its address wait a few seconds
    _login(client, "anna", "wrong", address="10.1.0.9")
    response = _login(client, "anna", "pw-anna", address="10.1.0.9")
    assert "try again in 5 seconds" in response.content.decode()
    pair = LoginThrottle.objects.get(kind=ThrottleKind.ACCOUNT_ADDRESS, key="anna|10.1.0.9")
    assert pair.locked_until is not None
    assert pair.locked_until <= timezone.now() + timedelta(seconds=5)
    # every other address signs in at once
    assert _signed_in(_login(client, "anna", "pw-anna", address="10.2.0.1"))


def test_a_curator_lifts_a_lockout_in_the_admin(client, annotator, curator):
    for _ in range(3):
        _login(client, "anna", "wrong")
    curator_admin_access_grant(users=[curator])
    client.force_login(curator)
    changelist = reverse("admin:core_loginthrottle_changelist")
    assert "anna" in client.get(changelist).content.decode()
    row = LoginThrottle.objects.get(kind=ThrottleKind.ACCOUNT_ADDRESS, key="anna|10.0.0.1")
    response = client.post(changelist, {"action": "lift", "_selected_action": [row.pk]}, follow=True)
    assert "1 lockout lifted." in response.content.decode()
    client.logout()
    assert _signed_in(_login(client, "anna", "pw-anna"))


def test_an_annotator_cannot_reach_the_lockouts(client, annotator):
    client.force_login(annotator)
    assert client.get(reverse("admin:core_loginthrottle_changelist")).status_code == 302  # to admin login


def test_basic_authentication_is_throttled_before_the_password_is_checked(annotator, monkeypatch):
    api = APIClient()

    def get(password: str) -> Any:
        token = base64.b64encode(f"anna:{password}".encode()).decode()
        return api.get(url, HTTP_AUTHORIZATION=f"Basic {token}", REMOTE_ADDR="10.0.0.7")

    url = reverse("annotation-api:progress", args=["nothing"])
    for _ in range(5):
        assert get("wrong").status_code in (401, 403)
    checked: list[str] = []

    def check_password(self: Any, raw: str) -> bool:
        checked.append(raw)
        return True

    monkeypatch.setattr("django.contrib.auth.models.User.check_password", check_password)
    response = get("pw-anna")
    assert response.status_code in (401, 403)
    assert "Too many failed sign-ins" in response.json()["detail"]
    assert checked == []


def test_a_token_authenticates_the_api(annotator):
    token = Token.objects.create(user=annotator)
    api = APIClient()
    response = api.get(
        reverse("annotation-api:progress", args=["nothing"]), HTTP_AUTHORIZATION=f"Token {token.key}"
    )
    assert response.status_code == 404  # signed in as anna: the campaign does not exist
    assert api.get(reverse("annotation-api:progress", args=["nothing"])).status_code in (401, 403)
