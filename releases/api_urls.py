from django.urls import path

from releases import api

app_name = "releases-api"

urlpatterns = [
    path("", api.ReleaseListApi.as_view(), name="release-list"),
    path("<slug:name>/<str:version>/", api.ReleaseDetailApi.as_view(), name="release-detail"),
    path(
        "<slug:name>/<str:version>/files/<str:file_name>",
        api.ReleaseFileDownloadApi.as_view(),
        name="release-download",
    ),
]
