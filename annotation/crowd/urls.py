"""A participant's pages of one study link (config/urls.py mounts them at
``study/<token>/``): the landing page and entry, the consent, the end."""

from django.urls import path

from annotation.crowd import views

app_name = "study"

urlpatterns = [
    path("", views.study_enter, name="enter"),
    path("consent/", views.study_consent, name="consent"),
    path("finish/", views.study_finish, name="finish"),
    path("done/", views.study_done, name="done"),
]
