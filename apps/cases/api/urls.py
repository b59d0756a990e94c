"""/api/v1/ routes. Every path works with and without a trailing slash: the optional slash is
a non-capturing group, which the OpenAPI generator drops, so the schema shows one
canonical path (without the slash) per endpoint."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.urls import URLPattern, re_path

from . import views

app_name = "api"

ID = r"[A-Za-z0-9_\-]+"


def endpoint(route: str, view: Callable[..., Any], name: str) -> URLPattern:
    return re_path(rf"^{route}(?:/)?$", view, name=name)


urlpatterns = [
    endpoint("cases", views.CaseCollectionView.as_view(), "cases"),
    endpoint(rf"cases/(?P<case_id>{ID})", views.CaseDetailView.as_view(), "case-detail"),
    endpoint(
        rf"cases/(?P<case_id>{ID})/evidence", views.CaseEvidenceView.as_view(), "case-evidence"
    ),
    endpoint(
        rf"cases/(?P<case_id>{ID})/side-effect",
        views.CaseSideEffectView.as_view(),
        "case-side-effect",
    ),
    endpoint(rf"cases/(?P<case_id>{ID})/cancel", views.CaseCancelView.as_view(), "case-cancel"),
    endpoint("decisions", views.DecisionFeedView.as_view(), "decisions"),
    endpoint(rf"decisions/(?P<event_id>{ID})/ack", views.DecisionAckView.as_view(), "decision-ack"),
    # Last: anything else under /api/v1/ is a JSON 404, never the site's HTML page.
    re_path(r"^(?P<unmatched>.*)$", views.endpoint_not_found, name="not-found"),
]
