"""The curator's API of study links (issue 14): a campaign's links (list, open, close),
its participants with their quality figures, and the approve/reject decision with a
bonus. Validated by the pages' own forms (annotation.crowd.forms), written by the same
services, refused to every role the pages refuse (curators only); and the payment
report's files as the participants' page downloads them (``report_urls``)."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import selectors
from annotation.crowd import selectors as crowd_selectors
from annotation.crowd.forms import PAY_FIELDS, QUALITY_FIELDS, DecisionForm, StudyLinkForm
from annotation.crowd.platforms import PLATFORMS
from annotation.crowd.services import study_link_close, study_link_create
from annotation.crowd.views import pasted_url, payment_report_response
from annotation.errors import AnnotationError
from annotation.models import Participant, ParticipantState, PaymentDecision, Platform, StudyLink
from annotation.permissions import IsCurator
from core.api import form_create, form_errors, form_input


class StudyLinkOutput(serializers.ModelSerializer):
    """A study link as the study links page shows it, with the link to paste."""

    paste = serializers.SerializerMethodField(help_text="The link to paste into the platform, as is")
    where = serializers.SerializerMethodField(help_text="Where on the platform it goes")
    participants = serializers.SerializerMethodField()
    finished = serializers.SerializerMethodField(help_text="Participants who got the completion code")
    url = serializers.SerializerMethodField(help_text="The campaign's study links page")

    class Meta:
        model = StudyLink
        fields = [
            "id",
            "platform",
            "status",
            "paste",
            "where",
            "consent",
            "expires_at",
            "completion_code",
            "return_code",
            "partial_code",
            *QUALITY_FIELDS,
            *PAY_FIELDS,
            "participants",
            "finished",
            "created_at",
            "url",
        ]
        read_only_fields = fields

    def get_paste(self, link: StudyLink) -> str:
        return pasted_url(self.context["request"], link)

    def get_where(self, link: StudyLink) -> str:
        return PLATFORMS[link.platform].where

    # a link read through crowd_selectors.study_links_counted carries its counts; a link
    # just opened has nobody yet
    def get_participants(self, link: StudyLink) -> int:
        return int(getattr(link, "n_participants", 0))

    def get_finished(self, link: StudyLink) -> int:
        return int(getattr(link, "n_finished", 0))

    def get_url(self, link: StudyLink) -> str:
        return self.context["request"].build_absolute_uri(reverse("crowd:links", args=[link.campaign.name]))


class StudyLinkInput(serializers.Serializer):
    """The study link form's fields (the form itself validates them, as on the page)."""

    platform = serializers.ChoiceField(choices=Platform.choices)
    consent = serializers.CharField(required=False, help_text="Empty: the page's default consent text")
    expires_at = serializers.DateTimeField(
        required=False, help_text="No entry after this time (UTC when no zone)"
    )
    completion_code = serializers.CharField(required=False, help_text="Empty: one is made")
    return_code = serializers.CharField(required=False)
    partial_code = serializers.CharField(
        required=False, help_text="Given to who ends before their batch is complete; empty: the return code"
    )
    screening_items = serializers.IntegerField(required=False, help_text="Gold items answered first")
    pass_mark = serializers.FloatField(required=False)
    batch_size = serializers.IntegerField(required=False, help_text="0: until no item is left")
    min_seconds = serializers.FloatField(required=False, help_text="Answers faster than this are flagged")
    gold_pause_below = serializers.FloatField(required=False)
    gold_pause_after = serializers.IntegerField(required=False)
    reward = serializers.DecimalField(
        max_digits=8, decimal_places=2, required=False, help_text="Paid per participant (empty: not recorded)"
    )
    fooling_bonus = serializers.DecimalField(
        max_digits=8, decimal_places=2, required=False, help_text="Bonus per validated model-fooling item"
    )


FORM_ERRORS = OpenApiResponse(
    description="The form's errors, worded as on the page: {field: [message, ...]}; "
    "non_field_errors for a refusal that names no field"
)


class StudyLinkListApi(APIView):
    """GET: a campaign's study links. POST: open one (as the study links page's form)."""

    permission_classes = [IsCurator]

    @extend_schema(responses={200: StudyLinkOutput(many=True)})
    def get(self, request: Request, name: str) -> Response:
        campaign = selectors.campaign_get(user=request.user, name=name)
        links = crowd_selectors.study_links_counted(campaign=campaign)
        return Response(StudyLinkOutput(links, many=True, context={"request": request}).data)

    @extend_schema(
        request=StudyLinkInput,
        responses={201: StudyLinkOutput, 400: FORM_ERRORS},
        operation_id="annotation_study_links_create",
        description="Open the campaign to a platform, validated as the study links form: 201 "
        "with the link to paste (`paste`).",
    )
    def post(self, request: Request, name: str) -> Response:
        campaign = selectors.campaign_get(user=request.user, name=name)
        form = StudyLinkForm(form_input(StudyLinkForm, request.data))
        return form_create(
            request,
            form,
            create=lambda: study_link_create(campaign=campaign, **form.service_kwargs(), user=request.user),
            refused=AnnotationError,
            output=StudyLinkOutput,
        )


class StudyLinkCloseApi(APIView):
    """Close a study link: no new participants; who is in already goes on."""

    permission_classes = [IsCurator]

    @extend_schema(request=None, responses={200: StudyLinkOutput})
    def post(self, request: Request, name: str, link_id: int) -> Response:
        campaign = selectors.campaign_get(user=request.user, name=name)
        link = get_object_or_404(crowd_selectors.study_links_counted(campaign=campaign), pk=link_id)
        study_link_close(link=link, user=request.user)
        return Response(StudyLinkOutput(link, context={"request": request}).data)


