from django.urls import path

from datasets import api

app_name = "datasets-api"

urlpatterns = [
    path("schemas/", api.SchemaListApi.as_view(), name="schema-list"),
    path("schemas/<int:pk>/", api.SchemaDetailApi.as_view(), name="schema-detail"),
    path("reasons/", api.ReasonListApi.as_view(), name="reason-list"),
    path("reasons/<int:pk>/", api.ReasonDetailApi.as_view(), name="reason-detail"),
    path("comve-items/", api.ComVEItemListApi.as_view(), name="comve-item-list"),
    path("comve-items/<int:pk>/", api.ComVEItemDetailApi.as_view(), name="comve-item-detail"),
    path("summary/", api.DatasetSummaryApi.as_view(), name="summary"),
]
