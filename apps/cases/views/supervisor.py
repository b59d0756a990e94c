"""The supervisor board and the supervisor's actions on cases and workers.

Scope is checked on every request: the board and its actions need supervise_queue on at
least one queue (403 otherwise); an action on a case the user cannot see is 404, on a case
they see but do not supervise 403. The services check again inside their transaction.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse, QueryDict
from django.shortcuts import render
from django.template.defaultfilters import date as format_date
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST, require_safe
from django.views.decorators.vary import vary_on_headers

from .. import selectors, services
from ..access import can_supervise, can_view
from ..errors import CaseError
from ..forms import (
    CLEAR_OVERRIDE,
    AbsenceForm,
    BoardPriorityForm,
    BoardTransferForm,
    CapacityForm,
    DueDateForm,
    PriorityOverrideForm,
    RerouteForm,
    TransferForm,
    default_expiry,
    error_summary,
    other_queues,
    supervisor_forms,
)
from ..models import Case
from .common import (
    STATUS_OF_KIND,
    HtmxHttpRequest,
    access,
    announce,
    case_url,
    login_required_page,
    raise_http,
    redirect_after_post,
)
from .detail import _render_case

MOMENT = "j M Y, H:i T"  # the decision page's format for a date and time


def _require_supervisor(user: Any) -> None:
    # A logged-in user who supervises nothing gets 403, not an empty board: an empty board
    # would claim that nothing needs attention.
    if not selectors.supervises_any_queue(user):
        raise PermissionDenied(_("The board is for supervisors."))


def _require_supervise_case(user: Any, case: Case) -> None:
    if not can_supervise(user, case.queue):
        raise PermissionDenied(_("Only a supervisor of this case's queue may do this."))


def _apply_errors(form: Any, error: CaseError) -> None:
    """Put the service's field errors of invalid input next to the form's fields (those
    the form does not have on top). A conflict is said once, above the form."""
    if error.kind != "invalid":
        return
    for path, path_messages in (error.fields or {}).items():
        target = path if path in form.fields else None
        for message in path_messages:
            form.add_error(target, message)
    if not error.fields:
        form.add_error(None, error.message)


# --- The board ---------------------------------------------------------------------------


@dataclass
class BoardForms:
    transfer: BoardTransferForm
    priority: BoardPriorityForm
    capacity: CapacityForm
    absence: AbsenceForm
    failed: str = ""  # which form the last POST failed in: its error summary takes focus


def _board_forms(
    request: HtmxHttpRequest, workers: list[Any], queues: list[Any], **bound: Any
) -> BoardForms:
    """Unbound forms preselect what a row link asked for (?case=…, ?worker=…)."""
    case = request.GET.get("case", "")
    worker = request.GET.get("worker", "")
    expiry = default_expiry()
    return BoardForms(
        transfer=bound.get("transfer")
        or BoardTransferForm(initial={"case": case}, queues=queues, workers=workers),
        priority=bound.get("priority")
        or BoardPriorityForm(initial={"case": case, "expires_at": expiry}),
        capacity=bound.get("capacity")
        or CapacityForm(initial={"worker": worker, "expires_at": expiry}, workers=workers),
        absence=bound.get("absence") or AbsenceForm(initial={"worker": worker}, workers=workers),
        failed=next(iter(bound), ""),
    )


def _render_board(
    request: HtmxHttpRequest,
    *,
    status: int = 200,
    action_error: str = "",
    **bound: Any,
) -> HttpResponse:
    user = request.user
    board = selectors.supervisor_board(user)
    context: dict[str, Any] = {"nav": "board", "board": board, "poll_url": reverse("cases:board")}
    # As on the queue page: the data region is rendered first so its digest travels with
    # the poll, and an unchanged board answers 204 without touching the page or its focus.
    data_html = render_to_string("cases/board.html#board-data", context, request)
    digest = hashlib.sha256(data_html.encode("utf-8")).hexdigest()[:32]
    context.update(
        data_html=data_html,
        poll_vals=json.dumps(
            {"digest": digest, "breached": board.breached, "alerts": board.alerts}
        ),
    )
    if request.htmx and request.method == "GET":
        if request.GET.get("digest") == digest:
            return HttpResponse(status=204)
        response = render(request, "cases/board.html#board-region", context)
        news = _board_news(board, request.GET)
        if news:
            announce(response, news)
        return response

    queues, workers = selectors.transfer_targets(user)
    forms = _board_forms(request, workers, queues, **bound)
    context.update(
        forms=forms,
        action_error=action_error,
        transfer_errors=error_summary(forms.transfer, "board-transfer"),
        priority_errors=error_summary(forms.priority, "board-priority"),
        capacity_errors=error_summary(forms.capacity, "board-capacity"),
        absence_errors=error_summary(forms.absence, "board-absence"),
        time_zone=timezone.get_current_timezone_name(),
    )
    return render(request, "cases/board.html", context, status=status)


def _board_news(board: selectors.Board, query: QueryDict) -> str:
    """Only what got worse since the previous poll is announced: new breaches, new alerts."""

    def previous(key: str) -> int | None:
        try:
            return int(query.get(key, ""))
        except ValueError:
            return None

    parts = []
    breached_before, alerts_before = previous("breached"), previous("alerts")
    if breached_before is not None and board.breached > breached_before:
        more = board.breached - breached_before
        parts.append(
            ngettext("%(count)d more case breached", "%(count)d more cases breached", more)
            % {"count": more}
        )
    if alerts_before is not None and board.alerts > alerts_before:
        more = board.alerts - alerts_before
        parts.append(
            ngettext(
                "%(count)d new capacity alert: nobody eligible is available",
                "%(count)d new capacity alerts: nobody eligible is available",
                more,
            )
            % {"count": more}
        )
    return ". ".join(parts)


@login_required_page
@require_safe
@vary_on_headers("HX-Request")
def board(request: HtmxHttpRequest) -> HttpResponse:
    _require_supervisor(request.user)
    return _render_board(request)


def _board_case(request: HtmxHttpRequest, form: Any) -> Case | None:
    """The case a board form names, if the user may act on it. Not found (or not visible)
    is a field error (the same words either way: nothing outside the scope is revealed);
    visible but not supervised is 403."""
    case = selectors.case_for_supervisor(request.user, form.cleaned_data["case"])
    if case is None:
        form.add_error(
            "case",
            _("No single active case with this id or reference in the queues you can see."),
        )
        return None
    _require_supervise_case(request.user, case)
    return case


def _board_failed(
    request: HtmxHttpRequest, name: str, form: Any, error: CaseError | None = None
) -> HttpResponse:
    if error is not None:
        if error.kind not in STATUS_OF_KIND:
            raise_http(error)
        _apply_errors(form, error)
        status = STATUS_OF_KIND[error.kind]
        return _render_board(
            request,
            status=status,
            action_error=error.message if error.kind == "conflict" else "",
            **{name: form},
        )
    return _render_board(request, status=422, **{name: form})


def _board_case_action(
    request: HtmxHttpRequest,
    name: str,
    form: Any,
    act: Callable[[HtmxHttpRequest, Case, dict[str, Any]], Case],
    success: Callable[[Case], str],
) -> HttpResponse:
    """A board form that names a case: validate, find the case in scope, act, report."""
    if not form.is_valid():
        return _board_failed(request, name, form)
    case = _board_case(request, form)
    if case is None:
        return _board_failed(request, name, form)
    try:
        changed = act(request, case, form.cleaned_data)
    except CaseError as error:
        return _board_failed(request, name, form, error)
    messages.success(request, success(changed))
    return redirect_after_post(request, reverse("cases:board"))


@login_required_page
@require_POST
def board_transfer(request: HtmxHttpRequest) -> HttpResponse:
    _require_supervisor(request.user)
    queues, workers = selectors.transfer_targets(request.user)
    form = BoardTransferForm(request.POST, queues=queues, workers=workers)
    return _board_case_action(request, "transfer", form, _transfer, _transferred_message)


@login_required_page
@require_POST
def board_priority(request: HtmxHttpRequest) -> HttpResponse:
    _require_supervisor(request.user)
    form = BoardPriorityForm(request.POST)
    return _board_case_action(request, "priority", form, _override, _priority_message)


@login_required_page
@require_POST
def board_capacity(request: HtmxHttpRequest) -> HttpResponse:
    _require_supervisor(request.user)
    _queues, workers = selectors.transfer_targets(request.user)
    form = CapacityForm(request.POST, workers=workers)
    if not form.is_valid():
        return _board_failed(request, "capacity", form)
    # The choices are the workers of the supervised queues, so a valid form names one.
    worker = selectors.worker_for_supervisor(request.user, form.cleaned_data["worker"])
    if worker is None:
        raise PermissionDenied(_("You do not supervise a queue this person works."))
    try:
        adjustment = services.adjust_capacity(
            worker=worker,
            capacity=form.cleaned_data["capacity"],
            reason=form.cleaned_data["reason"],
            expires_at=form.cleaned_data["expires_at"],
            actor=request.user,
        )
    except CaseError as error:
        return _board_failed(request, "capacity", form, error)
    messages.success(
        request,
        _("Capacity of %(name)s set to %(capacity)d units until %(time)s.")
        % {
            "name": worker.get_username(),
            "capacity": adjustment.capacity,
            "time": format_date(adjustment.expires_at, MOMENT),
        },
    )
    return redirect_after_post(request, reverse("cases:board"))


@login_required_page
@require_POST
def board_absence(request: HtmxHttpRequest) -> HttpResponse:
    """Absence recovery: a supervisor takes an absent worker off shift; every case they
    hold goes back to its queue (their drafts are kept), recorded as kind "absence"."""
    _require_supervisor(request.user)
    _queues, workers = selectors.transfer_targets(request.user)
    form = AbsenceForm(request.POST, workers=workers)
    if not form.is_valid():
        return _board_failed(request, "absence", form)
    worker = selectors.worker_for_supervisor(request.user, form.cleaned_data["worker"])
    if worker is None:
        raise PermissionDenied(_("You do not supervise a queue this person works."))
    try:
        returned = services.go_off_shift(worker=worker, actor=request.user, absence=True)
    except CaseError as error:
        return _board_failed(request, "absence", form, error)
    messages.success(
        request,
        ngettext(
            "%(name)s is off shift; %(count)d case went back to its queue.",
            "%(name)s is off shift; %(count)d cases went back to their queues.",
            returned,
        )
        % {"name": worker.get_username(), "count": returned},
    )
    return redirect_after_post(request, reverse("cases:board"))


# --- Shared by the board and the decision page ---------------------------------------------


def _transfer(request: HtmxHttpRequest, case: Case, data: dict[str, Any]) -> Case:
    to_user = None
    if data.get("to_user"):
        to_user = selectors.worker_for_supervisor(request.user, data["to_user"])
        if to_user is None:
            raise CaseError.invalid("to_user", _("Choose a worker of a queue you supervise."))
    return services.transfer_case(
        case_id=case.pk,
        actor=request.user,
        to_queue=data.get("to_queue") or None,
        to_user=to_user,
        reason=data["reason"],
        note=data.get("note", ""),
    )


def _transferred_message(case: Case) -> str:
    if case.assignee_id:
        return _("%(ref)s now lies with %(name)s in %(queue)s.") % {
            "ref": case.case_ref,
            "name": case.assignee.get_username(),
            "queue": case.queue,
        }
    return _("%(ref)s moved to %(queue)s.") % {"ref": case.case_ref, "queue": case.queue}


def _override(request: HtmxHttpRequest, case: Case, data: dict[str, Any]) -> Case:
    if data["band"] == CLEAR_OVERRIDE:
        return services.clear_priority_override(
            case_id=case.pk, actor=request.user, reason=data["reason"]
        )
    return services.override_priority(
        case_id=case.pk,
        actor=request.user,
        band=data["band"],
        reason=data["reason"],
        expires_at=data["expires_at"],
    )


def _priority_message(case: Case) -> str:
    if case.priority_override_band:
        return _("%(ref)s is %(band)s until %(time)s.") % {
            "ref": case.case_ref,
            "band": case.priority_band,
            "time": format_date(case.priority_override_expires_at, MOMENT),
        }
    return _("%(ref)s has no override; its priority is %(band)s again by the policy.") % {
        "ref": case.case_ref,
        "band": case.priority_band,
    }


# --- The decision page's supervisor panel ---------------------------------------------------


def _supervised_case(request: HtmxHttpRequest, case_id: str) -> Case:
    case = access(request.user, case_id)  # 404 outside the user's scope
    _require_supervise_case(request.user, case)  # 403 in scope without supervise_queue
    return case


def _panel_failed(
    request: HtmxHttpRequest, case_id: str, name: str, form: Any, error: CaseError | None = None
) -> HttpResponse:
    status = 422
    action_error = ""
    if error is not None:
        if error.kind not in STATUS_OF_KIND:
            raise_http(error)
        _apply_errors(form, error)
        status = STATUS_OF_KIND[error.kind]
        action_error = error.message if error.kind == "conflict" else ""
    case = access(request.user, case_id)
    return _render_case(
        request,
        case,
        status=status,
        action_error=action_error,
        supervisor_forms=supervisor_forms(request.user, case, **{name: form}),
    )


@login_required_page
@require_POST
def transfer(request: HtmxHttpRequest, case_id: str) -> HttpResponse:
    case = _supervised_case(request, case_id)
    queues, workers = selectors.transfer_targets(request.user)
    form = TransferForm(request.POST, queues=other_queues(queues, case), workers=workers)
    if not form.is_valid():
        return _panel_failed(request, case_id, "transfer", form)
    try:
        moved = _transfer(request, case, form.cleaned_data)
    except CaseError as error:
        return _panel_failed(request, case_id, "transfer", form, error)
    messages.success(request, _transferred_message(moved))
    return redirect_after_post(request, case_url(case_id))


@login_required_page
@require_POST
def reroute(request: HtmxHttpRequest, case_id: str) -> HttpResponse:
    case = _supervised_case(request, case_id)
    form = RerouteForm(request.POST, queues=other_queues(selectors.reroute_targets(), case))
    if not form.is_valid():
        return _panel_failed(request, case_id, "reroute", form)
    try:
        moved = services.reroute_case(
            case_id=case.pk,
            actor=request.user,
            to_queue=form.cleaned_data["to_queue"],
            reason=form.cleaned_data["reason"],
        )
    except CaseError as error:
        return _panel_failed(request, case_id, "reroute", form, error)
    messages.success(
        request,
        _("%(ref)s rerouted to %(queue)s; recorded as a routing defect.")
        % {"ref": moved.case_ref, "queue": moved.queue},
    )
    # The supervisor may not see the case's new queue; the board is where they act next.
    destination = (
        case_url(case_id) if can_view(request.user, moved.queue) else reverse("cases:board")
    )
    return redirect_after_post(request, destination)


@login_required_page
@require_POST
def override_priority(request: HtmxHttpRequest, case_id: str) -> HttpResponse:
    case = _supervised_case(request, case_id)
    form = PriorityOverrideForm(request.POST)
    if not form.is_valid():
        return _panel_failed(request, case_id, "priority", form)
    try:
        changed = _override(request, case, form.cleaned_data)
    except CaseError as error:
        return _panel_failed(request, case_id, "priority", form, error)
    messages.success(request, _priority_message(changed))
    return redirect_after_post(request, case_url(case_id))


@login_required_page
@require_POST
def adjust_due(request: HtmxHttpRequest, case_id: str) -> HttpResponse:
    case = _supervised_case(request, case_id)
    form = DueDateForm(request.POST)
    if not form.is_valid():
        return _panel_failed(request, case_id, "due", form)
    try:
        changed = services.adjust_due(
            case_id=case.pk,
            actor=request.user,
            due_at=form.cleaned_data["due_at"],
            reason=form.cleaned_data["reason"],
        )
    except CaseError as error:
        return _panel_failed(request, case_id, "due", form, error)
    messages.success(
        request,
        _("%(ref)s is now due %(time)s; the original due date is kept.")
        % {
            "ref": changed.case_ref,
            "time": format_date(changed.due_at, MOMENT),
        },
    )
    return redirect_after_post(request, case_url(case_id))
