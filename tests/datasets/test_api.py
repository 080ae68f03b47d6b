"""Read-only item API: who may read it, filters, and a valid OpenAPI schema."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from tests.datasets.factories import ComVEItemFactory, ReasonFactory, SchemaFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def items() -> dict[str, int]:
    a = SchemaFactory.create(
        collection="wsc273", switchable=True, associative=False, knowledge_types=["Spatial"]
    )
    b = SchemaFactory.create(collection="wsc273", switchable=False, answer="B", twin=a)
    a.twin = b
    a.save()
    SchemaFactory.create(collection="demo")
    ReasonFactory.create(schema=a, position=0, label="positive", origin="human")
    ReasonFactory.create(schema=a, position=1, label="negative", origin="generated")
    ReasonFactory.create(schema=b, position=0, label="acceptable", origin="reverse")
    dev = ComVEItemFactory.create(split="dev")
    ComVEItemFactory.create(split="train")
    ComVEItemFactory.create(dataset="senmaking", split="pilot", has_c=False)
    reason = a.reasons.first()
    assert reason is not None
    return {"schema": a.pk, "reason": reason.pk, "comve": dev.pk}


def endpoints(ids: dict[str, int]) -> list[str]:
    return [
        "/api/schemas/",
        f"/api/schemas/{ids['schema']}/",
        "/api/reasons/",
        f"/api/reasons/{ids['reason']}/",
        "/api/comve-items/",
        f"/api/comve-items/{ids['comve']}/",
        "/api/summary/",
    ]


def test_anonymous_users_are_refused_everywhere(client, items):
    for url in endpoints(items):
        assert client.get(url).status_code == 403, url


@pytest.mark.parametrize("role", ["annotator", "researcher", "nobody"])
def test_annotators_researchers_and_users_without_a_role_get_403_on_the_bulk_item_api(
    client, request, items, role
):
    client.force_login(request.getfixturevalue(role))
    for url in endpoints(items):
        response = client.get(url)
        assert response.status_code == 403, url
        assert b"statement_0" not in response.content and b"text_before" not in response.content


@pytest.mark.parametrize("role", ["curator", "admin_user"])
def test_curators_and_admins_read_every_endpoint(client, request, items, role):
    client.force_login(request.getfixturevalue(role))
    for url in endpoints(items):
        assert client.get(url).status_code == 200, url


def test_writes_are_not_allowed_even_for_curators(client, curator, items):
    client.force_login(curator)
    assert client.post("/api/schemas/", {}).status_code == 405
    assert client.delete(f"/api/schemas/{items['schema']}/").status_code == 405


def test_schema_detail_nests_reasons_and_names_the_twin(client, curator, items):
    client.force_login(curator)
    data = client.get(f"/api/schemas/{items['schema']}/").json()
    assert [r["label"] for r in data["reasons"]] == ["positive", "negative"]
    assert data["twin_external_id"] is not None
    assert data["knowledge_types"] == ["Spatial"]
    assert set(data) >= {"source_file", "source_row", "file_checksum", "import_batch"}


def test_filters_narrow_the_lists(client, curator, items):
    client.force_login(curator)

    def count(url: str) -> int:
        response = client.get(url)
        assert response.status_code == 200, response.content
        return response.json()["count"]

    assert count("/api/schemas/") == 3
    assert count("/api/schemas/?collection=wsc273") == 2
    assert count("/api/schemas/?switchable=true") == 1
    assert count("/api/schemas/?switchable=false&answer=B") == 1
    assert count("/api/schemas/?knowledge_type=Spatial") == 1
    assert count("/api/reasons/?label=positive") == 1
    assert count("/api/reasons/?origin=reverse") == 1
    assert count(f"/api/reasons/?schema={items['schema']}") == 2
    assert count("/api/comve-items/?split=dev") == 1
    assert count("/api/comve-items/?dataset=senmaking") == 1
    assert count("/api/comve-items/?subtask=c") == 2


def test_bad_filter_values_are_a_400_naming_the_parameter(client, curator, items):
    client.force_login(curator)
    response = client.get("/api/comve-items/?split=validation")
    assert response.status_code == 400
    assert "split" in response.json()
    assert client.get("/api/reasons/?label=maybe").status_code == 400


def test_missing_item_is_404(client, curator, items):
    client.force_login(curator)
    assert client.get("/api/schemas/999999/").status_code == 404


def test_list_pages_cost_a_constant_number_of_queries(client, curator, items, django_assert_max_num_queries):
    client.force_login(curator)
    for _ in range(40):
        ReasonFactory.create(schema=SchemaFactory.create(twin=None))
    with django_assert_max_num_queries(8):
        assert client.get("/api/reasons/").status_code == 200
    with django_assert_max_num_queries(8):
        assert client.get("/api/schemas/").status_code == 200


def test_openapi_schema_is_valid_without_warnings(tmp_path):
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))
    text = (tmp_path / "schema.yaml").read_text()
    assert "/api/schemas/{id}/" in text and "/api/comve-items/" in text
