"""Upload size limits, enforced while a request is read (settings.WINNOW_MAX_UPLOAD_MB).

``SizeLimitUploadHandler`` stands first in ``FILE_UPLOAD_HANDLERS``: it counts each file's
bytes as the chunks arrive and, past the limit, skips the rest of that file. Django then
closes the file the next handler was writing (a temporary file, deleted on close) and
reads on past the skipped bytes without keeping them, so an upload of any size costs one
chunk of memory and nothing on disk. The refused file's name is kept on the request:
``refused_uploads(request)`` gives the forms what to say ("NAME is larger than the
upload limit of N MB"); the form is then invalid and nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from django import forms
from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler, SkipFile
from django.http import HttpRequest

REFUSED_ATTRIBUTE = "winnow_refused_uploads"


def upload_name(name: str) -> str:
    """The file's own name, without any folder part a browser may send."""
    return PurePath(name.replace("\\", "/")).name


def upload_limit_bytes() -> int:
    return int(settings.WINNOW_MAX_UPLOAD_MB) * 1024 * 1024


@dataclass(frozen=True)
class RefusedUpload:
    field: str
    name: str  # the file's own name, as the browser sent it (no folder part)
    limit_mb: int

    @property
    def message(self) -> str:
        return f"{self.name} is larger than the upload limit of {self.limit_mb} MB; it was not kept."


class SizeLimitUploadHandler(FileUploadHandler):
    """Drops a file once more than WINNOW_MAX_UPLOAD_MB of it has arrived."""

    def new_file(self, field_name: str, file_name: str, *args: Any, **kwargs: Any) -> None:
        super().new_file(field_name, file_name, *args, **kwargs)
        self.received = 0
        self.limit = upload_limit_bytes()

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self.received += len(raw_data)
        if self.received > self.limit:
            refused = getattr(self.request, REFUSED_ATTRIBUTE, None)
            if refused is None:
                refused = []
                setattr(self.request, REFUSED_ATTRIBUTE, refused)
            name = upload_name(str(self.file_name or "")) or "the file"
            refused.append(RefusedUpload(str(self.field_name), name, int(settings.WINNOW_MAX_UPLOAD_MB)))
            raise SkipFile
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None  # the next handler makes the file


def refused_uploads(request: HttpRequest, field: str | None = None) -> list[RefusedUpload]:
    """Files of this request dropped for their size (after request.FILES has been read)."""
    request.FILES  # noqa: B018  # the body is read (and files refused) here at the latest
    refused: list[RefusedUpload] = getattr(request, REFUSED_ATTRIBUTE, None) or []
    return [r for r in refused if field is None or r.field == field]


class LimitedUploadForm(forms.Form):
    """A form whose file fields may have been dropped for their size: it says so on the
    field (the file's name and the limit) instead of "this field is required"."""

    def __init__(self, *args: Any, refused_uploads: list[RefusedUpload] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.refused_uploads = list(refused_uploads or [])
        for refused in self.refused_uploads:
            if refused.field in self.fields:
                self.fields[refused.field].required = False

    @property
    def too_large(self) -> bool:
        return bool(self.refused_uploads)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        for refused in self.refused_uploads:
            self.add_error(refused.field if refused.field in self.fields else None, refused.message)
        return data
