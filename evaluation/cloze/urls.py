from django.urls import path

from evaluation.cloze import views

app_name = "cloze"

urlpatterns = [
    path("", views.cloze_run_list_view, name="run-list"),
    path("<int:pk>/", views.cloze_run_detail_view, name="run-detail"),
    path("<int:pk>/<slug:table>.<str:fmt>", views.cloze_run_table_view, name="run-table"),
]
