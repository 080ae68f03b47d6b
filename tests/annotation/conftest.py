import pytest

from tests.annotation.answering import annotators


@pytest.fixture
def make_annotators():
    """make_annotators(n, prefix) -> n users with the annotator role."""
    return annotators


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    # Hashing is not what these tests are about; the default hasher costs ~0.3 s a user.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
