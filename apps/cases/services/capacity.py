"""A worker's capacity in workload units, and supervisors' temporary adjustments of it.

The invariant: the workload weights of the cases a worker holds (state `claimed`) never sum
above their effective capacity. Every path that gives a worker a case (claim, "Next case",
push assignment, transfer to a person) locks the worker's profile row first, then measures
the load and takes the case, so parallel requests for one worker queue up on that lock and
each sees the load the previous one left.

Audit stream: capacity and shift changes are recorded in the worker's own stream,
``worker:<username>``, so one worker's history (adjustments, lapses, shifts) reads in one
place; admin edits of the profile itself stay in ``config:routing.workerprofile``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.audit.services import Actor, record
from apps.routing.eligibility import WorkerFacts
from apps.routing.models import CapacityAdjustment, Queue, WorkerProfile, WorkerSkill

from ..access import supervises_worker, worker_facts, workers_of
from ..errors import CaseError
from ..models import Case, State

MAX_CAPACITY = 100  # a typo guard: nobody holds a hundred workload units at once


def worker_stream(user: Any) -> str:
    return f"worker:{user.get_username()}"


def lock_profile(user: Any) -> WorkerProfile:
    """The worker's profile row, locked. Always the first lock of a transaction that gives
    the worker a case (one lock order, profile then case: no deadlocks)."""
    WorkerProfile.objects.get_or_create(user=user)
    return WorkerProfile.objects.select_for_update().get(user=user)


def live_adjustment(profile: WorkerProfile, *, now: datetime) -> CapacityAdjustment | None:
    return (
        CapacityAdjustment.objects.filter(
            profile=profile, ended_at__isnull=True, expires_at__gt=now
        )
        .order_by("-created_at", "-pk")
        .first()
    )


def effective_capacity(profile: WorkerProfile, *, now: datetime | None = None) -> int:
    """The live adjustment's capacity, else the profile's. An adjustment stops counting at
    its expiry even before the lapse sweep marks it ended."""
    adjustment = live_adjustment(profile, now=now or timezone.now())
    return adjustment.capacity if adjustment else profile.capacity


def active_load(user: Any) -> int:
    """Workload units of the cases the worker holds under a lease."""
    total = Case.objects.filter(state=State.CLAIMED, assignee=user).aggregate(
        units=Sum("workload_weight")
    )["units"]
    return int(total or 0)


def require_headroom(profile: WorkerProfile, case: Case, *, now: datetime) -> None:
    """Raise unless the worker (profile locked by the caller) can take the case's weight."""
    capacity = effective_capacity(profile, now=now)
    load = active_load(profile.user)
    if load + case.workload_weight > capacity:
        raise CaseError(
            "conflict",
            _(
                "At capacity: %(load)s of %(capacity)s workload units in use, and this case"
                " needs %(weight)s."
            )
            % {"load": load, "capacity": capacity, "weight": case.workload_weight},
            case=case,
        )


@dataclass
class Staff:
    """One worker of a queue as a sweep sees them: facts for eligibility, and capacity and
    load read together. A snapshot for choosing; the final check is always made again under
    the worker's row lock."""

    user: Any
    profile: WorkerProfile
    facts: WorkerFacts
    capacity: int
    load: int
    pushed: dict[int, int]  # queue id -> cases held from that queue under a push lease

    @property
    def free(self) -> int:
        return self.capacity - self.load


def staff_of(queue: Queue, *, now: datetime) -> list[Staff]:
    """Everyone who may work the queue, by username, in a handful of queries."""
    users = workers_of(queue)
    if not users:
        return []
    profiles = {p.user_id: p for p in WorkerProfile.objects.filter(user__in=users)}
    skills: dict[int, dict[str, int]] = {}
    for profile_id, code, level in WorkerSkill.objects.filter(
        profile__in=profiles.values()
    ).values_list("profile_id", "skill__code", "proficiency"):
        skills.setdefault(profile_id, {})[code] = level
    adjustments: dict[int, int] = {}
    for adjustment in CapacityAdjustment.objects.filter(
        profile__in=profiles.values(), ended_at__isnull=True, expires_at__gt=now
    ).order_by("created_at", "pk"):
        adjustments[adjustment.profile_id] = adjustment.capacity  # the latest wins
    loads = dict(
        Case.objects.filter(state=State.CLAIMED, assignee__in=users)
        .values_list("assignee_id")
        .annotate(units=Sum("workload_weight"))
        .values_list("assignee_id", "units")
    )
    pushed: dict[int, dict[int, int]] = {}
    for assignee_id, queue_id in Case.objects.filter(
        state=State.CLAIMED, assignee__in=users, lease_kind="push"
    ).values_list("assignee_id", "queue_id"):
        counts = pushed.setdefault(assignee_id, {})
        counts[queue_id] = counts.get(queue_id, 0) + 1
    staff = []
    for user in users:
        profile = profiles.get(user.pk) or WorkerProfile(user=user)
        staff.append(
            Staff(
                user=user,
                profile=profile,
                facts=worker_facts(user, profile=profile, skills=skills.get(profile.pk, {})),
                capacity=adjustments.get(profile.pk, profile.capacity),
                load=int(loads.get(user.pk) or 0),
                pushed=pushed.get(user.pk, {}),
            )
        )
    return staff


