"""Annotation as an API (DRF, in the OpenAPI schema): the annotator's flow (next item,
submit, my progress) and the curator's campaigns (create, list, watch, status, aggregate),
with the pages' rules: the campaign form validates a new campaign and the page's services
write."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.http import Http404
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import (
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import generics, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import selectors, services
from annotation.agreement.services import campaign_agreement_summary
from annotation.answers import ITEM_KINDS
from annotation.forms import CampaignCreateForm, answer_from_post
from annotation.models import Assignment, Campaign, CampaignAnnotator, CampaignStatus, Judgment, Task
from annotation.permissions import (
    CampaignListPermission,
    IsAnnotator,
    IsCurator,
    NotStudyParticipant,
    user_can_curate,
)
from annotation.task_types import task_spec
from core.api import form_create, form_input


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

    permission_classes = [IsAnnotator, NotStudyParticipant]

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

    permission_classes = [IsAnnotator, NotStudyParticipant]

    @extend_schema(request=JudgmentInput, responses={200: JudgmentOutput, 201: JudgmentOutput})
    def post(self, request: Request, pk: int) -> Response:
        assignment = selectors.assignment_get(user=request.user, pk=pk)
        # a refusal (400; a lease that ran out: 409) answers through core.api's handler
        result = services.judgment_submit(
            annotator=request.user, assignment=assignment, **_answer_fields(request.data)
        )
        return Response(_judgment_output(result.judgment, result.created), status=status.HTTP_200_OK)


class SkipOutput(serializers.Serializer):
    assignment = serializers.IntegerField()
    item = serializers.IntegerField()
    status = serializers.CharField(help_text="skipped")


class AssignmentSkipApi(APIView):
    """Give the item in hand back unanswered (the page's Skip): its lease ends, the item
    goes back to the others and is not given to this annotator again in the campaign.
    Repeating it is harmless; an answered item cannot be skipped (400)."""

    permission_classes = [IsAnnotator, NotStudyParticipant]

    @extend_schema(request=None, responses={200: SkipOutput})
    def post(self, request: Request, pk: int) -> Response:
        assignment = selectors.assignment_get(user=request.user, pk=pk)
        skipped = services.assignment_skip(annotator=request.user, assignment=assignment)
        return Response(
            {"assignment": skipped.pk, "item": skipped.campaign_item_id, "status": skipped.status}
        )


class ChangeOutput(JudgmentOutput):
    changed = serializers.BooleanField(help_text="False when the answer sent was the one recorded")
    revisions = serializers.IntegerField(help_text="Answers this judgment had before (kept on record)")


class JudgmentChangeApi(APIView):
    """Change the caller's own answer on an item of a campaign while the item is not
    aggregated (the page's Previous and change): the judgment is replaced in place, its
    old answer kept as a revision, never a second judgment. An aggregated item: 409; an
    item the caller did not answer: 404."""

    permission_classes = [IsAnnotator, NotStudyParticipant]

    @extend_schema(request=JudgmentInput, responses={200: ChangeOutput})
    def post(self, request: Request, name: str, item_id: int) -> Response:
        campaign = selectors.campaign_get(user=request.user, name=name)
        judgment = selectors.judgment_own(campaign=campaign, annotator=request.user, item_id=item_id)
        if judgment is None:
            raise Http404("No answer of yours on this item")
        fields = _answer_fields(request.data)
        fields.pop("duration_ms", None)
        result = services.judgment_change(annotator=request.user, item=judgment.campaign_item, **fields)
        body = _judgment_output(result.judgment, created=False)
        body.update(
            changed=result.changed, revisions=selectors.judgment_revisions(judgment=result.judgment).count()
        )
        return Response(body)


def _answer_fields(raw: Any) -> dict[str, Any]:
    """An answer as the API takes it (JudgmentInput), as the services take it."""
    data = JudgmentInput(data=raw)
    data.is_valid(raise_exception=True)
    fields: dict[str, Any] = dict(data.validated_data.get("payload") or {})
    for key in ("answer", "text", "option", "duration_ms"):
        if data.validated_data.get(key) not in (None, ""):
            fields[key] = data.validated_data[key]
    return answer_from_post(fields)


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

    permission_classes = [IsAnnotator, NotStudyParticipant]

    @extend_schema(responses={200: ProgressOutput})
    def get(self, request: Request, name: str) -> Response:
        campaign = selectors.campaign_get(user=request.user, name=name)
        p = selectors.my_progress(campaign=campaign, annotator=request.user)
        return Response({"done": p.done, "remaining": p.remaining, "percent": p.percent, "paused": p.paused})


# --- curators: create and watch campaigns ----------------------------------------------


class CampaignProgressOutput(serializers.Serializer):
    n = serializers.IntegerField(help_text="Items (gold apart)")
    complete = serializers.IntegerField(help_text="Items with K judgments")
    started = serializers.IntegerField(help_text="Items with at least one judgment")
    flagged = serializers.IntegerField(help_text="Items that need review")
    judgments = serializers.IntegerField()
    needed = serializers.IntegerField(help_text="Items x K")
    percent = serializers.IntegerField()
    gold_items = serializers.IntegerField()
    skipped = serializers.IntegerField(help_text="Items an annotator gave back unanswered (skips)")


class CampaignOutput(serializers.ModelSerializer):
    task_label = serializers.CharField(source="get_task_display", read_only=True)
    progress = serializers.SerializerMethodField()
    url = serializers.SerializerMethodField(help_text="The campaign's curator page")

    class Meta:
        model = Campaign
        fields = [
            "name",
            "url",
            "task",
            "task_label",
            "status",
            "judgments_per_item",
            "lease_seconds",
            "gold_rate",
            "imported",
            "selection",
            "created_at",
            "progress",
        ]
        read_only_fields = fields

    @extend_schema_field(CampaignProgressOutput)
    def get_progress(self, campaign: Campaign) -> dict[str, Any]:
        known = self.context.get("progress") or {}  # a list's progress, read in one go
        return known.get(campaign.pk) or selectors.campaign_progress(campaign=campaign)

    def get_url(self, campaign: Campaign) -> str:
        url = reverse("annotation:campaign-detail", args=[campaign.name])
        return self.context["request"].build_absolute_uri(url)


class AgreementOutput(serializers.Serializer):
    applicable = serializers.BooleanField(help_text="False for free-text tasks")
    not_applicable = serializers.CharField(required=False)
    items_judged = serializers.IntegerField()
    judgments = serializers.IntegerField()
    annotators = serializers.IntegerField()
    figures = serializers.DictField(
        required=False,
        help_text="Fleiss' kappa, pairwise agreement, Krippendorff's alpha, agreement with the "
        "majority, gold accuracy: each {value, ci_low, ci_high, undefined}",
    )
    url = serializers.CharField(help_text="The agreement page")


class CampaignAnnotatorOutput(serializers.Serializer):
    id = serializers.IntegerField(help_text="The annotator's user id")
    username = serializers.CharField()
    judgments = serializers.IntegerField()
    gold_accuracy = serializers.FloatField(allow_null=True)
    paused = serializers.BooleanField()


def annotator_rows(campaign: Campaign) -> list[dict[str, Any]]:
    """The curator page's annotator table (``CampaignAnnotatorOutput`` rows)."""
    return [
        {
            "id": row["member"].annotator_id,
            "username": row["username"],
            "judgments": row["judgments"],
            "gold_accuracy": row["gold_accuracy"],
            "paused": row["member"].paused,
        }
        for row in selectors.campaign_annotators(campaign=campaign)
    ]


class CampaignDetailOutput(CampaignOutput):
    annotators = serializers.SerializerMethodField()
    agreement = serializers.SerializerMethodField()

    class Meta(CampaignOutput.Meta):
        fields = [*CampaignOutput.Meta.fields, "instructions", "annotators", "agreement"]
        read_only_fields = fields

    @extend_schema_field(CampaignAnnotatorOutput(many=True))
    def get_annotators(self, campaign: Campaign) -> list[dict[str, Any]]:
        return annotator_rows(campaign)

    @extend_schema_field(AgreementOutput)
    def get_agreement(self, campaign: Campaign) -> dict[str, Any]:
        summary = campaign_agreement_summary(campaign=campaign, include_pairs=False)
        keep = ("applicable", "not_applicable", "items_judged", "judgments", "annotators", "figures")
        url = reverse("agreement:detail", args=[campaign.name])
        return {k: summary[k] for k in keep if k in summary} | {
            "url": self.context["request"].build_absolute_uri(url)
        }


class CampaignCreateInput(serializers.Serializer):
    """The campaign form's fields (the form itself validates them, as on the page)."""

    name = serializers.SlugField(max_length=100)
    task = serializers.ChoiceField(choices=Task.choices)
    items = serializers.ChoiceField(choices=list(ITEM_KINDS), help_text="What the campaign's items are")
    filters = serializers.CharField(required=False, help_text="e.g. origin=human, label=positive")
    ids = serializers.CharField(required=False, help_text="Item ids, separated by commas or spaces")
    k = serializers.IntegerField(
        required=False, min_value=1, max_value=100, help_text="Judgments per item (empty: the paper's)"
    )
    gold_ids = serializers.CharField(required=False, help_text="Ids of items with a known answer")
    gold_rate = serializers.FloatField(required=False, default=0.1, min_value=0, max_value=1)
    lease_seconds = serializers.IntegerField(required=False, default=600, min_value=30, max_value=7 * 86400)
    slots = serializers.IntegerField(
        required=False, min_value=1, max_value=10000, help_text="ComVE writing slots"
    )
    instructions = serializers.CharField(required=False, help_text="Empty: the task's instructions")


CAMPAIGN_FORM_ERRORS = OpenApiResponse(
    description="The form's errors, worded as on the page: {field: [message, ...]}; "
    "non_field_errors for a refusal of the campaign (its message names the field)"
)


class AnnotatorCampaignOutput(serializers.ModelSerializer):
    """A campaign as the annotator's campaign list shows it: their own progress only."""

    task_label = serializers.CharField(source="get_task_display", read_only=True)
    mine = serializers.SerializerMethodField(help_text="The caller's own progress")

    class Meta:
        model = Campaign
        fields = ["name", "task", "task_label", "status", "mine"]
        read_only_fields = fields

    @extend_schema_field(ProgressOutput)
    def get_mine(self, campaign: Campaign) -> dict[str, Any]:
        p = selectors.my_progress(campaign=campaign, annotator=self.context["request"].user)
        return {"done": p.done, "remaining": p.remaining, "percent": p.percent, "paused": p.paused}


@extend_schema_view(
    get=extend_schema(
        description="Curators: every campaign, newest first, with its progress. Annotators: the "
        "campaigns they can work on, with their own progress (as the campaign list page).",
        responses={
            200: PolymorphicProxySerializer(
                component_name="CampaignListItem",
                serializers=[CampaignOutput, AnnotatorCampaignOutput],
                resource_type_field_name=None,
            )
        },
    )
)
class CampaignListApi(generics.ListAPIView):
    """GET: the campaign list page's campaigns. POST: create one (curators, as the campaign form)."""

    permission_classes = [CampaignListPermission]

    def get_serializer_class(self) -> Any:
        if user_can_curate(self.request.user):
            return CampaignOutput
        return AnnotatorCampaignOutput

    def get_queryset(self) -> Any:
        return selectors.campaign_list(user=self.request.user)

    def get_serializer(self, *args: Any, **kwargs: Any) -> Any:
        """A curator's list reads every campaign's progress in a fixed number of queries."""
        if kwargs.get("many") and args and user_can_curate(self.request.user):
            campaigns = list(args[0])
            progress = selectors.campaigns_progress(campaigns=campaigns)
            kwargs["context"] = {**self.get_serializer_context(), "progress": progress}
            args = (campaigns, *args[1:])
        return super().get_serializer(*args, **kwargs)

    @extend_schema(
        request=CampaignCreateInput,
        responses={201: CampaignDetailOutput, 400: CAMPAIGN_FORM_ERRORS},
        operation_id="annotation_campaigns_create",
        description="Create a campaign, validated as the campaign form: 201 with the campaign.",
    )
    def post(self, request: Request) -> Response:
        form = CampaignCreateForm(form_input(CampaignCreateForm, request.data))
        return form_create(
            request,
            form,
            create=lambda: services.campaign_create(created_by=request.user, **form.service_kwargs()),
            refused=services.CampaignError,
            output=CampaignDetailOutput,
        )


class CampaignDetailApi(generics.RetrieveAPIView):
    """Watch a campaign: its progress and its agreement figures (with 95% intervals)."""

    permission_classes = [IsCurator]
    serializer_class = CampaignDetailOutput

    def get_object(self) -> Campaign:
        return selectors.campaign_get(user=self.request.user, name=self.kwargs["name"])


class CampaignStatusInput(serializers.Serializer):
    status = serializers.ChoiceField(
        choices=CampaignStatus.choices,
        help_text="active hands items out; draft, paused and closed hand none out",
    )


class CampaignStatusApi(APIView):
    """Open, pause or close a campaign (what the admin lets a curator change)."""

    permission_classes = [IsCurator]

    @extend_schema(request=CampaignStatusInput, responses={200: CampaignOutput})
    def post(self, request: Request, name: str) -> Response:
        campaign = selectors.campaign_get(user=request.user, name=name)
        data = CampaignStatusInput(data=request.data)
        data.is_valid(raise_exception=True)
        campaign = services.campaign_status_set(campaign=campaign, status=data.validated_data["status"])
        return Response(CampaignOutput(campaign, context={"request": request}).data)


class AggregateOutput(serializers.Serializer):
    items = serializers.IntegerField()
    aggregated = serializers.IntegerField(help_text="Items with K judgments, labelled")
    pending = serializers.IntegerField(help_text="Items that still need judgments")
    changed = serializers.IntegerField()
    created = serializers.IntegerField()
    labels = serializers.DictField(child=serializers.IntegerField())
    extra = serializers.DictField(help_text="e.g. human_accuracy")
    labels_changed = serializers.IntegerField(
        help_text="Labels of the campaign's layer written (new or changed)"
    )
    labels_over_import = serializers.IntegerField(
        help_text="Of those, labels on items an import labelled (the imported label stays in place)"
    )
    dry_run = serializers.BooleanField(help_text="true: counted and rolled back, nothing written")


class AggregateInput(serializers.Serializer):
    dry_run = serializers.BooleanField(
        default=False, help_text="true: say what aggregating would change, write nothing"
    )


class CampaignAggregateApi(APIView):
    """Aggregate the campaign's judgments by the task's rule (the page's Aggregate button);
    ``dry_run``: what it would change, nothing written (the page's preview)."""

    permission_classes = [IsCurator]

    @extend_schema(request=AggregateInput, responses={200: AggregateOutput})
    def post(self, request: Request, name: str) -> Response:
        campaign = selectors.campaign_get(user=request.user, name=name)
        data = AggregateInput(data=request.data)
        data.is_valid(raise_exception=True)
        summary = services.campaign_aggregate(campaign=campaign, dry_run=data.validated_data["dry_run"])
        # (asdict would count a Counter's pairs, not copy it)
        return Response(AggregateOutput(asdict(summary) | {"labels": dict(summary.labels)}).data)


class AnnotatorPauseInput(serializers.Serializer):
    paused = serializers.BooleanField(help_text="true: no more items for this annotator; false: go on")


class CampaignAnnotatorPauseApi(APIView):
    """Pause an annotator in a campaign, or let them go on (the curator page's button)."""

    permission_classes = [IsCurator]

    @extend_schema(request=AnnotatorPauseInput, responses={200: CampaignAnnotatorOutput})
    def post(self, request: Request, name: str, user_id: int) -> Response:
        campaign = selectors.campaign_get(user=request.user, name=name)
        member = get_object_or_404(CampaignAnnotator, campaign=campaign, annotator_id=user_id)
        data = AnnotatorPauseInput(data=request.data)
        data.is_valid(raise_exception=True)
        services.campaign_annotator_pause(
            campaign=campaign, annotator=member.annotator, paused=data.validated_data["paused"]
        )
        (row,) = [r for r in annotator_rows(campaign) if r["id"] == user_id]
        return Response(CampaignAnnotatorOutput(row).data)
