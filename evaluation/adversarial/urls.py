"""The adversarial writer's actions (namespace ``adversarial``), under ``adversarial/``."""

from django.urls import path

from evaluation.adversarial import views

app_name = "adversarial"

urlpatterns = [
    path("campaigns/<slug:name>/check/", views.check, name="check"),
    path("campaigns/<slug:name>/keep/", views.keep, name="keep"),
    path("campaigns/<slug:name>/retract/", views.retract, name="retract"),
    path("tries/<int:try_id>/", views.try_detail, name="try"),
    path("tries/<int:try_id>/again/", views.try_again, name="again"),
]
