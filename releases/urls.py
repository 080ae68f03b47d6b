from django.urls import path

from releases import views

app_name = "releases"

urlpatterns = [
    path("", views.release_list, name="release-list"),
    path("new/", views.release_create, name="release-create"),
    path("<slug:name>/compare/", views.release_compare, name="release-compare"),
    path("<slug:name>/<str:version>/", views.release_detail, name="release-detail"),
    path("<slug:name>/<str:version>/approve/", views.release_approve, name="release-approve"),
    path("<slug:name>/<str:version>/publish/", views.release_publish, name="release-publish"),
    path("<slug:name>/<str:version>/files/<str:file_name>", views.release_download, name="release-download"),
    path("<slug:name>/<str:version>/items/<str:item_id>/", views.release_item, name="release-item"),
    path("<slug:name>/<str:version>/download.zip", views.release_bundle_download, name="release-bundle"),
]
