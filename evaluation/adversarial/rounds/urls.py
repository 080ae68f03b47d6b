from django.urls import path

from evaluation.adversarial.rounds import views

app_name = "adversarial-rounds"

urlpatterns = [
    path("", views.round_list, name="round-list"),
]
