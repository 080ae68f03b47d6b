"""The audit pages' URLs (included by ``evaluation.urls`` under ``audits/``)."""

from django.urls import path

from evaluation.audit import views

urlpatterns = [
    path("", views.audit_list, name="audit-list"),
    path("<int:audit_id>/", views.audit_detail, name="audit-detail"),
    path("<int:audit_id>/<str:table>.<str:fmt>", views.audit_table, name="audit-table"),
    path("<int:audit_id>/filtered-release/", views.audit_filtered_release, name="audit-filtered-release"),
]
