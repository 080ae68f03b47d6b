from django.urls import path

from annotation import api

app_name = "annotation-api"

urlpatterns = [
    path("campaigns/<slug:name>/next/", api.AnnotationNextApi.as_view(), name="next"),
    path("campaigns/<slug:name>/progress/", api.MyProgressApi.as_view(), name="progress"),
    path("assignments/<int:pk>/submit/", api.JudgmentSubmitApi.as_view(), name="submit"),
]
