"""The admin: reachable by staff only, and a changelist page costs the same number of
queries whatever the number of rows."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core.roles import curator_admin_access_grant
from datasets.models import ComVEItem, ImportBatch, Reason, Schema
from tests.datasets.factories import ComVEItemFactory, ReasonFactory, SchemaFactory

pytestmark = pytest.mark.django_db

CHANGELISTS = {
    "schema": "/admin/datasets/schema/",
    "reason": "/admin/datasets/reason/",
    "comveitem": "/admin/datasets/comveitem/",
    "importbatch": "/admin/datasets/importbatch/",
}


def make_rows(n: int) -> None:
    batch = ImportBatch.objects.create(format="winowhy")
    schemas = Schema.objects.bulk_create(SchemaFactory.build_batch(n, import_batch=batch))
    for a, b in zip(schemas[::2], schemas[1::2], strict=False):
        a.twin, b.twin = b, a
    Schema.objects.bulk_update(schemas, ["twin"])
    Reason.objects.bulk_create(
        ReasonFactory.build(schema=s, position=0, import_batch=batch, label="positive") for s in schemas
    )
    ComVEItem.objects.bulk_create(ComVEItemFactory.build_batch(n, import_batch=batch))
    for i in range(min(n, 50)):
        ImportBatch.objects.create(format="comve", files=[{"name": f"f{i}.csv"}])


def queries_for(client, url: str) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200
    return len(ctx.captured_queries)


@pytest.mark.parametrize("name", sorted(CHANGELISTS))
def test_changelist_query_count_does_not_grow_with_rows(
    admin_client, name: str, django_assert_max_num_queries
):
    make_rows(30)
    small = queries_for(admin_client, CHANGELISTS[name])
    make_rows(300)  # 330 rows now: a full page of 100 on the changelist
    with django_assert_max_num_queries(small):
        response = admin_client.get(CHANGELISTS[name])
    assert response.status_code == 200


def test_changelists_show_labels_and_filter(admin_client):
    make_rows(4)
    first = Schema.objects.first()
    assert first is not None
    Schema.objects.filter(external_id=first.external_id).update(switchable=True)
    response = admin_client.get("/admin/datasets/schema/?switchable__exact=1")
    assert response.status_code == 200
    assert response.context["cl"].result_count == 1
    response = admin_client.get("/admin/datasets/reason/?label__exact=positive&origin__exact=human")
    assert response.context["cl"].result_count == 4
    response = admin_client.get("/admin/datasets/comveitem/?split__exact=test&q=elephant")
    assert response.context["cl"].result_count == 4
    response = admin_client.get("/admin/datasets/schema/?knowledge_type=Spatial")
    assert response.context["cl"].result_count == 0


def test_admin_is_for_staff_only(client, annotator, researcher, curator):
    for user in (annotator, researcher, curator):
        client.force_login(user)
        response = client.get(CHANGELISTS["schema"])
        assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_curators_get_admin_access_with_the_grant(client, curator, annotator):
    assert curator_admin_access_grant(users=[curator]) >= 16
    curator.refresh_from_db()
    client.force_login(curator)
    for url in CHANGELISTS.values():
        assert client.get(url).status_code == 200
    # annotators are not curators: no staff flag, no way in
    client.force_login(annotator)
    assert client.get(CHANGELISTS["schema"]).status_code == 302


def test_import_batches_cannot_be_added_by_hand(admin_client):
    assert admin_client.get("/admin/datasets/importbatch/add/").status_code == 403


def test_release_parts_are_shown_to_curators_but_never_written_in_the_admin(rf, curator):
    # a curator who also holds every model permission: only the admin classes say no
    curator.is_superuser = curator.is_staff = True
    curator.save()
    from django.contrib import admin as django_admin

    from releases.admin import ReleaseFileInline
    from releases.models import Release, ReleaseFile, ReleaseItem

    request = rf.get("/admin/")
    request.user = curator
    inline = ReleaseFileInline(Release, django_admin.site)
    for model_admin in (django_admin.site._registry[ReleaseItem], django_admin.site._registry[ReleaseFile]):
        assert model_admin.has_view_permission(request)
    for model_admin in (django_admin.site._registry[ReleaseItem], django_admin.site._registry[ReleaseFile]):
        assert not model_admin.has_add_permission(request)
        assert not model_admin.has_change_permission(request, None)
        assert not model_admin.has_delete_permission(request, None)
    assert not inline.has_add_permission(request, None)
    assert not inline.has_change_permission(request, None)
    assert not inline.has_delete_permission(request, None)
