from django.urls import path

from evaluation import api
from evaluation.adversarial.figures import api as adversarial_figures_api
from evaluation.audit import api as audit_api
from evaluation.cloze import api as cloze_api

app_name = "evaluation-api"

urlpatterns = [
    path("models/", api.ModelListApi.as_view(), name="model-list"),
    path("runs/", api.RunListApi.as_view(), name="run-list"),
    path("runs/<int:run_id>/", api.RunDetailApi.as_view(), name="run-detail"),
    path("leaderboards/<str:name>/<str:version>/", api.LeaderboardApi.as_view(), name="leaderboard"),
    path("audits/", audit_api.AuditListApi.as_view(), name="audit-list"),
    path("audits/<int:audit_id>/", audit_api.AuditDetailApi.as_view(), name="audit-detail"),
    path(
        "adversarial-figures/",
        adversarial_figures_api.AdversarialCollectionListApi.as_view(),
        name="adversarial-figures-list",
    ),
    path(
        "adversarial-figures/<str:collection>/",
        adversarial_figures_api.AdversarialFiguresApi.as_view(),
        name="adversarial-figures-detail",
    ),
    path("cloze-runs/", cloze_api.ClozeRunListApi.as_view(), name="cloze-run-list"),
    path("cloze-runs/<int:pk>/", cloze_api.ClozeRunDetailApi.as_view(), name="cloze-run-detail"),
]
