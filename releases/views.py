"""Release pages: the list, one release (card, diff, files, build progress), downloads."""

from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import render
from django.utils.safestring import mark_safe

from core.roles import user_roles
from releases import selectors, services
from releases.card_html import card_html
from releases.errors import ReleaseIntegrityError
from releases.exports import JSONL_CONFIGS
from releases.models import BuildStatus, Release, ReleaseStatus
from releases.permissions import user_can_approve_release, user_can_publish_release


def _require_role(request: HttpRequest) -> None:
    if not user_roles(request.user):
        raise PermissionDenied("releases are for accounts with a role")


@login_required
def release_list(request: HttpRequest) -> HttpResponse:
    _require_role(request)
    releases = selectors.release_list(user=request.user, dataset=request.GET.get("dataset", ""))
    return render(request, "releases/release_list.html", {"releases": releases})


@login_required
def release_detail(request: HttpRequest, name: str, version: str) -> HttpResponse:
    _require_role(request)
    release = selectors.release_get(user=request.user, name=name, version=version)
    context = {
        "release": release,
        "files": release.files.all(),
        "building": release.build_status in (BuildStatus.QUEUED, BuildStatus.RUNNING),
        # The one text a page shows as HTML: markdown-it with raw HTML off escapes every
        # character of the card itself (releases.card_html; tests/releases/test_bundle.py).
        "card": mark_safe(card_html(_card_text(release))),  # noqa: S308
        "bundle": _bundle(release),
        "configs": JSONL_CONFIGS.get(release.dataset, ()),
        "can_approve": user_can_approve_release(user=request.user, release=release),
        "can_publish": user_can_publish_release(user=request.user, release=release),
    }
    template = "releases/release_detail.html"
    if getattr(request, "htmx", False):  # django-htmx middleware
        template += "#build-status"
    return render(request, template, context)


def _bundle(release: Release) -> dict[str, Any] | None:
    """The one-file download of a published release (built on first view), or None."""
    if release.status != ReleaseStatus.PUBLISHED or release.build_status != BuildStatus.DONE:
        return None
    try:
        path, digest = services.release_bundle(release)
    except ReleaseIntegrityError as error:
        return {"error": str(error)}
    return {"name": path.name, "size": path.stat().st_size, "sha256": digest, "folder": path.stem}


@login_required
def release_bundle_download(request: HttpRequest, name: str, version: str) -> HttpResponseBase:
    """The whole published release as one zip: exactly its manifest's files and the manifest."""
    _require_role(request)
    release = selectors.release_get(user=request.user, name=name, version=version)
    path, digest = services.release_bundle(release)  # ReleaseStateError / IntegrityError: a page
    response = FileResponse(path.open("rb"), as_attachment=True, filename=path.name)
    response["X-Checksum-SHA256"] = digest
    return response


def _card_text(release: Release) -> str:
    readme = release.files.filter(name="README.md").first()
    if readme is None:
        return ""
    try:
        path = selectors.release_file_verified_path(release_file=readme)
    except ReleaseIntegrityError as error:
        return f"(card unavailable: {error})"
    return path.read_text(encoding="utf-8")


@login_required
def release_download(request: HttpRequest, name: str, version: str, file_name: str) -> HttpResponseBase:
    _require_role(request)
    release = selectors.release_get(user=request.user, name=name, version=version)
    release_file = selectors.release_file_get(user=request.user, release=release, file_name=file_name)
    # A file that no longer matches its manifest raises ReleaseIntegrityError: a 409 page
    # (core.web.DomainErrorMiddleware), logged by the selector.
    handle = selectors.release_file_open_verified(release_file=release_file)
    response = FileResponse(handle, as_attachment=True, filename=release_file.name)
    response["X-Checksum-SHA256"] = release_file.sha256
    return response


@login_required
def release_item(request: HttpRequest, name: str, version: str, item_id: str) -> HttpResponse:
    """One item of a release as it was frozen (the comparison of two runs links here)."""
    _require_role(request)
    release = selectors.release_get(user=request.user, name=name, version=version)
    item = selectors.release_item_get(release=release, item_id=item_id)
    return render(request, "releases/release_item.html", {"release": release, "item": item})