class ParticipantOutput(serializers.Serializer):
    """A participant as the participants' page shows them (the payment report's figures)."""

    id = serializers.IntegerField()
    link = serializers.IntegerField(help_text="The study link's id")
    platform = serializers.ChoiceField(choices=Platform.choices)
    external_id = serializers.CharField()
    study_id = serializers.CharField()
    session_id = serializers.CharField()
    assignment_id = serializers.CharField()
    hit_id = serializers.CharField()
    state = serializers.ChoiceField(choices=ParticipantState.choices)
    ended_early = serializers.BooleanField(
        help_text="Ended before their batch was complete (the partial code)"
    )
    items = serializers.IntegerField(help_text="Real (not gold) items answered")
    total_seconds = serializers.FloatField()
    median_seconds = serializers.FloatField(allow_null=True)
    gold_seen = serializers.IntegerField()
    gold_accuracy = serializers.FloatField(allow_null=True)
    screening = serializers.CharField(help_text="right/seen of the screening items")
    majority_agreement = serializers.FloatField(
        allow_null=True, help_text="Share of answers matching the unique majority of the others"
    )
    compared = serializers.IntegerField(help_text="Answers compared with a majority")
    fast_answers = serializers.IntegerField()
    paused = serializers.BooleanField()
    code = serializers.CharField(help_text="The completion or return code they were given")
    decision = serializers.ChoiceField(choices=PaymentDecision.choices)
    bonus = serializers.DecimalField(
        max_digits=8, decimal_places=2, help_text="The curator's bonus (set with the decision)"
    )
    fooling_validated = serializers.IntegerField(
        help_text="Adversarial items they wrote that fooled a model and were validated"
    )
    fooling_bonus = serializers.DecimalField(
        max_digits=8, decimal_places=2, help_text="fooling_validated times the link's bonus per such item"
    )
    bonus_total = serializers.DecimalField(
        max_digits=8, decimal_places=2, help_text="bonus + fooling_bonus: the payment report's bonus"
    )
    reward = serializers.DecimalField(
        max_digits=8, decimal_places=2, allow_null=True, help_text="The link's reward (null: not recorded)"
    )
    note = serializers.CharField()


def _participant_out(row: dict[str, Any]) -> dict[str, Any]:
    participant: Participant = row["participant"]
    return {
        **{k: v for k, v in row.items() if k != "participant"},
        "id": participant.pk,
        "link": participant.link_id,
    }


class ParticipantListOutput(serializers.Serializer):
    participants = ParticipantOutput(many=True)
    report_urls = serializers.DictField(
        child=serializers.URLField(), help_text="The payment report's CSV downloads, by kind"
    )


class ParticipantListApi(APIView):
    """A campaign's participants with their quality figures, and the payment report's files."""

    permission_classes = [IsCurator]

    @extend_schema(responses={200: ParticipantListOutput})
    def get(self, request: Request, name: str) -> Response:
        campaign = selectors.campaign_get(user=request.user, name=name)
        rows = crowd_selectors.participant_rows(campaign=campaign)
        urls = {
            kind: request.build_absolute_uri(reverse("crowd-api:payment-report", args=[campaign.name, kind]))
            for kind in crowd_selectors.REPORT_KINDS
        }
        body = {"participants": [_participant_out(row) for row in rows], "report_urls": urls}
        return Response(ParticipantListOutput(body).data)


class PaymentReportApi(APIView):
    """A payment report as the participants' page downloads it (docs/crowd.md): ``all``,
    ``prolific-approve``, ``prolific-bonus`` or ``mturk``."""

    permission_classes = [IsCurator]

    @extend_schema(
        responses={(200, "text/csv"): OpenApiTypes.STR, 404: OpenApiResponse(description="No such report")}
    )
    def get(self, request: Request, name: str, kind: str) -> HttpResponse:
        campaign = selectors.campaign_get(user=request.user, name=name)
        return payment_report_response(campaign, kind)


class DecisionInput(serializers.Serializer):
    decision = serializers.ChoiceField(choices=PaymentDecision.choices)
    bonus = serializers.DecimalField(max_digits=8, decimal_places=2, required=False)
    note = serializers.CharField(required=False, help_text="Needed to reject: the platform shows it")


class ParticipantDecisionApi(APIView):
    """The curator's approve or reject of one participant, with a bonus (the payment report)."""

    permission_classes = [IsCurator]

    @extend_schema(request=DecisionInput, responses={200: ParticipantOutput, 400: FORM_ERRORS})
    def post(self, request: Request, name: str, participant_id: int) -> Response:
        campaign = selectors.campaign_get(user=request.user, name=name)
        participant = get_object_or_404(Participant, pk=participant_id, link__campaign=campaign)
        form = DecisionForm(form_input(DecisionForm, {**request.data, "participant": participant.pk}))
        if form.is_valid() and form.decide(participant=participant, user=request.user):
            rows = crowd_selectors.participant_rows(campaign=campaign)
            [row] = [r for r in rows if r["participant"].pk == participant.pk]
            return Response(ParticipantOutput(_participant_out(row)).data)
        return Response(form_errors(form), status=status.HTTP_400_BAD_REQUEST)
