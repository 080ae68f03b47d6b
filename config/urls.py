from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from config import views
from core.auth import ThrottledAuthenticationForm
from core.docs import doc_page

admin.site.site_header = "Winnow administration"
admin.site.site_title = "Winnow admin"

handler404 = "core.web.page_not_found"  # JSON under /api/
handler500 = "core.web.server_error"  # a 503 page when the database cannot be reached

urlpatterns = [
    path("", views.home, name="home"),
    path("health/", views.health, name="health"),
    path("docs/<slug:page>/", doc_page, name="doc"),
    path("favicon.ico", views.favicon, name="favicon"),
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(authentication_form=ThrottledAuthenticationForm),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("datasets/", include("datasets.urls")),
    path("annotation/", include("annotation.agreement.urls")),
    path("releases/", include("releases.urls")),
    path("api/releases/", include("releases.api_urls")),
    path("annotation/", include("annotation.urls")),
    # crowd workers (annotation.crowd): a study link's pages, and the crowd pages and API of a campaign
    path("study/<str:token>/", include("annotation.crowd.urls")),
    path("annotation/campaigns/<slug:name>/", include("annotation.crowd.campaign_urls")),
    path("api/annotation/", include("annotation.api_urls")),
    path("api/annotation/campaigns/<slug:name>/", include("annotation.crowd.api_urls")),
    path("api/", include("datasets.api_urls")),
    path("evaluation/", include("evaluation.urls")),
    path("cloze/", include("evaluation.cloze.urls")),
    path("adversarial/", include("evaluation.adversarial.urls")),
    # rounds of adversarial writing: the models in the loop (issue 27)
    path("adversarial/rounds/", include("evaluation.adversarial.rounds.urls")),
    path("adversarial/figures/", include("evaluation.adversarial.figures.urls")),
    path("api/evaluation/", include("evaluation.api_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(url_name="api-schema", template_name="api_docs.html"),
        name="api-docs",
    ),
]
