from __future__ import annotations

import tempfile
from pathlib import Path

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from core.roles import role_required
from core.uploads import refused_uploads, upload_name
from datasets.forms import ImportUploadForm
from datasets.permissions import user_can_import
from datasets.services import DatasetImportError, ImportResult, dataset_import

#: Template files of the formats for a curator's own items (static/import-templates/).
TEMPLATES = [
    ("Winograd schemas", "schemas"),
    ("Reasons", "reasons"),
    ("ComVE items", "comve-items"),
]


#: What can be started on a collection just imported, by import format: the pipeline kind
#: and the kind of campaign items.
_NEXT = {
    "schemas": ("winowhy", "schemas"),
    "winowhy": ("winowhy", "schemas"),
    "comve-items": ("comve", "comve"),
}


def _next_step(form: ImportUploadForm, result: ImportResult | None) -> dict[str, str] | None:
    """The import result's next action: a pipeline or a campaign on the collection just
    imported (an import that wrote, into a named collection, of a format a pipeline takes)."""
    if result is None or result.dry_run or not form.is_valid():
        return None
    collection = form.cleaned_data.get("collection") or ""
    kind = _NEXT.get(form.cleaned_data.get("format") or "")
    if not collection or kind is None:
        return None
    return {"collection": collection, "pipeline": kind[0], "items": kind[1]}


@role_required(user_can_import, "Importing data sets is for curators.")
def import_upload(request: HttpRequest) -> HttpResponse:
    """Curators upload the files of one data set; the same import service as the command
    line runs on them. The page and its htmx fragment (the result) come from one template."""
    posted = request.method == "POST"
    form = (
        ImportUploadForm(request.POST, request.FILES, refused_uploads=refused_uploads(request))
        if posted
        else ImportUploadForm()
    )
    result: ImportResult | None = None
    error: DatasetImportError | None = None
    status = 200
    if posted:
        if form.is_valid():
            options: dict[str, object] = {
                "uploaded": True,
                "dry_run": request.POST.get("action") == "preview",
            }
            if form.cleaned_data["collection"]:
                options["collection"] = form.cleaned_data["collection"]
                options["collection_card"] = form.collection_card()
            if form.cleaned_data["split"]:
                options["split"] = form.cleaned_data["split"]
            # Files keep their own names (ComVE's split comes from them) in a folder of their own.
            with tempfile.TemporaryDirectory(prefix="winnow-upload-") as folder:
                paths = []
                for upload in form.cleaned_data["uploads"]:
                    path = Path(folder) / upload_name(upload.name or "")
                    with path.open("wb") as out:
                        for chunk in upload.chunks():
                            out.write(chunk)
                    paths.append(path)
                try:
                    result = dataset_import(
                        format=form.cleaned_data["format"], paths=paths, options=options, user=request.user
                    )
                except DatasetImportError as exc:  # shown beside the form, which stays filled in
                    error = exc
                    status = exc.status
        else:
            status = 413 if form.too_large else 400
    counts = list(result.counts.items()) if result else []
    context = {
        "next_step": _next_step(form, result),
        "form": form,
        "result": result,
        "counts": counts,
        "error": error,
        "sample_columns": list(result.sample[0]) if result and result.sample else [],
        "templates": TEMPLATES,
    }
    if getattr(request, "htmx", False):  # set by django_htmx's middleware
        # htmx swaps only 2xx responses: the error fragment comes back as 200.
        return render(request, "datasets/import_upload.html#result", context)
    return render(request, "datasets/import_upload.html", context, status=status)
