"""The queue page: the cases of the user's queues, sortable, filterable, saved views, and a
poll that swaps only when something shown changed and announces only new arrivals."""

from __future__ import annotations

import hashlib
import json

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ObjectDoesNotExist
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST, require_safe
from django.views.decorators.vary import vary_on_headers

from apps.preferences import services as preferences
from apps.preferences.selectors import saved_views_of

from .. import selectors
from ..forms import QueueFilterForm, SavedViewForm, filter_querystring, sort_headers
from .common import HtmxHttpRequest, announce, login_required_page


def _queue_url(querystring: str = "") -> str:
    url = reverse("cases:queue")
    return f"{url}?{querystring}" if querystring else url


@login_required_page
@require_safe
@vary_on_headers("HX-Request")
def queue(request: HtmxHttpRequest) -> HttpResponse:
    return _render_queue(request, request.GET)


def _render_queue(
    request: HtmxHttpRequest,
    query: QueryDict,
    *,
    saved_view_form: SavedViewForm | None = None,
    status: int = 200,
) -> HttpResponse:
    user = request.user
    rendered_at = timezone.now()
    form = QueueFilterForm(
        query,
        queues=selectors.queue_choices(user),
        exception_classes=selectors.exception_class_choices(),
    )
    filters = form.filters()
    cases = selectors.queue_cases(user, filters)
    page = Paginator(cases, settings.EXCEPTION_DESK["QUEUE_PAGE_SIZE"]).get_page(query.get("page"))
    querystring = filter_querystring(filters)
    page_querystring = (
        filter_querystring(filters, page=page.number) if page.number > 1 else querystring
    )
    context = {
        "nav": "queue",
        "form": form,
        "filters": filters,
        "page": page,
        "querystring": querystring,
        "poll_url": _queue_url(page_querystring),
        "headers": sort_headers(filters),
        "previous_querystring": filter_querystring(filters, page=page.previous_page_number())
        if page.has_previous()
        else "",
        "next_querystring": filter_querystring(filters, page=page.next_page_number())
        if page.has_next()
        else "",
        "rendered_at": rendered_at,
    }
    # The swappable results are rendered first so their digest can travel with the poll:
    # an unchanged table answers 204 and nothing in the page (or its focus) is touched.
    results_html = render_to_string("cases/queue.html#queue-results", context, request)
    digest = hashlib.sha256(results_html.encode("utf-8")).hexdigest()[:32]
    context.update(
        results_html=results_html,
        poll_vals=json.dumps({"since": rendered_at.isoformat(), "digest": digest}),
    )

    if request.htmx:
        if query.get("digest") == digest:
            return HttpResponse(status=204)
        response = render(request, "cases/queue.html#queue-table", context)
        since = parse_datetime(query.get("since") or "")
        arrivals = selectors.count_arrivals(cases, since) if since and since.tzinfo else 0
        if arrivals:
            announce(
                response,
                ngettext("%(count)d new case", "%(count)d new cases", arrivals)
                % {"count": arrivals},
            )
        return response

    context.update(
        saved_views=saved_views_of(user),
        saved_view_form=saved_view_form or SavedViewForm(initial={"querystring": querystring}),
    )
    return render(request, "cases/queue.html", context, status=status)


@login_required_page
@require_POST
def save_view(request: HtmxHttpRequest) -> HttpResponse:
    form = SavedViewForm(request.POST)
    if not form.is_valid():
        query = QueryDict(request.POST.get("querystring", ""))
        return _render_queue(request, query, saved_view_form=form, status=422)
    view = preferences.save_view(
        user=request.user,
        name=form.cleaned_data["name"],
        querystring=form.cleaned_data["querystring"],
    )
    messages.success(request, _("Saved the view “%(name)s”.") % {"name": view.name})
    return redirect(_queue_url(view.querystring))


@login_required_page
@require_POST
def delete_view(request: HtmxHttpRequest, view_id: int) -> HttpResponse:
    try:
        preferences.delete_view(user=request.user, view_id=view_id)
    except ObjectDoesNotExist as missing:
        raise Http404(_("No such saved view.")) from missing
    messages.success(request, _("Deleted the saved view."))
    return redirect(_queue_url())
