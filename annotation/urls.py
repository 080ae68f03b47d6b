"""Annotator and curator pages, under annotation/ (beside the agreement pages, which use
annotation/agreement/ and annotation/campaigns/<name>/agreement...)."""

from django.urls import path

from annotation import views
from annotation.pipelines import views as pipeline_views

app_name = "annotation"

urlpatterns = [
    path("", views.campaign_list, name="campaign-list"),
    path("new/", views.campaign_create, name="campaign-create"),
    path("dashboard/", views.curator_dashboard, name="dashboard"),
    path("pipelines/", pipeline_views.pipeline_list, name="pipeline-list"),
    path("pipelines/<slug:name>/", pipeline_views.pipeline_detail, name="pipeline-detail"),
    path("pipelines/<slug:name>/advance/", pipeline_views.pipeline_advance, name="pipeline-advance"),
    path("campaigns/<slug:name>/", views.campaign_annotate, name="campaign-annotate"),
    path("campaigns/<slug:name>/skip/", views.campaign_skip, name="campaign-skip"),
    path("campaigns/<slug:name>/reopen/", views.campaign_reopen, name="campaign-reopen"),
    path("campaigns/<slug:name>/recent/", views.campaign_recent, name="campaign-recent"),
    path("campaigns/<slug:name>/items/<int:item_id>/answer/", views.campaign_item_change, name="item-change"),
    path("campaigns/<slug:name>/curate/", views.campaign_detail, name="campaign-detail"),
    path("campaigns/<slug:name>/aggregate/", views.campaign_aggregate, name="campaign-aggregate"),
    path("campaigns/<slug:name>/lower-k/", views.campaign_lower_k, name="campaign-lower-k"),
    path("campaigns/<slug:name>/adjudicate/", views.campaign_adjudicate, name="campaign-adjudicate"),
    path(
        "campaigns/<slug:name>/agreement/compute/",
        views.campaign_agreement_compute,
        name="campaign-agreement-compute",
    ),
    path("campaigns/<slug:name>/judgments.<str:fmt>", views.campaign_export, name="campaign-export"),
    path(
        "campaigns/<slug:name>/annotators/<int:user_id>/pause/", views.annotator_pause, name="annotator-pause"
    ),
    path(
        "campaigns/<slug:name>/items/<int:item_id>/adjudicate/", views.item_adjudicate, name="item-adjudicate"
    ),
]
