from django.urls import path

from annotation import api

app_name = "annotation-api"

urlpatterns = [
    path("campaigns/", api.CampaignListApi.as_view(), name="campaign-list"),
    path("campaigns/<slug:name>/", api.CampaignDetailApi.as_view(), name="campaign-detail"),
    path("campaigns/<slug:name>/status/", api.CampaignStatusApi.as_view(), name="campaign-status"),
    path("campaigns/<slug:name>/aggregate/", api.CampaignAggregateApi.as_view(), name="campaign-aggregate"),
    path(
        "campaigns/<slug:name>/annotators/<int:user_id>/pause/",
        api.CampaignAnnotatorPauseApi.as_view(),
        name="annotator-pause",
    ),
    path("campaigns/<slug:name>/next/", api.AnnotationNextApi.as_view(), name="next"),
    path("campaigns/<slug:name>/progress/", api.MyProgressApi.as_view(), name="progress"),
    path("assignments/<int:pk>/submit/", api.JudgmentSubmitApi.as_view(), name="submit"),
    path("assignments/<int:pk>/skip/", api.AssignmentSkipApi.as_view(), name="skip"),
    path("campaigns/<slug:name>/items/<int:item_id>/answer/", api.JudgmentChangeApi.as_view(), name="change"),
]
