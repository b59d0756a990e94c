"""The recovery queue: decisions whose delivery to the workflow failed. A supervisor retries
the same event; nobody is asked to decide again."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST, require_safe

from .. import selectors, services
from ..errors import CaseError
from .common import HtmxHttpRequest, access, login_required_page, raise_http, redirect_after_post


@login_required_page
@require_safe
def recovery(request: HtmxHttpRequest) -> HttpResponse:
    # A logged-in user who supervises no queue gets 403, not an empty list: the page is a
    # supervisor tool, and an empty list would suggest that nothing needs recovery.
    if not selectors.supervises_any_queue(request.user):
        raise PermissionDenied(_("The recovery queue is for supervisors."))
    return render(
        request,
        "cases/recovery.html",
        {"nav": "recovery", "rows": selectors.recovery_rows(request.user)},
    )


@login_required_page
@require_POST
def retry_delivery(request: HtmxHttpRequest, case_id: str) -> HttpResponse:
    access(request.user, case_id)
    try:
        event = services.retry_delivery(case_id=case_id, actor=request.user)
    except CaseError as error:
        if error.kind != "conflict":
            raise_http(error)
        messages.error(request, error.message)
        return redirect_after_post(request, reverse("cases:recovery"))
    messages.success(
        request,
        _("Delivery of %(event)s scheduled again with the same event id.") % {"event": event.pk},
    )
    return redirect_after_post(request, reverse("cases:recovery"))
