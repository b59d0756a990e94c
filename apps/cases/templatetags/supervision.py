"""Tags for the regions issue 3 adds to pages whose views belong to the worker pages: the
notification badge in the navigation, the shift panel and "Next case" on the queue page,
and the supervisor panel of the decision page. Each reads only for a user who may see it."""

from __future__ import annotations

from typing import Any

from django import template

from apps.routing.models import AssignmentModel

from ..access import can_supervise
from ..forms import SkipForm, SupervisorForms, supervisor_forms
from ..models import Case, State
from ..selectors import CasePage, ShiftStatus, shift_status
from ..views.notifications import badge_context

register = template.Library()

# Queues whose workers pick from the list, where passing on an open case means something.
PULL_MODELS = {AssignmentModel.FIFO_PULL, AssignmentModel.BLEND}


def _user(context: template.Context) -> Any:
    request = context.get("request")
    if request is None or not request.user.is_authenticated:
        return None
    return request.user


@register.simple_tag(takes_context=True)
def notification_badge_context(context: template.Context) -> dict[str, Any]:
    user = _user(context)
    return badge_context(user) if user is not None else {}


@register.simple_tag(takes_context=True)
def worker_shift(context: template.Context) -> ShiftStatus | None:
    user = _user(context)
    return shift_status(user) if user is not None else None


@register.simple_tag(takes_context=True)
def supervisor_panel(context: template.Context, case: Case) -> SupervisorForms | None:
    """The panel's forms: as the failed action left them (bound, with errors), else blank.
    None for someone who does not supervise the case's queue: the panel is not shown."""
    user = _user(context)
    if user is None or not can_supervise(user, case.queue):
        return None
    return context.get("supervisor_forms") or supervisor_forms(user, case)


@register.simple_tag
def skip_form(page: CasePage) -> SkipForm | None:
    """Skip, for a worker of the queue: a case they hold (pulled or pushed to them), or an
    open one they could claim in a queue whose workers pick from the list."""
    case = page.case
    if not page.can_work:
        return None
    if page.holds_lease:
        return SkipForm()
    pulled = case.queue.assignment_model in PULL_MODELS
    if case.state == State.OPEN and pulled and not page.ineligible_reason:
        return SkipForm()
    return None
