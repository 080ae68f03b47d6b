"""Cloze analyses as an API (DRF, in the OpenAPI schema): list, detail, start. The same
rules as the cloze pages: researchers only (``IsClozeResearcher``), the page's form
validates a start (``ClozeStartForm``: a published ComVE or Sen-Making release and a model
of the registry, by name), the page's service queues it, and the job is sent to a worker
once the run's row is committed."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_view
from rest_framework import generics, serializers
from rest_framework.request import Request
from rest_framework.response import Response

from core.api import form_create, form_input
from core.tables import frame_records
from evaluation.api import FIELD_ERRORS, page_url
from evaluation.cloze.permissions import IsClozeResearcher
from evaluation.cloze.selectors import cloze_run_get, cloze_run_list
from evaluation.cloze.services import ClozeError, cloze_run_queue
from evaluation.cloze.tables import TABLES, cloze_tables
from evaluation.forms import ClozeStartForm
from evaluation.models import ClozeRun
from evaluation.selectors import model_list, published_release_list
from evaluation.tasks import cloze_run_enqueue


class ClozeRunOutput(serializers.ModelSerializer):
    model = serializers.CharField(source="model_label", read_only=True, help_text="The model's registry name")
    url = serializers.SerializerMethodField(help_text="The run's page")

    class Meta:
        model = ClozeRun
        # no paths on the server (model, output folder, word vectors) and no user
        fields = [
            "id",
            "url",
            "release",
            "model",
            "model_name",
            "model_kind",
            "method",
            "settings",
            "status",
            "error",
            "seconds",
            "created_at",
            "finished_at",
        ]
        read_only_fields = fields

    def get_url(self, run: ClozeRun) -> str:
        return page_url(self.context["request"], "cloze:run-detail", run.pk)


class ClozeTableOutput(serializers.Serializer):
    title = serializers.CharField()
    rows = serializers.ListField(child=serializers.DictField())


class ClozeRunDetailOutput(ClozeRunOutput):
    tables = serializers.SerializerMethodField(help_text="The run page's tables, by name (once done)")

    class Meta(ClozeRunOutput.Meta):
        fields = [*ClozeRunOutput.Meta.fields, "tables"]
        read_only_fields = fields

    @extend_schema_field(serializers.DictField(child=ClozeTableOutput()))
    def get_tables(self, run: ClozeRun) -> dict[str, dict[str, Any]]:
        if not run.results:
            return {}
        return {
            name: {"title": TABLES[name][0], "rows": frame_records(frame)}
            for name, frame in cloze_tables(run.results).items()
        }


class ClozeStartInput(serializers.Serializer):
    """The cloze form's fields (the form itself validates them, as on the page)."""

    release = serializers.CharField(help_text="NAME@VERSION of a published ComVE or Sen-Making release")
    model = serializers.CharField(help_text="A name from /api/evaluation/models/")
    limit = serializers.IntegerField(required=False, min_value=1, help_text="Statements for experiment 1")
    pairs = serializers.IntegerField(required=False, min_value=1, help_text="Pairs for experiment 2")
    k = serializers.IntegerField(min_value=2, max_value=100, help_text="Replacements kept per masked word")
    start_token = serializers.CharField(required=False, help_text="Causal LMs: bos (default), eos, ...")


@extend_schema_view(get=extend_schema(description="Cloze runs, newest first."))
class ClozeRunListApi(generics.ListAPIView):
    """GET: cloze runs, newest first. POST: start one (queued; a worker runs it)."""

    permission_classes = [IsClozeResearcher]
    serializer_class = ClozeRunOutput

    def get_queryset(self) -> Any:
        return cloze_run_list(user=self.request.user)

    @extend_schema(
        request=ClozeStartInput,
        responses={201: ClozeRunOutput, 400: FIELD_ERRORS},
        operation_id="evaluation_cloze_runs_start",
        description="Start a cloze run, validated as the cloze form: 201 with the queued run.",
    )
    def post(self, request: Request) -> Response:
        form = ClozeStartForm(
            form_input(ClozeStartForm, request.data),
            releases=published_release_list(datasets=("comve", "senmaking")),
            models=model_list(),
        )
        return form_create(
            request,
            form,
            create=lambda: cloze_run_queue(**form.service_kwargs(), user=request.user),
            refused=ClozeError,
            output=ClozeRunOutput,
            after_commit=lambda run: cloze_run_enqueue(run_id=run.pk),
        )


class ClozeRunDetailApi(generics.RetrieveAPIView):
    """One cloze run: its status, settings and, once done, the tables of its page."""

    permission_classes = [IsClozeResearcher]
    serializer_class = ClozeRunDetailOutput

    def get_object(self) -> ClozeRun:
        return cloze_run_get(user=self.request.user, pk=self.kwargs["pk"])
