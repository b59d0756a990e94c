"""The escalation ladder: as a case's time runs out, each level of its class's ladder fires
once (reminder, supervisor alert, priority bump, overflow transfer, control owner).

Guarantees:
- Once per level. Each case is escalated under its row lock (SKIP LOCKED: a case another
  sweep holds is left to it) and every level is an Escalation row whose unique
  (case, level) constraint backs the lock, so overlapping beats fire a level once.
- Never a business decision. Escalation only notifies, re-orders and moves the case between
  queues; it never creates a Decision, never writes a case.decided event and never changes
  the state of a case (an expired case stays open, claimed or waiting; a decided one is not
  even looked at). Release case 8.
- Breaches are kept. breached_at is set once, when the case is first seen past due, and is
  never cleared (a later due date does not erase it).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _
from guardian.shortcuts import get_users_with_perms

from apps.audit.services import Actor, record
from apps.routing.calendar import CalendarSpec, working_seconds_between
from apps.routing.models import EscalationAction, EscalationStep, Queue, Severity

from ..errors import CaseError
from ..models import Case, Escalation, State
from .notifications import NotificationKind, notify
from .overrides import BANDS, refresh_with_override, set_override

logger = logging.getLogger(__name__)

ACTIVE = (State.OPEN, State.CLAIMED, State.WAITING)
SWEEP = Actor.system("escalation-sweep")
SEVERITY_RANK = {value: rank for rank, value in enumerate(Severity.values)}
# A bump lasts a day; the override sweep then hands the band back to the policy, which by
# then ranks an overdue case high on due-time proximity anyway.
BUMP_DURATION = timedelta(hours=24)
# An overflow transfer runs after the escalation row commits (the transfer service owns its
# own transaction). A row still "pending" this long after it fired means the sweep that
# fired it died in between; a later sweep finishes the transfer. Longer than any sweep's
# time limit, so the first sweep is certainly gone.
STALE_PENDING_TRANSFER = timedelta(minutes=10)
CASE_FIELDS = [
    "escalation_level",
    "priority_band",
    "priority_score",
    "priority_components",
    "priority_policy_version",
    "priority_explanation",
    "priority_override_band",
    "priority_override_reason",
    "priority_override_by",
    "priority_override_expires_at",
    "updated_at",
]


# --- who hears about it -----------------------------------------------------------------
# Guardian is consulted here rather than in access.py because these are not authorization
# checks on the acting user but the inverse question: who holds a permission on a queue.


def users_with_queue_perm(queue: Queue, codename: str) -> QuerySet[Any]:
    """Active users holding ``codename`` on the queue, directly or through a group
    (superusers are not implied: an escalation goes to the people named on the queue)."""
    users = get_users_with_perms(queue, only_with_perms_in=[codename], with_group_users=True)
    return users.filter(is_active=True).order_by("pk")


def queue_supervisors(queue: Queue) -> list[Any]:
    return list(users_with_queue_perm(queue, "supervise_queue"))


def queue_workers(queue: Queue) -> list[Any]:
    return list(users_with_queue_perm(queue, "work_queue"))


# --- when -------------------------------------------------------------------------------


def remaining_percent(case: Case, now: datetime, calendar: CalendarSpec | None = None) -> float:
    """Time left before the due time as a percentage of the case's service target (the span
    from filing to its current due time): 100 at filing, 0 at the due time, negative once
    overdue (-50: overdue by half the target).

    Both are counted in working time on the queue's business calendar, as the target was:
    a case filed on Friday afternoon has not used up its target over the weekend, and a
    case overdue on Friday evening is not escalated further by the weekend passing.
    """
    span = max(working_seconds_between(case.created_at, case.due_at, calendar), 60)
    left = working_seconds_between(now, case.due_at, calendar)
    return 100.0 * left / span


def step_reached(step: EscalationStep, *, percent: float, severity: str) -> bool:
    """Time remaining and impact decide, not elapsed age alone."""
    if percent > step.remaining_percent:
        return False
    if not step.min_severity:
        return True
    return SEVERITY_RANK.get(severity, 0) >= SEVERITY_RANK[step.min_severity]


def _format_left(case: Case, now: datetime) -> str:
    seconds = int((case.due_at - now).total_seconds())
    minutes = abs(seconds) // 60
    if minutes < 120:
        amount = _("%(count)d min") % {"count": minutes}
    elif minutes < 48 * 60:
        amount = _("%(count)d h") % {"count": minutes // 60}
    else:
        amount = _("%(count)d d") % {"count": minutes // (24 * 60)}
    if seconds < 0:
        return _("overdue by %(amount)s") % {"amount": amount}
    return _("due in %(amount)s") % {"amount": amount}


# --- the sweep ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _PendingTransfer:
    case_id: str
    escalation_id: int
    level: int
    to_queue: str


def _ladders() -> dict[int, list[EscalationStep]]:
    ladders: dict[int, list[EscalationStep]] = defaultdict(list)
    for step in EscalationStep.objects.order_by("exception_class_id", "level"):
        ladders[step.exception_class_id].append(step)
    return ladders


def _candidate_ids(ladders: dict[int, list[EscalationStep]], now: datetime) -> list[str]:
    """Active cases with a level due that has not fired, or past due and not yet marked
    breached. A cheap pre-selection: every case is checked again under its lock."""
    rows = list(
        Case.objects.filter(state__in=ACTIVE)
        .filter(
            Q(exception_class_id__in=list(ladders)) | Q(breached_at__isnull=True, due_at__lt=now)
        )
        .only(
            "pk",
            "queue_id",
            "exception_class_id",
            "severity",
            "created_at",
            "due_at",
            "breached_at",
        )
        .order_by("due_at", "pk")
    )
    calendars = {
        queue.pk: CalendarSpec.of(queue.calendar)
        for queue in Queue.objects.select_related("calendar")
    }
    reached: dict[str, set[int]] = {}
    chosen: list[str] = []
    for case in rows:
        percent = remaining_percent(case, now, calendars.get(case.queue_id))
        levels = {
            step.level
            for step in ladders.get(case.exception_class_id, [])
            if step_reached(step, percent=percent, severity=case.severity)
        }
        if case.breached_at is None and case.due_at < now:
            chosen.append(case.pk)  # past due and not yet marked, whatever its ladder says
        elif levels:
            reached[case.pk] = levels
    fired: dict[str, set[int]] = defaultdict(set)
    ids = list(reached)
    for start in range(0, len(ids), 1000):
        for case_id, level in Escalation.objects.filter(
            case_id__in=ids[start : start + 1000]
        ).values_list("case_id", "level"):
            fired[case_id].add(level)
    chosen.extend(case_id for case_id, levels in reached.items() if levels - fired[case_id])
    return chosen


def escalate_due_cases(*, now: datetime | None = None) -> int:
    """Fire every escalation level that is due and has not fired; mark first breaches.
    Returns how many escalation levels fired. Idempotent and safe when sweeps overlap."""
    now = now or timezone.now()
    ladders = _ladders()
    fired = 0
    _finish_stale_transfers(now)
    for case_id in _candidate_ids(ladders, now):
        count, transfers = _escalate_case(case_id, ladders, now)
        fired += count
        for pending in transfers:
            _run_overflow_transfer(pending)
    return fired


def _escalate_case(
    case_id: str, ladders: dict[int, list[EscalationStep]], now: datetime
) -> tuple[int, list[_PendingTransfer]]:
    transfers: list[_PendingTransfer] = []
    fired = 0
    with transaction.atomic(durable=True):
        case = (
            Case.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related(
                "queue",
                "queue__calendar",
                "queue__overflow_queue",
                "exception_class",
                "exception_class__control_owner",
                "assignee",
                "priority_override_by",
            )
            .filter(pk=case_id, state__in=ACTIVE)
            .first()
        )
        if case is None:
            return 0, []  # decided or closed meanwhile, or another sweep holds it
        _mark_breach(case, now)
        already = set(case.escalations.values_list("level", flat=True))
        percent = remaining_percent(case, now, CalendarSpec.of(case.queue.calendar))
        previous_level = case.escalation_level
        for step in ladders.get(case.exception_class_id, []):
            if step.level in already or not step_reached(
                step, percent=percent, severity=case.severity
            ):
                continue
            detail: dict[str, Any] = {
                # Whole percent: a float such as -0.0 would not survive the JSON column
                # unchanged, and the audit hash is taken over what is stored.
                "remaining_percent": round(percent),
                "threshold_percent": step.remaining_percent,
                "severity": case.severity,
                "due_at": case.due_at.isoformat(),
                "queue": case.queue.name,
            }
            try:
                # The savepoint keeps the sweep's transaction usable if the unique constraint
                # ever trips (it cannot while we hold the row lock, but the constraint is the
                # guarantee, the lock the optimisation).
                with transaction.atomic():
                    escalation = Escalation.objects.create(
                        case=case, level=step.level, action=step.action, fired_at=now, detail={}
                    )
            except IntegrityError:
                continue
            pending = _act(case, step, escalation, detail, now)
            if pending is not None:
                transfers.append(pending)
            escalation.detail = detail
            escalation.save(update_fields=["detail"])
            case.escalation_level = max(case.escalation_level, step.level)
            record(
                stream=case.pk,
                actor=SWEEP,
                action="case.escalated",
                before={"escalation_level": previous_level},
                after={
                    "escalation_level": case.escalation_level,
                    "level": step.level,
                    "action": step.action,
                    "detail": detail,
                },
                reason=_("L%(level)d %(action)s: %(left)s")
                % {
                    "level": step.level,
                    "action": step.action,
                    "left": _format_left(case, now),
                },
                at=now,
            )
            previous_level = case.escalation_level
            fired += 1
        if fired:
            case.save(update_fields=CASE_FIELDS)
    return fired, transfers


def _mark_breach(case: Case, now: datetime) -> None:
    if case.breached_at is not None or now <= case.due_at:
        return
    # Conditional: only the first sweep to see the breach records it, and never over an
    # earlier one.
    if Case.objects.filter(pk=case.pk, breached_at__isnull=True).update(breached_at=case.due_at):
        case.breached_at = case.due_at
        record(
            stream=case.pk,
            actor=SWEEP,
            action="case.breached",
            before={"breached_at": None},
            after={
                "breached_at": case.due_at.isoformat(),
                "due_at": case.due_at.isoformat(),
                "original_due_at": case.original_due_at.isoformat(),
            },
            reason=_("past its due time"),
            at=now,
        )


def _notify_all(recipients: list[Any], *, case: Case, kind: str, message: str) -> list[str]:
    seen: set[int] = set()
    names = []
    for user in recipients:
        if user.pk in seen:
            continue
        seen.add(user.pk)
        notify(user=user, case=case, kind=kind, message=message)
        names.append(user.get_username())
    return names


def _act(
    case: Case,
    step: EscalationStep,
    escalation: Escalation,
    detail: dict[str, Any],
    now: datetime,
) -> _PendingTransfer | None:
    """Carry out one level on the locked case. Fills ``detail``; returns an overflow transfer
    to run after commit, if any."""
    context = {
        "ref": case.case_ref,
        "cls": case.exception_class.display_name,
        "queue": case.queue.display_name,
        "left": _format_left(case, now),
        "level": step.level,
    }
    action = step.action
    if action == EscalationAction.REMIND_ASSIGNEE:
        recipients = [case.assignee] if case.assignee_id else queue_workers(case.queue)
        detail["recipients"] = _notify_all(
            recipients,
            case=case,
            kind=NotificationKind.REMINDER,
            message=_("Reminder: %(ref)s (%(cls)s) is %(left)s.") % context,
        )
    elif action == EscalationAction.ALERT_SUPERVISOR:
        detail["recipients"] = _alert_supervisors(case, case.queue, context)
    elif action == EscalationAction.BUMP_PRIORITY:
        detail.update(_bump_priority(case, step.level, now))
    elif action == EscalationAction.TRANSFER_OVERFLOW:
        overflow = case.queue.overflow_queue
        if overflow is None or overflow.pk == case.queue_id:
            detail["transfer"] = "no overflow queue"
            detail["recipients"] = _alert_supervisors(
                case,
                case.queue,
                context,
                message=_(
                    "L%(level)d: %(ref)s (%(cls)s) is %(left)s and %(queue)s has no "
                    "overflow queue to send it to."
                )
                % context,
            )
            return None
        detail.update(transfer="pending", from_queue=case.queue.name, to_queue=overflow.name)
        return _PendingTransfer(
            case_id=case.pk, escalation_id=escalation.pk, level=step.level, to_queue=overflow.name
        )
    elif action == EscalationAction.CONTROL_OWNER:
        owner = case.exception_class.control_owner
        if owner is not None and owner.is_active:
            detail["recipients"] = _notify_all(
                [owner],
                case=case,
                kind=NotificationKind.CONTROL_OWNER,
                message=_(
                    "Control owner escalation (L%(level)d): %(ref)s (%(cls)s) in %(queue)s "
                    "is %(left)s."
                )
                % context,
            )
        else:
            detail["control_owner"] = None
            detail["recipients"] = _alert_supervisors(
                case,
                case.queue,
                context,
                message=_(
                    "L%(level)d: %(ref)s (%(cls)s) is %(left)s; the class has no control "
                    "owner, so this comes to you."
                )
                % context,
            )
    else:  # an action added to the model but not taught to the sweep: say so, loudly
        logger.error("unknown escalation action %s on %s", action, case.pk)
        detail["error"] = f"unknown action {action}"
    return None


def _alert_supervisors(
    case: Case, queue: Queue, context: dict[str, Any], *, message: str | None = None
) -> list[str]:
    return _notify_all(
        queue_supervisors(queue),
        case=case,
        kind=NotificationKind.SUPERVISOR_ALERT,
        message=message
        or _("Escalation L%(level)d: %(ref)s (%(cls)s) in %(queue)s is %(left)s.") % context,
    )


def _bump_priority(case: Case, level: int, now: datetime) -> dict[str, Any]:
    """Raise the band one step through a priority override by the rule (no person), which
    the override sweep ends after a day; P1 stays P1."""
    refresh_with_override(case, now=now)
    from_band = case.priority_band
    position = BANDS.index(from_band) if from_band in BANDS else len(BANDS) - 1
    if position == 0:
        return {"from_band": from_band, "to_band": from_band, "note": "already the top band"}
    to_band = BANDS[position - 1]
    expires_at = now + BUMP_DURATION
    reason = f"escalation L{level}"
    set_override(case, band=to_band, reason=reason, expires_at=expires_at, by=None, now=now)
    record(
        stream=case.pk,
        actor=SWEEP,
        action="case.priority_overridden",
        before={"priority": from_band},
        after={
            "priority": case.priority_band,
            "override": {
                "band": to_band,
                "reason": reason,
                "by": None,
                "expires_at": expires_at.isoformat(),
            },
            "explanation": case.priority_explanation,
        },
        reason=reason,
        at=now,
    )
    return {
        "from_band": from_band,
        "to_band": to_band,
        "override_expires_at": expires_at.isoformat(),
    }


# --- overflow transfers, after the escalation commits --------------------------------------


def _run_overflow_transfer(pending: _PendingTransfer) -> None:
    """Move the case to the overflow queue through the transfer service (its own transaction,
    its own Transfer row and audit event), then record the outcome on the escalation."""
    outcome = "transferred"
    try:
        from .transfers import transfer_case
    except ImportError:  # the transfer service lands separately; until then, say so
        outcome = "transfer service unavailable"
    else:
        try:
            transfer_case(
                case_id=pending.case_id,
                actor=None,
                rule=f"escalation L{pending.level}",
                to_queue=pending.to_queue,
                reason=_("Escalation L%(level)d: overflow") % {"level": pending.level},
            )
        except CaseError as error:
            outcome = f"transfer refused: {error.message}"[:300]
    with transaction.atomic(durable=True):
        escalation = (
            Escalation.objects.select_for_update()
            .select_related("case", "case__queue", "case__exception_class")
            .filter(pk=pending.escalation_id)
            .first()
        )
        if escalation is None or escalation.detail.get("transfer") != "pending":
            return
        escalation.detail = {**escalation.detail, "transfer": outcome}
        escalation.save(update_fields=["detail"])
        case = escalation.case
        now = timezone.now()
        context = {
            "ref": case.case_ref,
            "cls": case.exception_class.display_name,
            "queue": case.queue.display_name,
            "left": _format_left(case, now),
            "level": pending.level,
        }
        if outcome == "transferred":
            message = (
                _("Overflow (L%(level)d): %(ref)s (%(cls)s) arrived in %(queue)s; it is %(left)s.")
                % context
            )
        else:
            message = _(
                "L%(level)d: %(ref)s (%(cls)s) is %(left)s and could not be sent to the "
                "overflow queue (%(why)s)."
            ) % {**context, "why": outcome}
        _notify_all(
            queue_supervisors(case.queue),
            case=case,
            kind=NotificationKind.OVERFLOW,
            message=message,
        )


def _finish_stale_transfers(now: datetime) -> None:
    """Finish overflow transfers whose sweep died between firing the level and moving the
    case (see STALE_PENDING_TRANSFER)."""
    stale = Escalation.objects.filter(
        action=EscalationAction.TRANSFER_OVERFLOW,
        detail__transfer="pending",
        fired_at__lte=now - STALE_PENDING_TRANSFER,
        case__state__in=ACTIVE,
    ).values_list("pk", "case_id", "level", "detail")
    for escalation_id, case_id, level, detail in stale:
        queue_name = Case.objects.filter(pk=case_id).values_list("queue__name", flat=True).first()
        if queue_name != detail.get("from_queue"):
            # Someone moved it meanwhile: nothing to finish.
            Escalation.objects.filter(pk=escalation_id, detail__transfer="pending").update(
                detail={**detail, "transfer": "superseded: the case had moved"}
            )
            continue
        _run_overflow_transfer(
            _PendingTransfer(
                case_id=case_id,
                escalation_id=escalation_id,
                level=level,
                to_queue=str(detail.get("to_queue", "")),
            )
        )
