"""The curator's crowd pages of one campaign (config/urls.py mounts them under the
campaign's address, ``annotation/campaigns/<name>/``): study links, participants and the
payment report."""

from django.urls import path

from annotation.crowd import views

app_name = "crowd"

urlpatterns = [
    path("links/", views.study_links, name="links"),
    path("links/<int:link_id>/close/", views.study_link_close_view, name="link-close"),
    path("participants/", views.study_participants, name="participants"),
    path("participants/<str:kind>.csv", views.study_payment_report, name="payment-report"),
]
