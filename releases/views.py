"""Release pages: the list, one release (card, diff, files, build progress, the steps its
state allows), downloads; for curators: create (previewed first), approve, publish; the
diff between any two versions."""

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from core.roles import role_required, user_in_team
from releases import selectors, services
from releases.card_html import card_html
from releases.errors import (
    ReleaseError,
    ReleaseIntegrityError,
    ReleaseValidationError,
)
from releases.exports import jsonl_configs
from releases.forms import ReleaseCompareForm, ReleaseCreateForm
from releases.models import BuildStatus, Release, ReleaseStatus
from releases.notices import approved_notice, created_notice, published_notice
from releases.permissions import user_can_create_release

TEAM_ONLY = "Releases are for accounts with a role."
CURATORS_ONLY = "Only curators create, approve and publish releases."


@role_required(user_in_team, TEAM_ONLY)
def release_list(request: HttpRequest) -> HttpResponse:
    releases = selectors.release_list(user=request.user, dataset=request.GET.get("dataset", ""))
    return render(request, "releases/release_list.html", {"releases": releases})


@role_required(user_in_team, TEAM_ONLY)
def release_detail(request: HttpRequest, name: str, version: str) -> HttpResponse:
    release = selectors.release_get(user=request.user, name=name, version=version)
    context = {
        "release": release,
        "files": release.files.all(),
        "building": release.build_status in (BuildStatus.QUEUED, BuildStatus.RUNNING),
        # The one text a page shows as HTML: markdown-it with raw HTML off escapes every
        # character of the card itself (releases.card_html; tests/releases/test_bundle.py).
        "card": mark_safe(card_html(_card_text(release))),  # noqa: S308
        "bundle": _bundle(release),
        # the configs its card declares: one per JSONL file with records
        "configs": jsonl_configs(f.name for f in release.files.all() if f.items > 0),
        "actions": _actions(request, release),
        "label_sources": selectors.release_label_source_rows(release),
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


@role_required(user_in_team, TEAM_ONLY)
def release_bundle_download(request: HttpRequest, name: str, version: str) -> HttpResponseBase:
    """The whole published release as one zip: exactly its manifest's files and the manifest."""
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


@role_required(user_in_team, TEAM_ONLY)
def release_download(request: HttpRequest, name: str, version: str, file_name: str) -> HttpResponseBase:
    release = selectors.release_get(user=request.user, name=name, version=version)
    release_file = selectors.release_file_get(user=request.user, release=release, file_name=file_name)
    # A file that no longer matches its manifest raises ReleaseIntegrityError: a 409 page
    # (core.web.DomainErrorMiddleware), logged by the selector.
    handle = selectors.release_file_open_verified(release_file=release_file)
    response = FileResponse(handle, as_attachment=True, filename=release_file.name)
    response["X-Checksum-SHA256"] = release_file.sha256
    return response


def _actions(request: HttpRequest, release: Release) -> dict[str, str | None]:
    """The release's next step for a curator, with why it cannot be taken yet (None: it can)."""
    if not user_can_create_release(user=request.user):
        return {}
    steps = services.release_actions(release=release, user=request.user)
    return {step: (refusal.message if refusal else None) for step, refusal in steps.items()}


@role_required(user_can_create_release, CURATORS_ONLY)
def release_create(request: HttpRequest) -> HttpResponse:
    """Choose the data and a version, see what would be frozen (counts, diff against the
    previous version), then create the draft. Nothing is written before "Create"."""
    collections = selectors.release_collections()
    data = request.POST if request.method == "POST" else None
    chosen = data or request.GET
    options, conflicts = services.label_source_options(
        dataset=chosen.get("dataset", ""),
        split=chosen.get("split", ""),
        collection=chosen.get("collection", ""),
    )
    initial = request.GET.dict()
    if chosen.get("collection"):  # what the collection was given, to keep or change
        initial.update(selectors.collection_card_initial(name=chosen["collection"]))
    form = ReleaseCreateForm(
        data,
        initial=initial or None,
        collections=collections,
        label_options=options,
        label_conflicts=conflicts,
    )
    preview = None
    previewed = ""
    if request.method == "POST" and form.is_valid():
        kwargs = form.service_kwargs()
        creating = request.POST.get("step") == "create"
        try:
            if creating and request.POST.get("previewed") == form.fingerprint():
                release = services.release_create(
                    **kwargs,
                    changelog=form.cleaned_data["changelog"],
                    collection_card=form.collection_card(),
                    user=request.user,
                )
                release.refresh_from_db()  # its build may have run on commit already
                messages.success(request, created_notice(release))
                return redirect("releases:release-detail", name=release.name, version=release.version)
            if creating:
                messages.warning(request, "The fields changed since the preview: check the new preview.")
            preview = services.release_create_preview(**kwargs, user=request.user)
        except ReleaseValidationError as error:
            form.add_error(error.field if error.field in form.fields else None, _sentence(error.message))
        else:
            previewed = form.fingerprint()
    context = {
        "form": form,
        "preview": preview,
        "previewed": previewed,
        "sources": selectors.release_sources(),
        "names": selectors.release_names(user=request.user),
    }
    return render(request, "releases/release_create.html", context, status=400 if form.errors else 200)


def _sentence(message: str) -> str:
    return message[:1].upper() + message[1:] + ("" if message.endswith(".") else ".")


def _take_step(
    request: HttpRequest,
    release: Release,
    step: Callable[..., Release],
    refused: str,
    notice: Callable[[Release], str],
) -> HttpResponse:
    """Take a release's step; say what was done, or why not ("Not approved: ..."); back to its page."""
    try:
        release = step(release=release, user=request.user)
    except ReleaseError as error:
        messages.error(request, _sentence(f"{refused}: {error.message}"))
    else:
        messages.success(request, notice(release))
    return redirect("releases:release-detail", name=release.name, version=release.version)


@role_required(user_can_create_release, CURATORS_ONLY)
@require_POST
def release_approve(request: HttpRequest, name: str, version: str) -> HttpResponse:
    release = selectors.release_get(user=request.user, name=name, version=version)
    return _take_step(request, release, services.release_approve, "Not approved", approved_notice)


@role_required(user_can_create_release, CURATORS_ONLY)
def release_publish(request: HttpRequest, name: str, version: str) -> HttpResponse:
    """GET: the "publishing is final" page, only when the release may be published now;
    POST: publish (the files are checked against the manifest first)."""
    release = selectors.release_get(user=request.user, name=name, version=version)
    if request.method == "POST":
        return _take_step(request, release, services.release_publish, "Not published", published_notice)
    refusal = services.release_publish_refusal(release=release, user=request.user)
    if refusal is not None:
        messages.error(request, _sentence(f"Cannot publish: {refusal.message}"))
        return redirect("releases:release-detail", name=release.name, version=release.version)
    return render(request, "releases/release_publish.html", {"release": release})


@role_required(user_in_team, TEAM_ONLY)
def release_compare(request: HttpRequest, name: str) -> HttpResponse:
    """Any two versions of one release, chosen: the items added, removed and changed, with their text."""
    versions = selectors.release_versions(user=request.user, name=name)
    if not versions:
        raise Http404("no such release")
    query = request.GET.dict()
    if "old" not in query and "new" not in query and len(versions) > 1:
        query = {"old": versions[-2].version, "new": versions[-1].version}
    form = ReleaseCompareForm(query or None, versions=versions)
    diff = None
    if len(versions) < 2:  # nothing to compare: the page says so, whatever was asked
        form = ReleaseCompareForm(None, versions=versions)
    elif form.is_bound and form.is_valid():
        by_version = {r.version: r for r in versions}
        diff = selectors.release_pair_diff(
            old=by_version[form.cleaned_data["old"]], new=by_version[form.cleaned_data["new"]]
        )
    context = {"name": name, "versions": versions, "form": form, "diff": diff}
    return render(request, "releases/release_compare.html", context, status=400 if form.errors else 200)


@role_required(user_in_team, TEAM_ONLY)
def release_item(request: HttpRequest, name: str, version: str, item_id: str) -> HttpResponse:
    """One item of a release as it was frozen (the comparison of two runs links here)."""
    release = selectors.release_get(user=request.user, name=name, version=version)
    item = selectors.release_item_get(release=release, item_id=item_id)
    return render(request, "releases/release_item.html", {"release": release, "item": item})
