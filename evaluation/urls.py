from django.urls import include, path

from evaluation import views
from evaluation.generation_jobs import views as generation_views

app_name = "evaluation"

urlpatterns = [
    path("", views.run_list, name="run-list"),
    path("runs/<int:run_id>/", views.run_detail, name="run-detail"),
    path("runs/<int:run_id>/files/<str:name>", views.run_file, name="run-file"),
    path("runs/<int:run_id>/table.<str:fmt>", views.run_table_export, name="run-table"),
    path("compare/", views.run_compare, name="run-compare"),
    path("compare/table.<str:fmt>", views.run_compare_export, name="run-compare-table"),
    path("leaderboard/<str:name>/<str:version>/", views.leaderboard, name="leaderboard"),
    path(
        "leaderboard/<str:name>/<str:version>/table.<str:fmt>",
        views.leaderboard_export,
        name="leaderboard-table",
    ),
    path("generation/", generation_views.generation_create, name="generation-create"),
    path("generation/<int:job_id>/", generation_views.generation_detail, name="generation-detail"),
    path("audits/", include("evaluation.audit.urls")),
]
