"""The annotator flow as an API: next item, submit, my progress (DRF, in the OpenAPI schema)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import selectors, services
from annotation.forms import answer_from_post
from annotation.models import Assignment, Judgment
from annotation.permissions import IsAnnotator
from annotation.tasks_registry import task_spec


class ItemOutput(serializers.Serializer):
    assignment = serializers.IntegerField(allow_null=True)
    expires_at = serializers.DateTimeField(allow_null=True)
    task = serializers.CharField()
    item = serializers.DictField(allow_null=True, help_text="What the annotator sees (task dependent)")
    choices = serializers.ListField(child=serializers.DictField())
    detail = serializers.CharField(required=False)


def _item_output(campaign: Any, assignment: Assignment | None, detail: str = "") -> dict[str, Any]:
    spec = task_spec(campaign.task)
    out: dict[str, Any] = {
        "assignment": None,
        "expires_at": None,
        "task": campaign.task,
        "item": None,
        "choices": [{"value": c.value, "label": c.label, "key": c.key} for c in spec.choices],
    }
    if assignment is not None:
        assignment = selectors.assignment_for_display(assignment=assignment, campaign=campaign)
        out.update(
            assignment=assignment.pk,
            expires_at=assignment.expires_at,
            item=selectors.item_presentation(item=assignment.campaign_item, task=campaign.task),
        )
    if detail:
        out["detail"] = detail
    return out


class AnnotationNextApi(APIView):
    """Lease the next item of a campaign (or get back the one in hand)."""

    permission_classes = [IsAnnotator]

    @extend_schema(request=None, responses={200: ItemOutput, 409: ItemOutput}, operation_id="annotation_next")
    def post(self, request: Request, name: str) -> Response:
        campaign = selectors.campaign_get(user=request.user, name=name)
        try:
            assignment = services.assignment_next(campaign=campaign, annotator=request.user)
        except services.AssignmentRefused as exc:
            return Response(_item_output(campaign, None, str(exc)), status=status.HTTP_409_CONFLICT)
        detail = "" if assignment else "No more items for you in this campaign."
        return Response(_item_output(campaign, assignment, detail))


class JudgmentInput(serializers.Serializer):
    answer = serializers.CharField(required=False, allow_blank=True, default="")
    text = serializers.CharField(required=False, allow_blank=True, default="")
    option = serializers.CharField(required=False, allow_blank=True)
    payload = serializers.DictField(required=False, help_text="ComVE writing fields")
    duration_ms = serializers.IntegerField(required=False, allow_null=True, min_value=0)


class JudgmentOutput(serializers.Serializer):
    judgment = serializers.IntegerField()
    item = serializers.IntegerField()
    answer = serializers.CharField()
    created = serializers.BooleanField(help_text="False when this repeats an earlier submission")


class JudgmentSubmitApi(APIView):
    """Submit the answer for a leased item. Repeating it records nothing new and returns
    the same judgment."""

    permission_classes = [IsAnnotator]

    @extend_schema(request=JudgmentInput, responses={200: JudgmentOutput, 201: JudgmentOutput})
    def post(self, request: Request, pk: int) -> Response:
        assignment = selectors.assignment_get(user=request.user, pk=pk)
        data = JudgmentInput(data=request.data)
        data.is_valid(raise_exception=True)
        fields: dict[str, Any] = dict(data.validated_data.get("payload") or {})
        for key in ("answer", "text", "option", "duration_ms"):
            if data.validated_data.get(key) not in (None, ""):
                fields[key] = data.validated_data[key]
        # a refusal (400; a lease that ran out: 409) answers through core.api's handler
        result = services.judgment_submit(
            annotator=request.user, assignment=assignment, **answer_from_post(fields)
        )
        return Response(_judgment_output(result.judgment, result.created), status=status.HTTP_200_OK)


def _judgment_output(judgment: Judgment, created: bool) -> dict[str, Any]:
    return {
        "judgment": judgment.pk,
        "item": judgment.campaign_item_id,
        "answer": judgment.answer,
        "created": created,
    }


class ProgressOutput(serializers.Serializer):
    done = serializers.IntegerField()
    remaining = serializers.IntegerField()
    percent = serializers.IntegerField()
    paused = serializers.BooleanField()


class MyProgressApi(APIView):
    """The annotator's own progress in a campaign (never anyone else's answers)."""

    permission_classes = [IsAnnotator]

    @extend_schema(responses={200: ProgressOutput})
    def get(self, request: Request, name: str) -> Response:
        campaign = selectors.campaign_get(user=request.user, name=name)
        p = selectors.my_progress(campaign=campaign, annotator=request.user)
        return Response({"done": p.done, "remaining": p.remaining, "percent": p.percent, "paused": p.paused})
