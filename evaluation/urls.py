from django.urls import path

from evaluation import views

app_name = "evaluation"

urlpatterns = [
    path("", views.run_list, name="run-list"),
    path("runs/<int:run_id>/", views.run_detail, name="run-detail"),
    path("runs/<int:run_id>/files/<str:name>", views.run_file, name="run-file"),
    path("compare/", views.run_compare, name="run-compare"),
    path("leaderboard/<str:name>/<str:version>/", views.leaderboard, name="leaderboard"),
]
