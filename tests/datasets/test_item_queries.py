"""Selectors narrow by role: only curators (and admins) list items; annotators,
researchers (who read published releases) and users without a role cannot."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied

from datasets.selectors import comve_item_list, reason_list, schema_list
from tests.datasets.factories import ComVEItemFactory, ReasonFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("role", ["annotator", "researcher", "nobody"])
def test_only_curators_list_items(request, role):
    user = request.getfixturevalue(role)
    for selector in (schema_list, reason_list, comve_item_list):
        with pytest.raises(PermissionDenied):
            selector(user=user)


def test_curators_list_items_with_filters(curator):
    ReasonFactory.create(label="negative")
    ReasonFactory.create(label="positive")
    ComVEItemFactory.create(split="test")
    assert reason_list(user=curator, filters={"label": "negative"}).count() == 1
    assert schema_list(user=curator).count() == 2
    assert comve_item_list(user=curator, filters={"split": "dev"}).count() == 0
