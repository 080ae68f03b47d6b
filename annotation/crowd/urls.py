from django.urls import path

from annotation.crowd import views

app_name = "crowd"

urlpatterns = [
    path("study/<str:token>/", views.study_enter, name="enter"),
    path("study/<str:token>/consent/", views.study_consent, name="consent"),
    path("study/<str:token>/finish/", views.study_finish, name="finish"),
    path("study/<str:token>/done/", views.study_done, name="done"),
    path("annotation/campaigns/<slug:name>/links/", views.study_links, name="links"),
    path("annotation/campaigns/<slug:name>/participants/", views.study_participants, name="participants"),
    path(
        "annotation/campaigns/<slug:name>/participants/<str:kind>.csv",
        views.study_payment_report,
        name="payment-report",
    ),
    path(
        "annotation/campaigns/<slug:name>/links/<int:link_id>/close/",
        views.study_link_close_view,
        name="link-close",
    ),
]
