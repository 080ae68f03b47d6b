"""Roles are read on every request, so they are cached; a change of groups shows at once."""

import pytest
from django.contrib.auth.models import Group

from core.roles import Role, user_roles

pytestmark = pytest.mark.django_db


def _fresh(user):
    return type(user).objects.get(pk=user.pk)  # a new request's user object


def test_roles_come_from_the_cache_after_the_first_read(django_user_model, django_assert_num_queries) -> None:
    user = django_user_model.objects.create_user(username="cached", password="pw")
    user.groups.add(Group.objects.get_or_create(name=Role.CURATOR.value)[0])
    assert user_roles(_fresh(user)) == {"curator"}
    fresh = _fresh(user)
    with django_assert_num_queries(0):
        assert user_roles(fresh) == {"curator"}


def test_every_way_of_changing_groups_clears_the_cached_roles(django_user_model) -> None:
    user = django_user_model.objects.create_user(username="changing", password="pw")
    annotators, _ = Group.objects.get_or_create(name=Role.ANNOTATOR.value)
    assert user_roles(_fresh(user)) == set()
    user.groups.add(annotators)
    assert user_roles(_fresh(user)) == {"annotator"}
    annotators.user_set.remove(user)
    assert user_roles(_fresh(user)) == set()
    annotators.user_set.add(user)
    assert user_roles(_fresh(user)) == {"annotator"}
    annotators.user_set.clear()
    assert user_roles(_fresh(user)) == set()
    user.groups.add(annotators)
    assert user_roles(_fresh(user)) == {"annotator"}
    user.groups.clear()
    assert user_roles(_fresh(user)) == set()
    user.groups.add(annotators)
    assert user_roles(_fresh(user)) == {"annotator"}
    annotators.delete()
    assert user_roles(_fresh(user)) == set()
