"""Evaluation as an API (DRF, in the OpenAPI schema): the server's models, runs (list,
detail, start) and leaderboards. The same rules as the pages: researchers and curators
(``IsEvaluator``), the page's form validates a start (``RunStartForm``: a published
release, a model of the registry, by name) and the page's service stores it; the job is
sent to a worker once the run's row is committed."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import form_create, form_input
from core.tables import frame_records
from core.uploads import refused_uploads
from evaluation import selectors
from evaluation.forms import RunStartForm
from evaluation.lm.modeling import NORMALIZATIONS
from evaluation.models import EvaluationRun, Method, RunStatus
from evaluation.permissions import IsEvaluator
from evaluation.runs.create import evaluation_run_start
from evaluation.runs.errors import EvaluationError
from evaluation.tasks import evaluation_run_enqueue

#: A 400's body: the page's messages, keyed by the field they concern.
FIELD_ERRORS = OpenApiResponse(
    description="The form's errors, worded as on the page: {field: [message, ...]}, "
    "non_field_errors for the form's own; a refusal of the run: {detail: message}"
)


def page_url(request: Request, name: str, *args: Any) -> str:
    return request.build_absolute_uri(reverse(name, args=args))


class ModelOutput(serializers.Serializer):
    name = serializers.CharField(help_text="What a run names as its model")
    kind = serializers.CharField(help_text="causal or masked")
    kind_label = serializers.CharField()
    file_format = serializers.CharField(source="format", help_text="gguf or hf")
    size_bytes = serializers.IntegerField()
    start_token = serializers.CharField(allow_null=True, help_text="Causal LMs: the default start token")
    offered_by = serializers.CharField(source="source", help_text="An installed package or the models folder")


class ModelListApi(APIView):
    """The models this server offers (the evaluation form's list): their names, never their paths."""

    permission_classes = [IsEvaluator]

    @extend_schema(responses={200: ModelOutput(many=True)}, operation_id="evaluation_models_list")
    def get(self, request: Request) -> Response:
        return Response(ModelOutput(selectors.model_list(), many=True).data)


class ProgressOutput(serializers.Serializer):
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    percent = serializers.IntegerField()


class RunOutput(serializers.ModelSerializer):
    release = serializers.CharField(source="release_label", read_only=True, help_text="NAME@VERSION")
    model = serializers.CharField(
        source="model_label", read_only=True, help_text="Registry name, file name or baseline"
    )
    model_identity = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()
    url = serializers.SerializerMethodField(help_text="The run's page")

    class Meta:
        model = EvaluationRun
        # no paths on the server (model, predictions, results) and no user: what ran, not where
        fields = [
            "id",
            "url",
            "release",
            "release_name",
            "release_version",
            "dataset",
            "method",
            "model",
            "model_name",
            "model_identity",
            "settings",
            "status",
            "progress",
            "error",
            "metrics",
            "timing",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields

    def get_model_identity(self, run: EvaluationRun) -> dict[str, Any]:
        # as the run page: a registry model by its name, never its place on the server
        return {k: v for k, v in run.model_identity.items() if k != "path"}

    def get_progress(self, run: EvaluationRun) -> dict[str, int]:
        out = ProgressOutput(
            {"done": run.progress_done, "total": run.progress_total, "percent": run.progress_percent}
        )
        return dict(out.data)

    def get_url(self, run: EvaluationRun) -> str:
        return page_url(self.context["request"], "evaluation:run-detail", run.pk)


class RunFilterInput(serializers.Serializer):
    release = serializers.CharField(required=False, help_text="NAME@VERSION, or NAME for every version")
    model = serializers.CharField(required=False, help_text="A model's registry name")
    method = serializers.ChoiceField(choices=Method.choices, required=False)
    status = serializers.ChoiceField(choices=RunStatus.choices, required=False)


class RunStartInput(serializers.Serializer):
    """The evaluation form's fields (the form itself validates them, as on the page); a
    predictions file goes as multipart/form-data (RunStartUpload)."""

    release = serializers.CharField(help_text="NAME@VERSION of a published release")
    method = serializers.ChoiceField(choices=Method.choices)
    model = serializers.CharField(
        required=False, help_text="A name from /api/evaluation/models/ (the model methods only)"
    )
    start_token = serializers.CharField(required=False, help_text="bos (default), eos, a token id or text")
    normalization = serializers.ChoiceField(
        choices=NORMALIZATIONS,
        required=False,
        default="exact",
        help_text="Causal LMs: exact (default) or lm-eval (lm-evaluation-harness's float32 numbers)",
    )
    seed = serializers.IntegerField(required=False, min_value=0, default=0)
    limit = serializers.IntegerField(required=False, min_value=1, help_text="Score only the first N items")
    generate_explanations = serializers.BooleanField(required=False, default=False)


class RunStartUpload(RunStartInput):
    predictions = serializers.FileField(required=False, help_text="The method 'predictions' only")


class RunListApi(generics.ListAPIView):
    """GET: runs, newest first, filtered by release, model, method or status.
    POST: start a run (queued; a worker scores it)."""

    permission_classes = [IsEvaluator]
    serializer_class = RunOutput

    @extend_schema(
        parameters=[RunFilterInput],
        operation_id="evaluation_runs_list",
        description="Runs, newest first, filtered by release, model, method or status.",
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> Any:
        query = RunFilterInput(data=self.request.query_params)
        query.is_valid(raise_exception=True)
        return selectors.run_search(user=self.request.user, **query.validated_data)

    @extend_schema(
        request={"application/json": RunStartInput, "multipart/form-data": RunStartUpload},
        responses={201: RunOutput, 400: FIELD_ERRORS, 413: FIELD_ERRORS},
        operation_id="evaluation_runs_start",
        description="Start a run, validated as the evaluation form: 201 with the queued run; "
        "a worker scores it once it is stored (poll its detail).",
    )
    def post(self, request: Request) -> Response:
        form = RunStartForm(
            form_input(RunStartForm, request.data),
            request.FILES,
            refused_uploads=refused_uploads(request._request),
            releases=selectors.published_release_list(),
            models=selectors.model_list(),
        )
        return form_create(
            request,
            form,
            create=lambda: evaluation_run_start(**form.service_kwargs(), created_by=request.user),
            refused=EvaluationError,
            output=RunOutput,
            after_commit=lambda run: evaluation_run_enqueue(run_id=run.pk),
        )


class RunDetailApi(generics.RetrieveAPIView):
    """One run: its status, progress in items, metrics and timing (poll it until done)."""

    permission_classes = [IsEvaluator]
    serializer_class = RunOutput

    def get_object(self) -> EvaluationRun:
        return selectors.run_get(user=self.request.user, run_id=self.kwargs["run_id"])


class LeaderboardOutput(serializers.Serializer):
    release = serializers.CharField(help_text="NAME@VERSION")
    url = serializers.CharField(help_text="The leaderboard's page")
    columns = serializers.ListField(child=serializers.CharField())
    rows = serializers.ListField(
        child=serializers.DictField(), help_text="The page's table: one row per finished run, ranked"
    )


class LeaderboardApi(APIView):
    """The leaderboard of a release: the rows of its page's table (404 for an unknown release)."""

    permission_classes = [IsEvaluator]

    @extend_schema(responses={200: LeaderboardOutput, 404: OpenApiResponse(description="{detail: message}")})
    def get(self, request: Request, name: str, version: str) -> Response:
        board = selectors.leaderboard(user=request.user, release_name=name, release_version=version)
        return Response(
            {
                "release": f"{name}@{version}",
                "url": page_url(request, "evaluation:leaderboard", name, version),
                "columns": list(board.columns),
                "rows": frame_records(board),
            }
        )
