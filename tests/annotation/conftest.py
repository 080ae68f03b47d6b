import pytest
from django.contrib.auth.models import Group

from core.roles import Role


@pytest.fixture
def make_annotators(django_user_model):
    """make_annotators(n, prefix) -> n users with the annotator role."""

    def make(n: int, prefix: str = "ann"):
        group, _ = Group.objects.get_or_create(name=Role.ANNOTATOR.value)
        users = []
        for i in range(n):
            user = django_user_model.objects.create_user(username=f"{prefix}{i}", password="pw")
            user.groups.add(group)
            users.append(user)
        return users

    return make


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    # Hashing is not what these tests are about; the default hasher costs ~0.3 s a user.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
