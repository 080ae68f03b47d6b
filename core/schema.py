"""The OpenAPI schema's operations with the error answers every API view can give
(``REST_FRAMEWORK["DEFAULT_SCHEMA_CLASS"]``).

drf-spectacular documents the success of an operation and what a view declares with
``extend_schema``; the refusals DRF and ``core.api.exception_handler`` give everywhere are
added here, for the operations that can give them, so a client (and schemathesis, in
tests/test_openapi_fuzz.py) finds every status code the API answers:

- 400 where the operation reads a body or query parameters (``{field: [message]}`` or
  ``{"detail": message}``);
- 403 where it needs a signed-in caller (no credentials, bad credentials, or a role the
  view refuses: ``{"detail": message}``);
- 404 where a path parameter names an object, or a ``page`` goes past the last one.

What a view already documents for a code is kept.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema

BIGINT_MAX = 2**63 - 1
DETAIL = {
    "type": "object",
    "properties": {"detail": {"type": "string", "description": "What went wrong, in words a user reads"}},
    "required": ["detail"],
}
FIELD_ERRORS = {
    "type": "object",
    "description": "{field: [message, ...]} (non_field_errors for the whole input), or {detail: message}",
    "additionalProperties": True,
}


def _answer(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


class AutoSchema(SpectacularAutoSchema):
    def get_operation(self, *args: Any, **kwargs: Any) -> Any:
        operation = super().get_operation(*args, **kwargs)
        if not operation:
            return operation
        parameters = operation.get("parameters", [])
        for parameter in parameters:  # an id past PostgreSQL's bigint names nothing that can exist
            schema = parameter.get("schema", {})
            if schema.get("type") == "integer":
                schema.setdefault("maximum", BIGINT_MAX)
        responses = operation.setdefault("responses", {})
        if "requestBody" in operation or any(p.get("in") == "query" for p in parameters):
            responses.setdefault("400", _answer("The input is refused; the answer says why", FIELD_ERRORS))
        if {} not in operation.get("security", [{}]):
            responses.setdefault("403", _answer("Not signed in, or not allowed", DETAIL))
        if any(p.get("in") == "path" for p in parameters) or any(p.get("name") == "page" for p in parameters):
            responses.setdefault("404", _answer("No such object (or page) for this caller", DETAIL))
        return operation
