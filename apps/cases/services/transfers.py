"""Transfers and hand-offs: supervisor transfer, reroute (misclassification), skip, shift
hand-off, absence recovery, overflow. Release and lease expiry live in leases.py and write
the same Transfer rows.

Every one keeps the case's id, created_at, original_due_at, due_at and breached_at (age and
breach history survive a transfer), and records from, to, reason, actor or rule, time and
note in a Transfer row next to its audit event, in the same transaction.

Counters: transfer_count counts moves made for the case by someone other than a worker
taking it (transfer, overflow, reroute, hand-off, absence); release_count counts returns by
the holder or the lease sweep; skip_count counts skips; reroute_count counts reroutes, the
routing defects. A push (assignment) is a Transfer row but no counter.

Drafts follow one policy, "kept": a draft stays with its author on the case (drafts are per
worker), so a worker who gets the case back finds it, and the next holder reads the hand-off
note instead of someone else's half-finished form.

Lock order as everywhere: a worker's profile row first (the person receiving the case, or
going off shift), then case rows.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.audit.services import Actor, record
from apps.routing.eligibility import is_eligible, rank_of
from apps.routing.models import Queue, TaskType, WorkerProfile

from ..access import (
    access_case,
    can_supervise,
    can_work,
    case_requirements,
    require_supervise,
    require_work,
    supervises_worker,
    worker_facts,
)
from ..errors import CaseError
from ..models import Case, Draft, State, Transfer, TransferKind
from .alerts import clear_capacity_alert, raise_if_no_eligible_worker
from .capacity import lock_profile, require_headroom, worker_stream
from .transitions import clear_lease, commit_change, move, snapshot

DRAFT_KEPT = "kept"
MOVABLE = {State.OPEN, State.CLAIMED, State.WAITING}
# A weight at or above this makes held work "complex": going off shift needs a note.
COMPLEX_WEIGHT = 2


def record_transfer(
    case: Case,
    *,
    kind: str,
    from_user: Any = None,
    to_user: Any = None,
    from_queue: Queue | None = None,
    to_queue: Queue | None = None,
    actor: Any = None,
    rule: str = "",
    reason: str = "",
    note: str = "",
    at: datetime | None = None,
) -> Transfer:
    """Write the Transfer row of a change of owner or queue (in the caller's transaction).
    Queues default to the case's current queue: no queue change."""
    return Transfer.objects.create(
        case=case,
        kind=kind,
        from_queue=from_queue or case.queue,
        to_queue=to_queue or case.queue,
        from_user=from_user,
        to_user=to_user,
        reason=reason[:300],
        note=note,
        actor=actor,
        rule=rule[:120],
        draft_policy=DRAFT_KEPT if Draft.objects.filter(case_id=case.pk).exists() else "",
        at=at or timezone.now(),
    )


def _actor_of(actor: Any, rule: str) -> Actor:
    return Actor.user(actor) if actor is not None else Actor.system(rule)


def _queue_named(name: str, field: str) -> Queue:
    queue = Queue.objects.filter(name=name).first()
    if queue is None:
        raise CaseError.invalid(field, _("No queue named %(name)s.") % {"name": name})
    return queue


def _give_lease(case: Case, user: Any, *, now: datetime, kind: str) -> None:
    from .leases import lease_duration  # leases imports this module

    if case.state != State.CLAIMED:
        move(case, State.CLAIMED)
    case.assignee = user
    case.lease_token = secrets.token_urlsafe(24)
    case.lease_expires_at = now + lease_duration()
    case.lease_kind = kind


def _return_to_queue(case: Case) -> None:
    if case.state == State.CLAIMED:
        move(case, State.OPEN)
    case.assignee = None
    clear_lease(case)
    case.lease_kind = ""


def _alert_after_commit(case_ids: list[str]) -> None:
    """A case back in open work with nobody able to take it is raised at once."""
    for case_id in case_ids:
        case = Case.objects.filter(pk=case_id, state=State.OPEN).first()
        if case is not None:
            raise_if_no_eligible_worker(case=case)


# --- supervisor transfer, overflow ------------------------------------------------------


def transfer_case(
    *,
    case_id: str,
    actor: Any,
    rule: str = "",
    to_queue: str | None = None,
    to_user: Any = None,
    reason: str,
    note: str = "",
) -> Case:
    """Move a case to another queue, to a person, or both; or take it off its holder and
    return it to its queue (no target queue, no person, a claimed case).

    A person (`actor`) must supervise the case's queue and, when the queue changes, the
    target queue. `actor=None` is a system transfer and names its `rule` (an escalation step
    moving the case to its queue's overflow queue is kind "overflow"). A person receiving
    the case must be able to work the target queue, be eligible and have capacity; they get
    a fresh lease (kind "push"). The previous holder's lease ends; their draft is kept."""
    reason, note = (reason or "").strip(), (note or "").strip()
    if not reason:
        raise CaseError.invalid("reason", _("Say why the case moves."))
    if actor is None and not rule:
        raise CaseError.invalid("rule", _("A system transfer names the rule that made it."))
    target = _queue_named(to_queue, "to_queue") if to_queue else None
    now = timezone.now()
    with transaction.atomic(durable=True):
        receiver_profile = lock_profile(to_user) if to_user is not None else None
        if actor is None:
            case = (
                Case.objects.select_for_update(of=("self",))
                .select_related("queue", "assignee")
                .filter(pk=case_id)
                .first()
            )
            if case is None:
                raise CaseError("not_found", _("No such case."))
        else:
            case = access_case(actor, case_id, for_update=True)
            require_supervise(actor, case)
            if target is not None and target != case.queue and not can_supervise(actor, target):
                raise CaseError(
                    "forbidden",
                    _("You may transfer cases only to queues you supervise."),
                )
        if case.state not in MOVABLE:
            raise CaseError(
                "conflict",
                _("A %(state)s case cannot be transferred.") % {"state": case.get_state_display()},
                case=case,
            )
        destination = target or case.queue
        from_queue, from_user = case.queue, case.assignee
        if to_user is None and destination == from_queue and case.state != State.CLAIMED:
            raise CaseError.invalid("to_queue", _("The case is already in that queue."))
        if to_user is not None and receiver_profile is not None:
            _check_receiver(case, to_user, destination, receiver_profile, now=now)
        before = snapshot(case)
        case.queue = destination
        if to_user is not None:
            _give_lease(case, to_user, now=now, kind="push")
            WorkerProfile.objects.filter(user=to_user).update(last_assigned_at=now)
        else:
            _return_to_queue(case)
        case.transfer_count += 1
        kind = TransferKind.TRANSFER
        if actor is None and from_queue.overflow_queue_id == destination.pk:
            kind = TransferKind.OVERFLOW
        record_transfer(
            case,
            kind=kind,
            from_user=from_user,
            to_user=to_user,
            from_queue=from_queue,
            to_queue=destination,
            actor=actor,
            rule=rule,
            reason=reason,
            note=note,
            at=now,
        )
        clear_capacity_alert(case=case, now=now)  # taken, or now judged in another queue
        commit_change(
            case,
            actor=_actor_of(actor, rule),
            action="case.transferred",
            before=before,
            reason=reason,
            extra={
                "kind": kind,
                "from_queue": from_queue.name,
                "to_queue": destination.name,
                "from_user": from_user.get_username() if from_user else None,
                "to_user": to_user.get_username() if to_user else None,
                "rule": rule,
                "note": note,
            },
        )
    _alert_after_commit([case.pk])
    return case


def _check_receiver(
    case: Case, user: Any, queue: Queue, profile: WorkerProfile, *, now: datetime
) -> None:
    name = user.get_username()
    if case.state == State.WAITING:
        raise CaseError(
            "conflict",
            _("The case is waiting for information; transfer it to a queue, not a person."),
            case=case,
        )
    if case.assignee_id == user.pk and queue == case.queue:
        raise CaseError.invalid("to_user", _("%(name)s already holds this case.") % {"name": name})
    if not can_work(user, queue):
        raise CaseError.invalid(
            "to_user",
            _("%(name)s may not work queue %(queue)s.") % {"name": name, "queue": queue.name},
        )
    eligible, reasons = is_eligible(worker_facts(user, profile=profile), case_requirements(case))
    if not eligible:
        raise CaseError.invalid(
            "to_user",
            _("%(name)s is not eligible: %(why)s.")
            % {"name": name, "why": "; ".join(str(reason) for reason in reasons)},
        )
    require_headroom(profile, case, now=now)


# --- reroute: a misclassification, counted as a routing defect ---------------------------


def _requirements_from_task_type(case: Case) -> dict[str, Any] | None:
    """The requirements the case's task type declares today, the way filing copies them;
    None when no task type is configured (the case keeps what it has)."""
    task_type = (
        TaskType.objects.filter(
            workflow_type_id=case.workflow_type_id, exception_class_id=case.exception_class_id
        )
        .prefetch_related("tasktypeskill_set__skill")
        .first()
    )
    if task_type is None:
        return None
    jurisdiction = task_type.jurisdiction
    if jurisdiction == "@region" and case.attributes.get("region"):
        jurisdiction = str(case.attributes["region"])
    authority = None
    if task_type.authority_by_amount:
        try:
            authority = Decimal(str(case.attributes.get("amount")))
        except (InvalidOperation, ValueError):
            authority = None
        if authority is not None and not authority.is_finite():
            authority = None
    evidence_levels = set(case.evidence.values_list("classification", flat=True))
    classification = max(
        {task_type.data_classification, *evidence_levels}, key=lambda level: rank_of(level)
    )
    return {
        "required_skills": [
            {"code": link.skill.code, "min_proficiency": link.min_proficiency}
            for link in sorted(task_type.tasktypeskill_set.all(), key=lambda x: x.skill.code)
        ],
        "required_certifications": list(task_type.certifications or []),
        "required_language": task_type.language,
        "required_jurisdiction": jurisdiction[:32],
        "authority_amount": authority,
        "workload_weight": task_type.workload_weight,
        "data_classification": classification,
    }


def reroute_case(*, case_id: str, actor: Any, to_queue: str, reason: str) -> Case:
    """The case was routed to the wrong queue: move it, recompute its requirements from its
    task type, count a routing defect. A worker of the queue may reroute an open case or one
    they hold; a supervisor of the queue any movable case. The case returns to open work in
    the new queue (a holder's lease ends; their draft is kept)."""
    reason = (reason or "").strip()
    if not reason:
        raise CaseError.invalid("reason", _("Say why the case was misrouted."))
    if not to_queue:
        raise CaseError.invalid("to_queue", _("Choose the queue the case belongs in."))
    destination = _queue_named(to_queue, "to_queue")
    now = timezone.now()
    with transaction.atomic(durable=True):
        case = access_case(actor, case_id, for_update=True)
        if not can_supervise(actor, case.queue):
            require_work(actor, case)
            if case.state == State.CLAIMED and case.assignee_id != actor.pk:
                raise CaseError(
                    "forbidden",
                    _("Another worker holds this case; ask a supervisor to reroute it."),
                )
        if case.state not in MOVABLE:
            raise CaseError(
                "conflict",
                _("A %(state)s case cannot be rerouted.") % {"state": case.get_state_display()},
                case=case,
            )
        if destination == case.queue:
            raise CaseError.invalid("to_queue", _("The case is already in that queue."))
        before = snapshot(case)
        from_queue, from_user = case.queue, case.assignee
        requirements_before = _requirement_fields(case)
        case.queue = destination
        _return_to_queue(case)
        recomputed = _requirements_from_task_type(case)
        for field, value in (recomputed or {}).items():
            setattr(case, field, value)
        case.reroute_count += 1
        case.transfer_count += 1
        case.routing_explanation = (
            _("rerouted from %(from)s by %(actor)s: %(reason)s")
            % {"from": from_queue.name, "actor": actor.get_username(), "reason": reason}
        )[:300]
        case.routing_rule_id = None
        case.routing_rule_version = None
        record_transfer(
            case,
            kind=TransferKind.REROUTE,
            from_user=from_user,
            from_queue=from_queue,
            to_queue=destination,
            actor=actor,
            reason=reason,
            at=now,
        )
        clear_capacity_alert(case=case, now=now)
        commit_change(
            case,
            actor=Actor.user(actor),
            action="case.rerouted",
            before=before,
            reason=reason,
            extra={
                "routing_defect": True,
                "from_queue": from_queue.name,
                "to_queue": destination.name,
                "from_user": from_user.get_username() if from_user else None,
                "requirements_before": requirements_before,
                "requirements_after": _requirement_fields(case),
                "requirements_recomputed": recomputed is not None,
            },
        )
    _alert_after_commit([case.pk])
    return case


def _requirement_fields(case: Case) -> dict[str, Any]:
    return {
        "skills": case.required_skills,
        "certifications": case.required_certifications,
        "language": case.required_language,
        "jurisdiction": case.required_jurisdiction,
        "authority_amount": str(case.authority_amount)
        if case.authority_amount is not None
        else None,
        "workload_weight": case.workload_weight,
        "data_classification": case.data_classification,
    }


# --- skip ----------------------------------------------------------------------------------


SKIP_RULE = "skip"


def skip_case(*, case_id: str, actor: Any, reason: str) -> Case:
    """A worker passes on a case: an open one from the list, or one pushed to them, which
    returns to open work. Skips are counted; "Next case" does not offer a case back to a
    worker who skipped it for an hour (`SKIP_COOLDOWN`)."""
    reason = (reason or "").strip()
    if not reason:
        raise CaseError.invalid("reason", _("Say why you skip this case."))
    now = timezone.now()
    with transaction.atomic(durable=True):
        case = access_case(actor, case_id, for_update=True)
        require_work(actor, case)
        held = case.state == State.CLAIMED and case.assignee_id == actor.pk
        if not held and case.state != State.OPEN:
            raise CaseError(
                "conflict",
                _("Only an open case, or one you hold, can be skipped."),
                case=case,
            )
        before = snapshot(case)
        if held:
            _return_to_queue(case)
            record_transfer(
                case,
                kind=TransferKind.RELEASE,
                from_user=actor,
                actor=actor,
                rule=SKIP_RULE,
                reason=reason,
                at=now,
            )
        case.skip_count += 1
        commit_change(
            case,
            actor=Actor.user(actor),
            action="case.skipped",
            before=before,
            reason=reason,
            extra={"skip_count": case.skip_count, "returned": held},
            # Skipping an open case changes nothing a decision rests on.
            bump_version=held,
        )
    if held:
        _alert_after_commit([case.pk])
    return case


SKIP_COOLDOWN = timedelta(hours=1)


# --- shifts --------------------------------------------------------------------------------


def _require_shift_authority(worker: Any, actor: Any) -> None:
    if actor.pk != worker.pk and not supervises_worker(actor, worker):
        raise CaseError(
            "forbidden", _("Only the worker or a supervisor of their queues may change a shift.")
        )


def go_off_shift(*, worker: Any, actor: Any, handoff_note: str = "", absence: bool = False) -> int:
    """End the worker's shift: every case they hold returns to open work with a hand-off
    (kind "handoff"; "absence" when a supervisor recovers an absent worker's cases). A short
    note is required when they hold complex active work (a case with their draft, or a
    weight of 2 or more), except in absence recovery, when they cannot write one. Drafts are
    kept. Returns how many cases were handed off."""
    _require_shift_authority(worker, actor)
    if absence and actor.pk == worker.pk:
        raise CaseError("forbidden", _("Absence recovery is done by a supervisor."))
    note = (handoff_note or "").strip()
    if absence:
        kind, reason = TransferKind.ABSENCE, _("absence recovery")
    else:
        kind, reason = TransferKind.HANDOFF, _("went off shift")
    with transaction.atomic(durable=True):
        handed = _end_shift(
            worker,
            profile=lock_profile(worker),
            actor=actor,
            kind=kind,
            rule="",
            reason=reason,
            note=note,
            require_note=not absence,
            now=timezone.now(),
        )
    _alert_after_commit(handed)
    return len(handed)


def _end_shift(
    worker: Any,
    *,
    actor: Any,
    kind: str,
    rule: str,
    reason: str,
    note: str,
    require_note: bool,
    now: datetime,
    profile: WorkerProfile,
) -> list[str]:
    """In the caller's transaction, which holds the worker's profile lock: hand off every
    held case and mark the worker off shift. Returns the ids of the cases handed off."""
    handed: list[str] = []
    held = list(
        Case.objects.select_for_update(of=("self",))
        .select_related("queue", "assignee")
        .filter(state=State.CLAIMED, assignee=worker)
        .order_by("pk")
    )
    if not held and not profile.on_shift:
        return handed  # already off shift with nothing to hand off: nothing to record
    if require_note and not note:
        with_drafts = set(
            Draft.objects.filter(case__in=held, user=worker).values_list("case_id", flat=True)
        )
        complex_work = [
            case
            for case in held
            if case.pk in with_drafts or case.workload_weight >= COMPLEX_WEIGHT
        ]
        if complex_work:
            raise CaseError.invalid(
                "handoff_note",
                _("Write a short hand-off note: you hold complex active work (%(cases)s).")
                % {"cases": ", ".join(case.case_ref for case in complex_work)},
            )
    for case in held:
        before = snapshot(case)
        _return_to_queue(case)
        case.transfer_count += 1
        record_transfer(
            case,
            kind=kind,
            from_user=worker,
            actor=actor,
            rule=rule,
            reason=reason,
            note=note,
            at=now,
        )
        commit_change(
            case,
            actor=_actor_of(actor, rule),
            action="case.handed_off",
            before=before,
            reason=reason,
            extra={"kind": kind, "note": note, "from_user": worker.get_username()},
        )
        handed.append(case.pk)
    was_on_shift = profile.on_shift
    WorkerProfile.objects.filter(pk=profile.pk).update(on_shift=False, shift_ends_at=None)
    record(
        stream=worker_stream(worker),
        actor=_actor_of(actor, rule),
        action="worker.off_shift",
        before={"on_shift": was_on_shift},
        after={"on_shift": False, "handed_off": handed, "kind": kind},
        reason=reason,
        at=now,
    )
    return handed


def go_on_shift(*, worker: Any, actor: Any) -> None:
    """Start the worker's shift (a planned end that has passed is cleared). Idempotent."""
    _require_shift_authority(worker, actor)
    now = timezone.now()
    with transaction.atomic(durable=True):
        profile = lock_profile(worker)
        if profile.on_shift:
            return
        ends = (
            profile.shift_ends_at if profile.shift_ends_at and profile.shift_ends_at > now else None
        )
        WorkerProfile.objects.filter(pk=profile.pk).update(on_shift=True, shift_ends_at=ends)
        record(
            stream=worker_stream(worker),
            actor=Actor.user(actor),
            action="worker.on_shift",
            before={"on_shift": False},
            after={"on_shift": True, "shift_ends_at": ends.isoformat() if ends else None},
            at=now,
        )


SHIFT_END_RULE = "shift-end"


def end_shifts(*, now: datetime | None = None) -> int:
    """Beat sweep: take every worker whose shift end has passed off shift (rule "shift-end",
    hand-off note "shift ended"); returns how many workers. Safe when two sweeps overlap: a
    profile is taken with SKIP LOCKED and only while still on shift and past its end."""
    now = now or timezone.now()
    ended = 0
    handed: list[str] = []
    due = list(
        WorkerProfile.objects.filter(on_shift=True, shift_ends_at__lte=now)
        .select_related("user")
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    for profile_id in due:
        with transaction.atomic(durable=True):
            profile = (
                WorkerProfile.objects.select_for_update(skip_locked=True)
                .select_related("user")
                .filter(pk=profile_id, on_shift=True, shift_ends_at__lte=now)
                .first()
            )
            if profile is None:
                continue
            handed += _end_shift(
                profile.user,
                actor=None,
                kind=TransferKind.HANDOFF,
                rule=SHIFT_END_RULE,
                reason=_("shift ended"),
                note=_("shift ended"),
                require_note=False,
                now=now,
                profile=profile,
            )
            ended += 1
    _alert_after_commit(handed)
    return ended
