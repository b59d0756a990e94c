"""A worker's side of assignment: "Next case", going on and off shift, skipping a case on
a pull queue. Each answers with where to go next and a message that says what happened;
"Next case" never does nothing silently."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from .. import selectors, services
from ..errors import CaseError
from ..forms import ShiftForm, SkipForm, error_summary
from .common import (
    STATUS_OF_KIND,
    HtmxHttpRequest,
    access,
    access_for_work,
    case_url,
    login_required_page,
    raise_http,
    redirect_after_post,
)
from .detail import _render_case


def _require_worker(user: Any) -> None:
    if not selectors.works_any_queue(user):
        raise PermissionDenied(_("Only workers of a queue take cases and keep shifts."))


@login_required_page
@require_POST
def next_case(request: HtmxHttpRequest) -> HttpResponse:
    _require_worker(request.user)
    try:
        case = services.next_case(actor=request.user)
    except CaseError as error:
        if error.kind == "not_found":
            raise_http(error)
        # Off shift, at capacity, inside a focus period: the service says why.
        messages.error(request, error.message)
        return redirect_after_post(request, reverse("cases:queue"))
    if case is None:
        messages.info(
            request,
            _(
                "No eligible case for you right now. Next case hands out open work from the "
                "queues that push cases, matching your skills, clearance and free capacity; "
                "cases of other queues are picked from the list below."
            ),
        )
        return redirect_after_post(request, reverse("cases:queue"))
    messages.success(
        request,
        _("Your next case is %(ref)s (%(band)s). It is yours until you release or decide it.")
        % {"ref": case.case_ref, "band": case.priority_band},
    )
    return redirect_after_post(request, case_url(case.pk))


def _render_shift(
    request: HtmxHttpRequest, *, form: ShiftForm | None = None, status: int = 200
) -> HttpResponse:
    context = {
        "nav": "queue",
        "shift": selectors.shift_status(request.user),
        "shift_form": form,
        "shift_errors": error_summary(form, "shift"),
    }
    template = "cases/queue.html#shift-panel" if request.htmx else "cases/shift.html"
    return render(request, template, context, status=status)


@login_required_page
@require_http_methods(["GET", "HEAD", "POST"])
@vary_on_headers("HX-Request")
def shift(request: HtmxHttpRequest) -> HttpResponse:
    """GET: the worker's shift and the cases they hold. POST: go on or off shift."""
    _require_worker(request.user)
    if request.method != "POST":
        return _render_shift(request)
    form = ShiftForm(request.POST)
    if not form.is_valid():
        return _render_shift(request, form=form, status=422)
    if form.cleaned_data["on_shift"] == "on":
        services.go_on_shift(worker=request.user, actor=request.user)
        messages.success(request, _("You are on shift. Cases can be handed to you again."))
        return redirect_after_post(request, reverse("cases:queue"))
    try:
        handed_off = services.go_off_shift(
            worker=request.user,
            actor=request.user,
            handoff_note=form.cleaned_data["handoff_note"],
        )
    except CaseError as error:
        if error.kind not in STATUS_OF_KIND:
            raise_http(error)
        for path, path_messages in error.fields.items():
            for message in path_messages:
                form.add_error(path if path in form.fields else None, message)
        if not error.fields:
            form.add_error(None, error.message)
        return _render_shift(request, form=form, status=STATUS_OF_KIND[error.kind])
    handed = (
        ngettext(
            "%(count)d case you held went back to its queue with your note.",
            "%(count)d cases you held went back to their queues with your note.",
            handed_off,
        )
        if form.cleaned_data["handoff_note"].strip()
        else ngettext(
            "%(count)d case you held went back to its queue.",
            "%(count)d cases you held went back to their queues.",
            handed_off,
        )
    )
    messages.success(
        request,
        _("You are off shift; nothing new is handed to you.")
        + (" " + handed % {"count": handed_off} if handed_off else ""),
    )
    return redirect_after_post(request, reverse("cases:queue"))


@login_required_page
@require_POST
def skip(request: HtmxHttpRequest, case_id: str) -> HttpResponse:
    access_for_work(request.user, case_id)
    form = SkipForm(request.POST)
    if not form.is_valid():
        return _render_case(
            request,
            access(request.user, case_id),
            status=422,
            action_error=" ".join(form.errors.get("reason", [])),
        )
    try:
        case = services.skip_case(case_id=case_id, actor=request.user, reason=form.reason_text())
    except CaseError as error:
        if error.kind not in STATUS_OF_KIND:
            raise_http(error)
        return _render_case(
            request,
            access(request.user, case_id),
            status=STATUS_OF_KIND[error.kind],
            action_error=error.message,
        )
    messages.success(
        request,
        _("You skipped %(ref)s; it stays in the queue for a colleague. Skips are counted.")
        % {"ref": case.case_ref},
    )
    return redirect_after_post(request, reverse("cases:queue"))
