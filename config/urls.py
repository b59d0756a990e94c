from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from apps.cases.views.statement import accessibility_statement

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path(
        "api/schema/",
        SpectacularAPIView.as_view(authentication_classes=[], permission_classes=[]),
        name="api-schema",
    ),
    path(
        "api/docs/",
        SpectacularSwaggerView.as_view(
            url_name="api-schema", authentication_classes=[], permission_classes=[]
        ),
        name="api-docs",
    ),
    path("api/v1/", include("apps.cases.api.urls")),
    path("", include("apps.cases.urls")),
    path("accessibility/", accessibility_statement, name="accessibility"),
]

# The demo webhook receiver (a stand-in workflow engine for `make run`): never in production
# unless asked for explicitly.
if settings.DEBUG or getattr(settings, "DEMO_RECEIVER", False):
    urlpatterns.insert(-1, path("", include("apps.workflows.urls")))
