"""Production settings come from the environment, and `check --deploy` is clean with the
ones docs/operations.md documents (issue 16, item 11)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The production environment docs/operations.md shows (secrets made up for the test).
DOCUMENTED = {
    "WINNOW_PRODUCTION": "1",
    "SECRET_KEY": "k" * 20 + "x7Qe9-Lw2sVb!Zt4mN8rJ0yPq6uHc3D&fG5",
    "ALLOWED_HOSTS": "winnow.example",
    "CSRF_TRUSTED_ORIGINS": "https://winnow.example",
    "WINNOW_PROXY_SSL_HEADER": "1",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "1",
    "SECURE_HSTS_PRELOAD": "1",
}


def _run(*args: str, extra: dict[str, str] | None = None, drop: tuple[str, ...] = ()) -> str:
    # the test run's own switches (DEBUG, a database, pytest's DJANGO_* flags) are not production's
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DEBUG", "DATABASE_URL") and not k.startswith("DJANGO_")
    }
    env.update(DOCUMENTED)
    env.update(extra or {})
    for name in drop:
        env.pop(name, None)
    result = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    return result.stdout + result.stderr


def test_check_deploy_is_clean_with_the_documented_settings() -> None:
    out = _run("check", "--deploy", "--fail-level", "WARNING")
    assert "System check identified no issues" in out, out


def test_each_setting_is_read_from_the_environment() -> None:
    out = _run("check", "--deploy", drop=("SECURE_HSTS_SECONDS",))
    assert "security.W004" in out  # no HSTS unless asked
    out = _run("check", "--deploy", extra={"SECURE_SSL_REDIRECT": "0"})
    assert "security.W008" in out
    code = (
        "from django.conf import settings as s;"
        "print(s.SECURE_PROXY_SSL_HEADER, s.SECURE_HSTS_SECONDS, s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE)"
    )
    assert "('HTTP_X_FORWARDED_PROTO', 'https') 31536000 True True" in _run("shell", "-c", code)
    assert "None 31536000 True True" in _run("shell", "-c", code, drop=("WINNOW_PROXY_SSL_HEADER",))


def test_production_api_takes_sessions_and_tokens_but_no_basic_authentication() -> None:
    code = "from rest_framework.settings import api_settings as a; print([c.__name__ for c in a.DEFAULT_AUTHENTICATION_CLASSES])"
    assert "['SessionAuthentication', 'TokenAuthentication']" in _run("shell", "-c", code)
    outside = _run("shell", "-c", code, drop=("WINNOW_PRODUCTION",))
    assert "ThrottledBasicAuthentication" in outside
