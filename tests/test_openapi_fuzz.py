"""schemathesis against the OpenAPI schema (study integrity, item 9): every operation,
called with data generated from its own schema as a curator, answers without a server
error and only with a status code the schema documents. A small budget (a few examples an
operation, derandomized) keeps it within the test command's minutes."""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, Phase, given, settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import content_type_conformance, status_code_conformance

pytestmark = pytest.mark.django_db
EXAMPLES = 6


@pytest.mark.django_db(transaction=True)  # the WSGI calls commit, as a server's would
def test_every_operation_answers_its_documented_codes_and_never_a_server_error(curator) -> None:
    api = APIClient()
    api.force_authenticate(curator)
    raw = api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    schema = schemathesis.openapi.from_dict(raw)
    schema.app = get_wsgi_application()
    headers = {"Authorization": f"Token {Token.objects.create(user=curator).key}"}
    failures: list[str] = []
    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()  # type: ignore[union-attr]  # an Err would be a broken schema, raised here
        operations += 1

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            derandomize=True,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy())
        def call(case: Any) -> None:
            case.call_and_validate(
                headers=headers,
                checks=[not_a_server_error, status_code_conformance, content_type_conformance],
            )

        try:
            call()
        except (
            Exception,
            BaseExceptionGroup,
        ) as error:  # every operation's failure is listed, not only the first
            failures.append(f"{operation.label}: {str(error)[:600]}")
    assert operations > 20
    assert failures == [], "\n\n".join(failures)


def _schema(user: Any) -> dict[str, Any]:
    api = APIClient()
    api.force_authenticate(user)
    return api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()


def test_the_schema_documents_the_refusals_content_types_and_minimums(curator) -> None:
    schema = _schema(curator)
    paths = schema["paths"]
    detail = paths["/api/annotation/campaigns/{name}/"]["get"]["responses"]
    assert {"200", "403", "404"} <= set(detail)
    listing = paths["/api/reasons/"]["get"]["responses"]
    assert {"200", "400", "403", "404"} <= set(listing)  # filters, and a page past the last
    create = paths["/api/annotation/campaigns/"]["post"]
    assert {"400", "403"} <= set(create["responses"])
    fields = schema["components"]["schemas"]["CampaignCreateInput"]["properties"]
    assert fields["k"]["minimum"] == 1 and fields["slots"]["minimum"] == 1
    download = paths["/api/releases/{name}/{version}/files/{file_name}"]["get"]["responses"]
    assert {"text/csv", "application/jsonl", "application/json", "text/markdown"} <= set(
        download["200"]["content"]
    )
    assert {"403", "404", "409"} <= set(download)


@pytest.mark.parametrize("query", ["collection=", "origin=", "collection=%20"])
def test_an_empty_filter_the_schema_forbids_is_refused(curator, query) -> None:
    api = APIClient()
    api.force_authenticate(curator)
    response = api.get(f"/api/reasons/?{query}")
    assert response.status_code == 400
    assert "May not be empty" in str(response.json())


def test_an_api_url_that_names_nothing_answers_json(curator) -> None:
    api = APIClient()
    api.force_authenticate(curator)
    response = api.get("/api/annotation/campaigns/no%2Fsuch/")
    assert response.status_code == 404 and response.json() == {"detail": "Not found."}
