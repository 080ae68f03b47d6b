"""Agreement pages, included at annotation/ with the namespace ``agreement``."""

from django.urls import path

from annotation.agreement import views

app_name = "agreement"

urlpatterns = [
    path("agreement/", views.agreement_index, name="index"),
    path("campaigns/<slug:name>/agreement/", views.agreement_detail, name="detail"),
    path("campaigns/<slug:name>/agreement.<str:fmt>", views.agreement_export, name="export"),
    path("campaigns/<slug:name>/agreement/<slug:chart>.<str:fmt>", views.chart_export, name="chart-export"),
]
