"""The adversarial figures' pages (namespace ``adversarial-figures``, wired in config/urls.py)."""

from django.urls import path

from evaluation.adversarial.figures import views

app_name = "adversarial-figures"

urlpatterns = [
    path("", views.figures_index, name="index"),
    path("<str:collection>/", views.figures_detail, name="detail"),
    path("<str:collection>/<str:level>.<str:fmt>", views.figures_table, name="table"),
]
