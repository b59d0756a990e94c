"""What every worker page shares: login for HTMX requests, access, and CaseError → HTTP."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import wraps
from typing import Any, NoReturn

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, resolve_url
from django.urls import reverse
from django_htmx.http import HttpResponseClientRedirect
from django_htmx.middleware import HtmxDetails

from ..access import access_case, require_work
from ..errors import CaseError
from ..models import Case


class HtmxHttpRequest(HttpRequest):
    """A request that passed django-htmx's middleware (`request.htmx` is always set)."""

    htmx: HtmxDetails


# invalid input is re-rendered with its errors (422); a lost race shows what won (409).
STATUS_OF_KIND = {"invalid": 422, "conflict": 409}


def login_required_page(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """login_required that also works for HTMX: a poll or partial whose session ended gets
    a client redirect to the login page instead of a login form swapped into the page."""

    @wraps(view)
    def wrapper(request: HtmxHttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.user.is_authenticated:
            return view(request, *args, **kwargs)
        if request.htmx:
            page = request.htmx.current_url_abs_path or request.get_full_path()
            return HttpResponseClientRedirect(
                redirect_to_login(page, resolve_url(settings.LOGIN_URL)).url
            )
        return redirect_to_login(request.get_full_path())

    return wrapper


def raise_http(error: CaseError) -> NoReturn:
    if error.kind == "forbidden":
        raise PermissionDenied(error.message)
    raise Http404(error.message)


def access(user: Any, case_id: str) -> Case:
    """The case if the user may see it; 404 otherwise (its existence is not revealed)."""
    try:
        return access_case(user, case_id)
    except CaseError as error:
        raise_http(error)


def access_for_work(user: Any, case_id: str) -> Case:
    """404 outside the user's scope, 403 in scope without work_queue. The service checks
    again inside its transaction; this check makes a read-only role's answer a clear 403
    even where the service would only see a lease mismatch."""
    case = access(user, case_id)
    try:
        require_work(user, case)
    except CaseError as error:
        raise_http(error)
    return case


def case_url(case_id: str) -> str:
    return reverse("cases:detail", args=[case_id])


def redirect_after_post(request: HtmxHttpRequest, url: str) -> HttpResponse:
    """Post/redirect/get; an HTMX request gets HX-Redirect so the whole page reloads."""
    if request.htmx:
        return HttpResponseClientRedirect(url)
    return redirect(url)


def announce(response: HttpResponse, message: str) -> HttpResponse:
    """Ask the page to say `message` in its polite live region (static/js/app.js)."""
    response["HX-Trigger"] = json.dumps({"announce": {"message": str(message)}})
    return response