def adjust_capacity(
    *, worker: Any, capacity: int, reason: str, expires_at: datetime | None, actor: Any
) -> CapacityAdjustment:
    """Set a worker's capacity until `expires_at` (a supervisor of a queue they work; a reason
    is required). One live adjustment at a time: a new one ends the previous one. Cases
    already held are not taken away when capacity drops; the worker gets no more until the
    load is under the new capacity."""
    if not supervises_worker(actor, worker):
        raise CaseError(
            "forbidden", _("Only a supervisor of a queue this worker works may adjust capacity.")
        )
    reason = (reason or "").strip()
    errors: dict[str, list[str]] = {}
    if not reason:
        errors["reason"] = [_("Say why the capacity changes.")]
    now = timezone.now()
    if expires_at is None:
        errors["expires_at"] = [_("Say until when the adjustment holds.")]
    elif expires_at <= now:
        errors["expires_at"] = [_("The expiry must be in the future.")]
    if (
        isinstance(capacity, bool)
        or not isinstance(capacity, int)
        or not 0 <= capacity <= MAX_CAPACITY
    ):
        errors["capacity"] = [
            _("Capacity is a whole number from 0 to %(max)s.") % {"max": MAX_CAPACITY}
        ]
    if errors or expires_at is None:
        raise CaseError("invalid", _("Some fields need attention."), fields=errors)
    with transaction.atomic(durable=True):
        profile = lock_profile(worker)
        previous = live_adjustment(profile, now=now)
        before_capacity = previous.capacity if previous else profile.capacity
        if previous is not None:
            CapacityAdjustment.objects.filter(pk=previous.pk, ended_at__isnull=True).update(
                ended_at=now
            )
        adjustment = CapacityAdjustment.objects.create(
            profile=profile,
            capacity=capacity,
            reason=reason,
            actor=actor,
            created_at=now,
            expires_at=expires_at,
        )
        record(
            stream=worker_stream(worker),
            actor=Actor.user(actor),
            action="worker.capacity_adjusted",
            before={
                "capacity": before_capacity,
                "adjustment": previous.pk if previous else None,
            },
            after={
                "capacity": capacity,
                "adjustment": adjustment.pk,
                "expires_at": expires_at.isoformat(),
                "profile_capacity": profile.capacity,
                "load": active_load(worker),
            },
            reason=reason,
            at=now,
        )
        return adjustment


def lapse_capacity_adjustments(*, now: datetime | None = None) -> int:
    """End every adjustment past its expiry and audit it; returns how many this run ended.

    Idempotent and safe when two sweeps overlap: each row is ended by a conditional update
    (still open, already expired) and only the run whose update matched writes the audit
    event. Capacity itself already stopped counting the adjustment at its expiry."""
    now = now or timezone.now()
    lapsed = 0
    due = list(
        CapacityAdjustment.objects.filter(ended_at__isnull=True, expires_at__lte=now)
        .select_related("profile__user")
        .order_by("expires_at", "pk")[:500]
    )
    for adjustment in due:
        with transaction.atomic(durable=True):
            ended = CapacityAdjustment.objects.filter(
                pk=adjustment.pk, ended_at__isnull=True, expires_at__lte=now
            ).update(ended_at=adjustment.expires_at)
            if ended != 1:
                continue  # another sweep, or a newer adjustment, ended it first
            profile = adjustment.profile
            record(
                stream=worker_stream(profile.user),
                actor=Actor.system("capacity-sweep"),
                action="worker.capacity_adjustment_lapsed",
                before={"capacity": adjustment.capacity, "adjustment": adjustment.pk},
                after={"capacity": effective_capacity(profile, now=now)},
                reason=_("capacity adjustment expired"),
                at=now,
            )
            lapsed += 1
    return lapsed
