"""'No eligible worker': a case nobody on shift can take is raised to the supervisors at once,
never left to cycle silently.

A worker counts for a case when they may work its queue, are on shift, are eligible for it
(every hard constraint) and have room for its weight right now (held weights + the case's
<= effective capacity). Capacity counts because an eligible worker who is full cannot take
the case either: if every eligible worker is full, the case would wait unseen just the same,
and that is the "capacity exception" the supervisor board shows. The alert's explanation
says which it is, e.g. "No eligible worker on shift: wendy is at capacity (10 of 10 units);
walter needs skill refunds ≥ 3".

One open alert per case (a partial unique constraint); raising twice, even from two
processes at once, returns the open one. It is cleared when someone takes the case (claim,
"Next case", push assignment, transfer to a person) or the case leaves the queue's open
work; `check_capacity_alerts` re-checks from Celery beat.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.routing.eligibility import is_eligible

from ..access import case_requirements, evidence_classifications, supervisors_of
from ..models import CapacityAlert, Case, State
from .capacity import Staff, staff_of

ALERT_KIND = "capacity.no_eligible_worker"
EXPLANATION_LIMIT = 500


def blockers_for(case: Case, staff: list[Staff], *, classifications: Any = None) -> list[str]:
    """Why nobody in `staff` can take the case now; [] when someone can."""
    requirements = case_requirements(case, classifications=classifications)
    blockers: list[str] = []
    for member in staff:
        eligible, reasons = is_eligible(member.facts, requirements)
        name = member.user.get_username()
        if not eligible:
            blockers.append(f"{name} " + "; ".join(str(reason) for reason in reasons))
        elif member.free < case.workload_weight:
            blockers.append(
                _("%(name)s is at capacity (%(load)s of %(capacity)s units)")
                % {"name": name, "load": member.load, "capacity": member.capacity}
            )
        else:
            return []
    if not staff:
        blockers.append(_("nobody may work queue %(queue)s") % {"queue": case.queue.name})
    return blockers


def explain(blockers: list[str]) -> str:
    text = _("No eligible worker on shift: %(why)s") % {"why": ", ".join(blockers)}
    return text if len(text) <= EXPLANATION_LIMIT else text[: EXPLANATION_LIMIT - 1] + "…"


def raise_if_no_eligible_worker(*, case: Case, now: datetime | None = None) -> CapacityAlert | None:
    """Raise (or return the open) alert when nobody can take this open case now; None when
    someone can, or the case is not open. Supervisors of the queue are notified once, when
    the alert is first raised. Runs after the change that made the case open has committed."""
    now = now or timezone.now()
    case = Case.objects.select_related("queue").get(pk=case.pk)
    if case.state != State.OPEN:
        return None
    blockers = blockers_for(case, staff_of(case.queue, now=now))
    if not blockers:
        return None
    return _raise(case, blockers, now=now)[0]


def _raise(case: Case, blockers: list[str], *, now: datetime) -> tuple[CapacityAlert, bool]:
    existing = CapacityAlert.objects.filter(case=case, cleared_at__isnull=True).first()
    if existing is not None:
        return existing, False
    explanation = explain(blockers)
    try:
        with transaction.atomic():
            alert = CapacityAlert.objects.create(
                case=case, queue=case.queue, explanation=explanation, raised_at=now
            )
            _notify_supervisors(case, explanation)
    except IntegrityError:
        # Another process raised it between our read and our insert: one open alert per case.
        return CapacityAlert.objects.get(case=case, cleared_at__isnull=True), False
    return alert, True


def _notify_supervisors(case: Case, explanation: str) -> None:
    try:
        from .notifications import notify
    except ImportError:  # notifications arrive with the escalation work; the alert stands
        return
    message = _("Case %(case)s (%(ref)s) in %(queue)s: %(why)s") % {
        "case": case.pk,
        "ref": case.case_ref,
        "queue": case.queue.display_name or case.queue.name,
        "why": explanation,
    }
    for supervisor in supervisors_of(case.queue):
        notify(user=supervisor, case=case, kind=ALERT_KIND, message=message)


def clear_capacity_alert(*, case: Case, now: datetime | None = None) -> int:
    """Clear the case's open alert (someone took the case). Returns how many were cleared."""
    return CapacityAlert.objects.filter(case_id=case.pk, cleared_at__isnull=True).update(
        cleared_at=now or timezone.now()
    )


def check_capacity_alerts(*, now: datetime | None = None) -> int:
    """Beat sweep: clear alerts whose case is no longer open (someone took it, or it was
    transferred, closed or decided), then raise one for every open case nobody can take.
    Returns how many alerts this run raised. Idempotent; two runs at once are harmless (the
    clear is a conditional update, the raise is guarded by the one-open-alert constraint)."""
    now = now or timezone.now()
    CapacityAlert.objects.filter(cleared_at__isnull=True).exclude(case__state=State.OPEN).update(
        cleared_at=now
    )
    candidates = list(
        Case.objects.filter(state=State.OPEN)
        .exclude(Exists(CapacityAlert.objects.filter(case=OuterRef("pk"), cleared_at__isnull=True)))
        .select_related("queue")
        .order_by("priority_band", "due_at", "created_at", "pk")[:1000]
    )
    classifications = evidence_classifications(case.pk for case in candidates)
    staff_by_queue: dict[int, list[Staff]] = {}
    raised = 0
    for case in candidates:
        if case.queue_id not in staff_by_queue:
            staff_by_queue[case.queue_id] = staff_of(case.queue, now=now)
        blockers = blockers_for(
            case, staff_by_queue[case.queue_id], classifications=classifications.get(case.pk, ())
        )
        if blockers:
            raised += _raise(case, blockers, now=now)[1]
    return raised
