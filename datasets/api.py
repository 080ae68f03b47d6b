"""Read-only API for items (DRF, one view per operation).

Curators, researchers and admins may browse; annotators get 403 (they see only the
item in hand, through the annotation API); anonymous users get 403 as well (session or
basic authentication). Items carry no annotator identity, so researchers see them whole.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from datasets.models import (
    COMVE_CONTENT_FIELDS,
    Answer,
    ComVEDataset,
    ComVEItem,
    ComVESplit,
    KnowledgeType,
    Reason,
    ReasonLabel,
    ReasonOrigin,
    Schema,
)
from datasets.permissions import CanBrowseItems
from datasets.selectors import comve_item_list, dataset_summary, reason_list, schema_list

PROVENANCE_FIELDS = ["source_file", "source_row", "file_checksum", "import_batch"]


class ReasonOutputSerializer(serializers.ModelSerializer):
    schema_external_id = serializers.CharField(source="schema.external_id", read_only=True)

    class Meta:
        model = Reason
        fields = [
            "id",
            "schema",
            "schema_external_id",
            "position",
            "text",
            "origin",
            "plausibility",
            "label",
            "source_label",
            "knowledge_type",
            *PROVENANCE_FIELDS,
        ]


class NestedReasonSerializer(serializers.ModelSerializer):
    class Meta:
        model = Reason
        fields = [
            "id",
            "position",
            "text",
            "origin",
            "plausibility",
            "label",
            "source_label",
            "knowledge_type",
        ]


class SchemaOutputSerializer(serializers.ModelSerializer):
    twin_external_id = serializers.SerializerMethodField()
    knowledge_types = serializers.ListField(child=serializers.CharField(), read_only=True)

    class Meta:
        model = Schema
        fields = [
            "id",
            "collection",
            "external_id",
            "text_before",
            "pronoun",
            "text_after",
            "candidate_a",
            "candidate_b",
            "answer",
            "source",
            "twin",
            "twin_external_id",
            "switched_text",
            "switchable",
            "associative",
            "knowledge_types",
            *PROVENANCE_FIELDS,
        ]

    def get_twin_external_id(self, obj: Schema) -> str | None:
        return obj.twin.external_id if obj.twin else None


class SchemaDetailOutputSerializer(SchemaOutputSerializer):
    reasons = NestedReasonSerializer(many=True, read_only=True)

    class Meta(SchemaOutputSerializer.Meta):
        fields = [*SchemaOutputSerializer.Meta.fields, "reasons"]


class ComVEItemOutputSerializer(serializers.ModelSerializer):
    references = serializers.ListField(child=serializers.CharField(), read_only=True)

    class Meta:
        model = ComVEItem
        fields = [
            "id",
            "dataset",
            "split",
            "external_id",
            *COMVE_CONTENT_FIELDS,
            "needs_rewrite",
            *PROVENANCE_FIELDS,
        ]


class SchemaFilterSerializer(serializers.Serializer):
    collection = serializers.CharField(required=False, help_text="e.g. wsc273")
    switchable = serializers.BooleanField(required=False, allow_null=True, default=None)
    associative = serializers.BooleanField(required=False, allow_null=True, default=None)
    answer = serializers.ChoiceField(choices=Answer.choices, required=False)
    knowledge_type = serializers.ChoiceField(choices=KnowledgeType.choices, required=False)


class ReasonFilterSerializer(serializers.Serializer):
    collection = serializers.CharField(required=False)
    schema = serializers.IntegerField(required=False, help_text="schema id")
    origin = serializers.ChoiceField(choices=ReasonOrigin.choices, required=False)
    label = serializers.ChoiceField(choices=ReasonLabel.choices, required=False)  # type: ignore[assignment]  # the query parameter is called label


class ComVEItemFilterSerializer(serializers.Serializer):
    dataset = serializers.ChoiceField(choices=ComVEDataset.choices, required=False)
    split = serializers.ChoiceField(choices=ComVESplit.choices, required=False)
    subtask = serializers.ChoiceField(choices=[("a", "A"), ("b", "B"), ("c", "C")], required=False)


def _filters(serializer_class: type[serializers.Serializer], request: Request) -> dict[str, Any]:
    """The list's filters; a text or choice filter given empty is a 400, as the schema says
    (minLength 1), not silently no filter."""
    blank = {
        name: ["May not be empty: leave the parameter out for no filter."]
        for name, field in serializer_class().fields.items()
        if isinstance(field, serializers.CharField | serializers.ChoiceField)
        and name in request.query_params
        and not request.query_params[name].strip()
    }
    if blank:
        raise serializers.ValidationError(blank)
    serializer = serializer_class(data=request.query_params)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


PERMISSIONS = [IsAuthenticated, CanBrowseItems]


@extend_schema(parameters=[SchemaFilterSerializer], tags=["items"])
class SchemaListApi(generics.ListAPIView):
    """Winograd schemas, filterable by collection, switchable, associative, answer, knowledge type."""

    permission_classes = PERMISSIONS
    serializer_class = SchemaOutputSerializer

    def get_queryset(self) -> QuerySet[Schema]:
        return schema_list(user=self.request.user, filters=_filters(SchemaFilterSerializer, self.request))


@extend_schema(tags=["items"])
class SchemaDetailApi(generics.RetrieveAPIView):
    """One schema with its WinoWhy reasons."""

    permission_classes = PERMISSIONS
    serializer_class = SchemaDetailOutputSerializer

    def get_object(self) -> Schema:
        return get_object_or_404(
            schema_list(user=self.request.user).prefetch_related("reasons"), pk=self.kwargs["pk"]
        )


@extend_schema(parameters=[ReasonFilterSerializer], tags=["items"])
class ReasonListApi(generics.ListAPIView):
    """WinoWhy reasons, filterable by collection, schema, origin and label."""

    permission_classes = PERMISSIONS
    serializer_class = ReasonOutputSerializer

    def get_queryset(self) -> QuerySet[Reason]:
        return reason_list(user=self.request.user, filters=_filters(ReasonFilterSerializer, self.request))


@extend_schema(tags=["items"])
class ReasonDetailApi(generics.RetrieveAPIView):
    permission_classes = PERMISSIONS
    serializer_class = ReasonOutputSerializer

    def get_object(self) -> Reason:
        return get_object_or_404(reason_list(user=self.request.user), pk=self.kwargs["pk"])


@extend_schema(parameters=[ComVEItemFilterSerializer], tags=["items"])
class ComVEItemListApi(generics.ListAPIView):
    """ComVE and Sen-Making items, filterable by dataset, split and subtask."""

    permission_classes = PERMISSIONS
    serializer_class = ComVEItemOutputSerializer

    def get_queryset(self) -> QuerySet[ComVEItem]:
        return comve_item_list(
            user=self.request.user, filters=_filters(ComVEItemFilterSerializer, self.request)
        )


@extend_schema(tags=["items"])
class ComVEItemDetailApi(generics.RetrieveAPIView):
    permission_classes = PERMISSIONS
    serializer_class = ComVEItemOutputSerializer

    def get_object(self) -> ComVEItem:
        return get_object_or_404(comve_item_list(user=self.request.user), pk=self.kwargs["pk"])


class SummaryOutputSerializer(serializers.Serializer):
    schemas = serializers.DictField(help_text="per collection: schemas, answers, twins, labels, reasons")
    comve = serializers.DictField(help_text="per dataset and split: items and subtasks")


@extend_schema(responses=SummaryOutputSerializer, tags=["items"])
class DatasetSummaryApi(APIView):
    """The counts of ``manage.py dataset_summary --json``."""

    permission_classes = PERMISSIONS

    def get(self, request: Request) -> Response:
        return Response(dataset_summary())
