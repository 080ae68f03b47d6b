"""Audits as an API (DRF, in the OpenAPI schema): the list, and one audit's status and
results (its tables as the page's frames, as records). The pages' rules: curators see
every audit, researchers those of published releases."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.tables import frame_records
from evaluation.audit import selectors
from evaluation.audit.permissions import SeesAudits
from evaluation.models import Audit, AuditStatus


class AuditOutput(serializers.ModelSerializer):
    filtered_release = serializers.SerializerMethodField()

    class Meta:
        model = Audit
        fields = [
            "id",
            "source_label",
            "dataset",
            "model_name",
            "model_sha256",
            "params",
            "status",
            "texts_total",
            "texts_done",
            "texts_cached",
            "chunks_total",
            "error",
            "created_at",
            "finished_at",
            "filtered_release",
        ]

    def get_filtered_release(self, audit: Audit) -> str | None:
        release = audit.filtered_release
        return f"{release.name}@{release.version}" if release else None


class AuditListApi(APIView):
    """The audits the user may see, newest first."""

    permission_classes = [SeesAudits]

    @extend_schema(responses=AuditOutput(many=True))
    def get(self, request: Request) -> Response:
        return Response(AuditOutput(selectors.audit_list(user=request.user)[:200], many=True).data)


class AuditDetailApi(APIView):
    """One audit: its settings and progress, and once done its tables (baselines, AfLite
    per iteration, cartography regions, associativity on Winograd, and per item)."""

    permission_classes = [SeesAudits]

    @extend_schema(responses=AuditOutput)
    def get(self, request: Request, audit_id: int) -> Response:
        audit = selectors.audit_get(user=request.user, audit_id=audit_id)
        body: dict[str, Any] = dict(AuditOutput(audit).data)
        if audit.status == AuditStatus.DONE:
            body["tables"] = {
                name: frame_records(frame_of(audit))
                for name, (_title, frame_of) in selectors.AUDIT_TABLES.items()
            }
        return Response(body)
