"""Shared fixtures: one per role, the real data folder, eager Celery."""

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import Group

from core.roles import Role

DATA_HINT = (
    "the public data sets are not in {path}. Get them with the Winnow repository's sibling folder "
    "`shared/data/` (see README.md, 'Real data'), or point WINNOW_DATA_DIR at a copy. "
    "CI sets WINNOW_REQUIRE_DATA=1, which turns this skip into a failure."
)


def _fast_temp_dir() -> str | None:
    """A memory-backed folder where there is one (Linux's /dev/shm), else the system's."""
    shm = Path("/dev/shm")  # noqa: S108 - a private mkdtemp folder inside it
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix):
    """The SQLite test database is a file (WAL, busy timeout), as the app's own is, not
    Django's default in-memory database. That one is a shared cache whose table locks
    ignore the busy timeout: a worker thread writing a run's progress while the live
    server reads the same table fails at once with "database table is locked", which is
    not what the app does on its file. WINNOW_TEST_DATABASE_NAME still names a file of
    your choice; each process of ``pytest -n`` gets a folder of its own."""
    db = settings.DATABASES["default"]
    if db["ENGINE"] != "django.db.backends.sqlite3" or db.get("TEST", {}).get("NAME"):
        yield
        return
    folder = tempfile.mkdtemp(prefix="winnow-test-db-", dir=_fast_temp_dir())
    db.setdefault("TEST", {})["NAME"] = str(Path(folder) / "test.sqlite3")
    yield
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def _media_root_per_worker(tmp_path_factory):
    """Each test process writes run folders and release files in a folder of its own: the
    processes of ``pytest -n`` have databases of their own whose ids start alike, so a
    shared MEDIA_ROOT would let two of them write ``runs/run-1`` at once. (A test that sets
    MEDIA_ROOT itself still does.)"""
    before = settings.MEDIA_ROOT
    settings.MEDIA_ROOT = tmp_path_factory.mktemp("media")
    yield
    settings.MEDIA_ROOT = before


@pytest.fixture(autouse=True)
def _eager_celery(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True


@pytest.fixture(autouse=True)
def _empty_cache():
    """Each test starts with an empty cache (cached roles are keyed by user id, and ids
    come back after a rolled-back test)."""
    from django.core.cache import caches
    from django.core.cache.backends.locmem import LocMemCache

    local = isinstance(caches["default"], LocMemCache)  # never flush a shared Redis
    if local:
        caches["default"].clear()
    yield
    if local:
        caches["default"].clear()


@pytest.fixture
def data_dir() -> Path:
    """The folder of real public data sets; skips (or fails in CI) when it is missing."""
    path = Path(settings.WINNOW_DATA_DIR)
    if not (path / "winowhy" / "winowhy.json").exists():
        message = DATA_HINT.format(path=path)
        if os.environ.get("WINNOW_REQUIRE_DATA") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture
def redis_url() -> str:
    """A real Redis for tests of the broker and the cache (CI sets WINNOW_TEST_REDIS_URL);
    skips without one, or fails when WINNOW_REQUIRE_SERVICES=1."""
    url = os.environ.get("WINNOW_TEST_REDIS_URL", "")
    if not url:
        message = "needs Redis: set WINNOW_TEST_REDIS_URL=redis://127.0.0.1:6379/15"
        if os.environ.get("WINNOW_REQUIRE_SERVICES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return url


def _user_with_role(django_user_model, username: str, role: Role | None):
    user = django_user_model.objects.create_user(username=username, password="pw-" + username)
    if role is not None:
        group, _ = Group.objects.get_or_create(name=role.value)
        user.groups.add(group)
    return user


@pytest.fixture
def annotator(django_user_model):
    return _user_with_role(django_user_model, "anna", Role.ANNOTATOR)


@pytest.fixture
def annotator2(django_user_model):
    return _user_with_role(django_user_model, "arne", Role.ANNOTATOR)


@pytest.fixture
def curator(django_user_model):
    return _user_with_role(django_user_model, "cora", Role.CURATOR)


@pytest.fixture
def researcher(django_user_model):
    return _user_with_role(django_user_model, "remy", Role.RESEARCHER)


@pytest.fixture
def nobody(django_user_model):
    """A logged-in user with no role."""
    return _user_with_role(django_user_model, "nora", None)
