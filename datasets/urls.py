from django.urls import path

from datasets import views

app_name = "datasets"

urlpatterns = [
    path("import/", views.import_upload, name="import"),
]
