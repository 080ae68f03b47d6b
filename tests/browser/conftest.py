"""Headless Chromium (Debian's package) driven by Playwright's sync API against
pytest-django's live_server. Reusable fixtures: ``browser``, ``page``, ``login``. Every
test in this folder is marked ``browser`` here (``-m "not browser"`` leaves them out), not
file by file.

Playwright's sync API runs an event loop in the test thread; Django refuses database
calls from a thread with a running loop unless DJANGO_ALLOW_ASYNC_UNSAFE is set."""

import importlib
import os
from pathlib import Path

import pytest

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = Path(os.environ.get("WINNOW_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


BROWSER_TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if BROWSER_TESTS in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.browser)


def _missing(message: str) -> None:
    if os.environ.get("WINNOW_REQUIRE_SERVICES") == "1":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        _missing(f"browser tests need Debian's chromium at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("browser tests need the playwright package (requirements-dev.txt)")
    with sync_playwright() as pw:
        instance = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        yield instance
        instance.close()


@pytest.fixture
def page(browser, live_server, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    context = browser.new_context(base_url=live_server.url)
    context.set_default_timeout(15_000)
    tab = context.new_page()
    yield tab
    context.close()


@pytest.fixture
def new_page(browser, live_server):
    """Another independent browser (own cookies): new_page() -> page."""
    contexts = []

    def make():
        context = browser.new_context(base_url=live_server.url)
        context.set_default_timeout(15_000)
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def login():
    """login(page, user, password=None): log in through the login form.
    The role fixtures of tests/conftest.py use the password "pw-<username>"."""

    def do(page, user, password=None):
        page.goto("/accounts/login/")
        page.fill("input[name=username]", user.get_username())
        page.fill("input[name=password]", password or f"pw-{user.get_username()}")
        page.click("form button[type=submit]")
        page.wait_for_url(lambda url: "/accounts/login/" not in url)
        return page

    return do


@pytest.fixture
def published_releases_removed_afterwards(transactional_db):
    """The live server needs committed rows, and the flush after the test cannot delete a
    published release (the database's guard triggers refuse it): lift the guards (the SQL
    of their own migration), delete the release rows, put the guards back."""
    yield
    from django.db import connection

    guards = importlib.import_module("datasets.migrations.0004_release_published_guards")
    postgres = connection.vendor == "postgresql"
    lift = guards.POSTGRES_BACKWARD if postgres else guards._sqlite_backward()
    restore = guards.POSTGRES_FORWARD if postgres else guards._sqlite_forward()
    with connection.cursor() as cursor:
        for statement in lift:
            cursor.execute(statement)
        for table in ("datasets_releasefile", "datasets_releaseitem", "datasets_release"):
            cursor.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed table names
        for statement in restore:
            cursor.execute(statement)
