"""Selectors narrow by role: annotators and users without a role cannot list items."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied

from datasets.selectors import comve_item_list, reason_list, schema_list
from tests.datasets.factories import ComVEItemFactory, ReasonFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("role", ["annotator", "nobody"])
def test_annotators_cannot_list_items(request, role):
    user = request.getfixturevalue(role)
    for selector in (schema_list, reason_list, comve_item_list):
        with pytest.raises(PermissionDenied):
            selector(user=user)


def test_researchers_list_items_with_filters(researcher):
    ReasonFactory.create(label="negative")
    ReasonFactory.create(label="positive")
    ComVEItemFactory.create(split="test")
    assert reason_list(user=researcher, filters={"label": "negative"}).count() == 1
    assert schema_list(user=researcher).count() == 2
    assert comve_item_list(user=researcher, filters={"split": "dev"}).count() == 0
