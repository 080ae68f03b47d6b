"""The curator's API of a campaign's study links (config/urls.py mounts it under the
campaign's API address, ``api/annotation/campaigns/<name>/``; docs/api.md)."""

from django.urls import path

from annotation.crowd import api

app_name = "crowd-api"

urlpatterns = [
    path("links/", api.StudyLinkListApi.as_view(), name="study-links"),
    path("links/<int:link_id>/close/", api.StudyLinkCloseApi.as_view(), name="study-link-close"),
    path("participants/", api.ParticipantListApi.as_view(), name="participants"),
    path("participants/report/<str:kind>/", api.PaymentReportApi.as_view(), name="payment-report"),
    path(
        "participants/<int:participant_id>/decision/",
        api.ParticipantDecisionApi.as_view(),
        name="participant-decision",
    ),
]
