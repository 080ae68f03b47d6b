"""Domain errors: one root (WinnowError), and one place each that turns them into a page,
an htmx fragment or an API response with the error's message and status."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
from django.http import HttpRequest, HttpResponse
from django.urls import path
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

import config.urls
from core.errors import Conflict, Forbidden, NotFound, WinnowError
from releases.errors import ReleaseIntegrityError, ReleaseValidationError

pytestmark = [pytest.mark.django_db, pytest.mark.urls(__name__)]

ERRORS: dict[str, WinnowError] = {
    "conflict": Conflict("Release wsc@1.0.0 is published: it cannot change."),
    "forbidden": Forbidden("Only curators may publish."),
    "missing": NotFound("No run #7 here."),
    "validation": ReleaseValidationError("'1.0' is not a version: use MAJOR.MINOR.PATCH."),
    "integrity": ReleaseIntegrityError("wsc@1.0.0/wsc.jsonl: the bytes no longer match"),
    "markup": WinnowError("<script>alert(1)</script> is not a name"),
}


def raising_view(request: HttpRequest, kind: str) -> HttpResponse:
    raise ERRORS[kind]


def failing_view(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("a bug, not a refusal")


class RaisingApi(APIView):
    permission_classes = [AllowAny]

    def get(self, request: Request, kind: str) -> Response:
        raise ERRORS[kind]


urlpatterns = [
    path("raise/<str:kind>/", raising_view),
    path("fail/", failing_view),
    path("api/raise/<str:kind>/", RaisingApi.as_view()),
    *config.urls.urlpatterns,  # the top bar links to them
]


@pytest.mark.parametrize(
    ("kind", "status", "title"),
    [
        ("conflict", 409, "Cannot do that now"),
        ("forbidden", 403, "Not allowed"),
        ("missing", 404, "Not found"),
        ("validation", 400, "Cannot do that"),
        ("integrity", 409, "Cannot do that now"),
    ],
)
def test_a_domain_error_in_a_view_is_a_page_with_its_status_and_message(client, curator, kind, status, title):
    client.force_login(curator)
    response = client.get(f"/raise/{kind}/")
    assert response.status_code == status
    html = response.content.decode()
    assert f"<title>{title} · Winnow</title>" in html
    assert ERRORS[kind].message.replace("'", "&#x27;") in html
    assert 'class="topbar"' in html and 'href="/"' in html


def test_an_htmx_request_gets_the_message_as_a_fragment_htmx_will_swap(client, curator):
    client.force_login(curator)
    response = client.get("/raise/conflict/", headers={"HX-Request": "true"})
    assert response.status_code == 200  # htmx swaps only 2xx responses
    assert response["X-Winnow-Status"] == "409"
    html = response.content.decode().strip()
    assert html == (
        '<div class="errors" role="alert"><p class="error-message">'
        "Release wsc@1.0.0 is published: it cannot change.</p></div>"
    )


def test_the_message_is_escaped_on_the_page_and_in_the_fragment(client, curator):
    client.force_login(curator)
    for headers in ({}, {"HX-Request": "true"}):
        html = client.get("/raise/markup/", headers=headers).content.decode()
        assert "<script>alert" not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt; is not a name" in html


def test_other_exceptions_are_left_to_django(client, curator):
    client.force_login(curator)
    with pytest.raises(RuntimeError, match="a bug"):
        client.get("/fail/")
    client.raise_request_exception = False
    assert client.get("/fail/").status_code == 500


@pytest.mark.parametrize(
    ("kind", "status"),
    [("conflict", 409), ("forbidden", 403), ("missing", 404), ("validation", 400), ("integrity", 409)],
)
def test_a_domain_error_in_an_api_view_is_its_detail_and_status(client, kind, status):
    response = client.get(f"/api/raise/{kind}/")
    assert response.status_code == status
    assert response.json() == {"detail": ERRORS[kind].message}


def test_the_api_keeps_drf_answers_for_drf_errors(client):
    # config.urls' own API (the handler is the project's): anonymous is still a 403 detail
    response = client.get("/api/releases/")
    assert response.status_code == 403
    assert set(response.json()) == {"detail"}


# --- one root ---------------------------------------------------------------------------

APPS = ("core", "datasets", "annotation", "releases", "evaluation")


def _project_exception_classes() -> set[type[BaseException]]:
    classes: set[type[BaseException]] = set()
    for app in APPS:
        package = importlib.import_module(app)
        names = [app] + [m.name for m in pkgutil.walk_packages(package.__path__, app + ".")]
        for name in names:
            if ".migrations" in name:
                continue
            module = importlib.import_module(name)
            for obj in vars(module).values():
                if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == name:
                    classes.add(obj)
    return classes


def test_every_domain_error_in_the_project_derives_from_winnow_error() -> None:
    classes = _project_exception_classes()
    names = {c.__name__ for c in classes}
    # The walk reaches every app (a broken walk would pass vacuously).
    assert {"ReleaseIntegrityError", "DatasetImportError", "ModelLoadError", "UndefinedAgreement"} <= names
    assert {"JudgmentRefused", "AnswerError", "VotesImportError"} <= names
    strays = {f"{c.__module__}.{c.__qualname__}" for c in classes if not issubclass(c, WinnowError)}
    assert strays == set()


def test_every_domain_error_answers_a_client_error_status() -> None:
    for cls in _project_exception_classes():
        if issubclass(cls, WinnowError):
            assert 400 <= cls.status < 500, cls


def test_there_is_one_model_load_error() -> None:
    from evaluation.cloze import candidates
    from evaluation.lm.modeling import ModelLoadError

    assert candidates.ModelLoadError is ModelLoadError
    assert issubclass(ModelLoadError, ValueError) and ModelLoadError("x").status == 400
