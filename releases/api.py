"""Read-only release API: list, detail, download. Nothing here writes."""

from pathlib import Path
from typing import Any

from django.http import FileResponse
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import generics, serializers
from rest_framework.request import Request
from rest_framework.views import APIView

from releases import selectors
from releases.models import Release, ReleaseFile
from releases.permissions import HasAnyRole


class ReleaseFileOutputSerializer(serializers.ModelSerializer):
    download_url = serializers.SerializerMethodField()

    class Meta:
        model = ReleaseFile
        fields = ["name", "size", "sha256", "items", "download_url"]

    def get_download_url(self, obj: ReleaseFile) -> str:
        url = reverse("releases-api:release-download", args=[obj.release.name, obj.release.version, obj.name])
        request = self.context.get("request")
        return request.build_absolute_uri(url) if request else url


class ReleaseOutputSerializer(serializers.ModelSerializer):
    files = ReleaseFileOutputSerializer(many=True, read_only=True)

    class Meta:
        model = Release
        # No user fields: researchers see what was released and when, not who.
        fields = [
            "name",
            "version",
            "dataset",
            "split",
            "status",
            "item_count",
            "changelog",
            "previous_version",
            "diff",
            "manifest",
            "agreement_summary",
            "build_status",
            "created_at",
            "approved_at",
            "published_at",
            "files",
        ]
        read_only_fields = fields


@extend_schema_view(
    get=extend_schema(
        parameters=[OpenApiParameter("dataset", str, description="wsc, winowhy, comve or senmaking")],
        description="Published releases (curators also see drafts and approved ones).",
    )
)
class ReleaseListApi(generics.ListAPIView):
    serializer_class = ReleaseOutputSerializer
    permission_classes = [HasAnyRole]

    def get_queryset(self) -> Any:
        return selectors.release_list(
            user=self.request.user, dataset=self.request.query_params.get("dataset", "")
        )


class ReleaseDetailApi(generics.RetrieveAPIView):
    serializer_class = ReleaseOutputSerializer
    permission_classes = [HasAnyRole]

    def get_object(self) -> Release:
        return selectors.release_get(
            user=self.request.user, name=self.kwargs["name"], version=self.kwargs["version"]
        )


#: The content type of each kind of release file (by its suffix; anything else is bytes).
RELEASE_FILE_TYPES = {
    ".csv": "text/csv",
    ".jsonl": "application/jsonl",
    ".json": "application/json",
    ".md": "text/markdown",
}
RELEASE_FILE_DEFAULT_TYPE = "application/octet-stream"


class ReleaseFileDownloadApi(APIView):
    permission_classes = [HasAnyRole]

    @extend_schema(
        responses={
            **{(200, media): bytes for media in (*RELEASE_FILE_TYPES.values(), RELEASE_FILE_DEFAULT_TYPE)},
            409: OpenApiResponse(description="The stored file no longer matches its manifest's checksum"),
        }
    )
    def get(self, request: Request, name: str, version: str, file_name: str) -> Any:
        release = selectors.release_get(user=request.user, name=name, version=version)
        release_file = selectors.release_file_get(user=request.user, release=release, file_name=file_name)
        # A file that no longer matches its manifest: 409 {"detail": ...} (core.api).
        handle = selectors.release_file_open_verified(release_file=release_file)
        content_type = RELEASE_FILE_TYPES.get(Path(release_file.name).suffix, RELEASE_FILE_DEFAULT_TYPE)
        response = FileResponse(
            handle, as_attachment=True, filename=release_file.name, content_type=content_type
        )
        response["X-Checksum-SHA256"] = release_file.sha256
        return response
