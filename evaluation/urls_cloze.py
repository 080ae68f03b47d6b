from django.urls import path

from evaluation import views_cloze

app_name = "cloze"

urlpatterns = [
    path("", views_cloze.cloze_run_list_view, name="run-list"),
    path("<int:pk>/", views_cloze.cloze_run_detail_view, name="run-detail"),
]
