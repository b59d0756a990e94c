"""The accessibility statement: public (a barrier at the login page must be reportable
too), one page, no data beyond whom to contact."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe


@require_safe
def accessibility_statement(request: HttpRequest) -> HttpResponse:
    # A deployment names its own contact (an address or a team); without one the page
    # points to the supervisor and the platform team, who run the desk.
    contact = settings.EXCEPTION_DESK.get("ACCESSIBILITY_CONTACT", "")
    return render(
        request,
        "pages/accessibility.html",
        {"nav": "accessibility", "contact": contact, "contact_is_email": "@" in contact},
    )
