"""The OpenAPI schema as the API tests read it."""

from typing import Any


def schema_paths_having(api: Any, user: Any, expected: dict[str, set[str]]) -> dict[str, Any]:
    """The schema's paths as ``user`` gets them from /api/schema/, after asserting that
    each ``expected`` path is there with at least its methods."""
    api.force_authenticate(user)
    paths = api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()["paths"]
    for path, methods in expected.items():
        assert path in paths, path
        assert methods <= set(paths[path]), path
    return paths
