"""Push assignment: "Next case" for a worker, and the beat sweep that hands out cases in
queues that auto-assign. Eligibility first (a hard filter), then ranking.

Which queues push, per `Queue.assignment_model`:
- fifo_pull: nothing is pushed; workers claim from the list (which offers only cases they
  are eligible for, see `access.eligible_filter_for`).
- priority_push: "Next case" gives the worker the best eligible case.
- blend: "Next case" and the sweep push only the queue's `push_bands` (urgent work); the
  rest is pulled from the list.
- round_robin / highest_capacity / continuity: the sweep assigns every open case; "Next
  case" does not take from these queues, so the distribution stays the documented one.
  * round robin: the eligible worker with room who was assigned least recently
    (`last_assigned_at`, never first; ties by username);
  * highest capacity: the one with the most free units (ties by username);
  * continuity: the worker who last decided or held a case of the same `case_ref` (the
    business entity), if eligible and with room; while they are not, the case waits for
    them until it is `continuity_release_minutes` old, then goes to anyone eligible (round
    robin order). A case whose entity nobody has handled goes round robin at once.
  * blend (its push bands): round robin order.

"Best case", everywhere: highest band, earliest due, oldest created, then id (deterministic).
Push respects, per queue, `push_concurrency_cap` (pushed cases a worker holds from it) and
`focus_period_minutes` (no new push to a worker within that time of their last push,
unless the case is P1).

Guarantees whatever the model: a case is never handed to two workers, and a worker's
capacity is never exceeded, even by parallel requests and sweeps. Each hand-out is one
transaction that locks the worker's profile row first (parallel requests for one worker
queue up there and each measures the load the previous one left), then takes the case with
SELECT ... FOR UPDATE SKIP LOCKED and only while it is still open.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Count, Exists, OuterRef, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.audit.services import Actor
from apps.routing.eligibility import Requirements, is_eligible
from apps.routing.models import AssignmentModel, Queue, WorkerProfile

from ..access import (
    can_work,
    case_requirements,
    eligible_cases,
    evidence_classifications,
    visible_queues,
    worker_facts,
)
from ..errors import CaseError
from ..models import Case, Decision, State, Transfer, TransferKind
from .alerts import clear_capacity_alert
from .capacity import Staff, active_load, effective_capacity, lock_profile, staff_of
from .transfers import SKIP_COOLDOWN, SKIP_RULE, record_transfer
from .transitions import commit_change, move, snapshot

NEXT_CASE_MODELS = {AssignmentModel.PRIORITY_PUSH, AssignmentModel.BLEND}
SWEEP_MODELS = {
    AssignmentModel.ROUND_ROBIN,
    AssignmentModel.HIGHEST_CAPACITY,
    AssignmentModel.CONTINUITY,
    AssignmentModel.BLEND,
}
URGENT_BAND = "P1"
BEST_FIRST = ("priority_band", "due_at", "created_at", "pk")
CANDIDATE_BATCH = 20
MAX_CANDIDATES = 200  # per request: beyond this the filter in SQL is the one to fix
SWEEP_CASES_PER_QUEUE = 500
NEVER = datetime.min.replace(tzinfo=UTC)


def _in_focus(last_pushed_at: datetime | None, queue: Queue, now: datetime) -> bool:
    return bool(
        queue.focus_period_minutes
        and last_pushed_at is not None
        and now < last_pushed_at + timedelta(minutes=queue.focus_period_minutes)
    )


def _hand_out(
    case: Case,
    user: Any,
    profile: WorkerProfile,
    *,
    now: datetime,
    actor: Actor,
    rule: str,
    assigned_at: datetime | None = None,
) -> Case:
    """Give the locked, open case to the worker whose profile is locked: a push lease, the
    Transfer row and the audit event, in the caller's transaction."""
    from .leases import lease_duration  # leases imports alerts and transfers

    before = snapshot(case)
    move(case, State.CLAIMED)
    case.assignee = user
    case.lease_token = secrets.token_urlsafe(24)
    case.lease_expires_at = now + lease_duration()
    case.lease_kind = "push"
    WorkerProfile.objects.filter(pk=profile.pk).update(
        last_assigned_at=assigned_at or now, last_pushed_at=now
    )
    record_transfer(
        case,
        kind=TransferKind.PUSH,
        to_user=user,
        actor=user if actor.kind == "user" else None,
        rule=rule,
        reason=_("pushed to %(name)s") % {"name": user.get_username()},
        at=now,
    )
    clear_capacity_alert(case=case, now=now)
    return commit_change(
        case,
        actor=actor,
        action="case.claimed",
        before=before,
        reason=rule,
        extra={"lease_kind": "push", "via": rule},
    )


# --- "Next case" -----------------------------------------------------------------------


def next_case(*, actor: Any) -> Case | None:
    """Give the worker the best case they are eligible for and have room for, from the
    queues they work that push; None when there is none. CaseError conflict when they are
    off shift or at capacity (the page says so rather than showing an empty result)."""
    now = timezone.now()
    with transaction.atomic(durable=True):
        profile = lock_profile(actor)
        if not profile.on_shift:
            raise CaseError("conflict", _("You are off shift: go on shift to receive cases."))
        capacity, load = effective_capacity(profile, now=now), active_load(actor)
        free = capacity - load
        if free <= 0:
            raise CaseError(
                "conflict",
                _(
                    "You are at capacity: %(load)s of %(capacity)s workload units in use."
                    " Finish or release a case first."
                )
                % {"load": load, "capacity": capacity},
            )
        scope = _push_scope(actor, profile, now=now)
        if scope is None:
            return None
        facts = worker_facts(actor, profile=profile)
        recently_skipped = Transfer.objects.filter(
            case=OuterRef("pk"), rule=SKIP_RULE, from_user=actor, at__gte=now - SKIP_COOLDOWN
        )
        candidates = (
            eligible_cases(
                actor,
                Case.objects.filter(scope, state=State.OPEN, workload_weight__lte=free),
                facts=facts,
            )
            .exclude(Exists(recently_skipped))
            .order_by(*BEST_FIRST)
            .values_list("pk", flat=True)
        )
        for case_id in _batched(candidates):
            # SKIP LOCKED: a case another request is taking right now is passed over, never
            # waited for and never taken twice; "still open" is re-read under the lock.
            case = (
                Case.objects.select_for_update(skip_locked=True, of=("self",))
                .select_related("queue", "assignee")
                .filter(pk=case_id, state=State.OPEN)
                .first()
            )
            if case is None or case.workload_weight > free:
                continue
            if not is_eligible(facts, case_requirements(case))[0]:
                continue  # the SQL filter is a mirror; the pure check is the rule
            return _hand_out(
                case, actor, profile, now=now, actor=Actor.user(actor), rule="next-case"
            )
        return None


def _push_scope(actor: Any, profile: WorkerProfile, *, now: datetime) -> Q | None:
    """Which cases of which queues may be pushed to the worker now, or None."""
    queues = [
        queue
        for queue in visible_queues(actor, "routing.work_queue").filter(
            assignment_model__in=NEXT_CASE_MODELS
        )
        if can_work(actor, queue)
    ]
    pushed = dict(
        Case.objects.filter(state=State.CLAIMED, assignee=actor, lease_kind="push")
        .values_list("queue_id")
        .annotate(held=Count("pk"))
        .values_list("queue_id", "held")
    )
    scope = Q(pk__in=[])
    for queue in queues:
        if pushed.get(queue.pk, 0) >= queue.push_concurrency_cap:
            continue
        part = Q(queue=queue)
        if queue.assignment_model == AssignmentModel.BLEND:
            part &= Q(priority_band__in=list(queue.push_bands or []))
        if _in_focus(profile.last_pushed_at, queue, now):
            part &= Q(priority_band=URGENT_BAND)
        scope |= part
    return scope if queues else None


def _batched(ids: Any) -> Iterator[str]:
    for offset in range(0, MAX_CANDIDATES, CANDIDATE_BATCH):
        batch = list(ids[offset : offset + CANDIDATE_BATCH])
        yield from batch
        if len(batch) < CANDIDATE_BATCH:
            return


# --- the assignment sweep -------------------------------------------------------------------


def assign_pushed_cases(*, now: datetime | None = None) -> int:
    """Beat sweep: in every queue that auto-assigns, give each open case (best first) to a
    worker chosen by the queue's model; returns how many cases were assigned. Idempotent and
    safe next to another run and to "Next case" requests (see the module's guarantees)."""
    now = now or timezone.now()
    turns = itertools.count(0)
    assigned = 0
    for queue in Queue.objects.filter(assignment_model__in=SWEEP_MODELS).order_by("name"):
        assigned += _assign_queue(queue, now=now, turns=turns)
    return assigned


def _assign_queue(queue: Queue, *, now: datetime, turns: Iterator[int]) -> int:
    cases = Case.objects.filter(queue=queue, state=State.OPEN)
    if queue.assignment_model == AssignmentModel.BLEND:
        if not queue.push_bands:
            return 0
        cases = cases.filter(priority_band__in=list(queue.push_bands))
    open_cases = list(cases.order_by(*BEST_FIRST)[:SWEEP_CASES_PER_QUEUE])
    staff = [member for member in staff_of(queue, now=now) if member.facts.on_shift]
    if not open_cases or not staff:
        return 0
    classifications = evidence_classifications(case.pk for case in open_cases)
    turn: dict[int, int] = {}  # user id -> order of assignment in this run (round robin)
    assigned = 0
    for case in open_cases:
        requirements = case_requirements(case, classifications=classifications.get(case.pk, ()))
        for member in _choose(queue, case, requirements, staff, turn, now=now):
            # One run assigns many cases at the same `now`; a microsecond per hand-out keeps
            # last_assigned_at in the order they happened, so the next run's round robin
            # carries on where this one stopped instead of falling back to names.
            tick = next(turns)
            stamp = now + timedelta(microseconds=tick)
            outcome = _assign_one(case.pk, member, queue, now=now, assigned_at=stamp)
            if outcome == "case_gone":
                break
            if outcome == "assigned":
                member.load += case.workload_weight
                member.pushed[queue.pk] = member.pushed.get(queue.pk, 0) + 1
                member.profile.last_assigned_at, member.profile.last_pushed_at = stamp, now
                turn[member.user.pk] = tick + 1
                assigned += 1
                break
    return assigned


def _able(
    queue: Queue, case: Case, requirements: Requirements, staff: list[Staff], *, now: datetime
) -> list[Staff]:
    """Who could take the case now, by the snapshot: eligible, room for its weight, under
    the queue's push cap, not in a focus period (unless P1)."""
    urgent = case.priority_band == URGENT_BAND
    return [
        member
        for member in staff
        if member.free >= case.workload_weight
        and member.pushed.get(queue.pk, 0) < queue.push_concurrency_cap
        and (urgent or not _in_focus(member.profile.last_pushed_at, queue, now))
        and is_eligible(member.facts, requirements)[0]
    ]


def _round_robin_order(able: list[Staff], turn: dict[int, int]) -> list[Staff]:
    # Least recently assigned first; those assigned in this run go last, in the order they
    # were given a case, so one run deals cases out like cards.
    return sorted(
        able,
        key=lambda m: (
            turn.get(m.user.pk, 0),
            m.profile.last_assigned_at or NEVER,
            m.user.get_username(),
        ),
    )


def _choose(
    queue: Queue,
    case: Case,
    requirements: Requirements,
    staff: list[Staff],
    turn: dict[int, int],
    *,
    now: datetime,
) -> list[Staff]:
    """The workers to try for this case, in order; [] leaves it unassigned this run."""
    able = _able(queue, case, requirements, staff, now=now)
    model = queue.assignment_model
    if model == AssignmentModel.HIGHEST_CAPACITY:
        return sorted(able, key=lambda m: (-m.free, m.user.get_username()))
    if model == AssignmentModel.CONTINUITY:
        known_by = continuity_worker_id(case)
        if known_by is not None:
            preferred = [m for m in able if m.user.pk == known_by]
            if preferred:
                return preferred
            released = now - case.created_at >= timedelta(minutes=queue.continuity_release_minutes)
            if not released:
                return []  # held for the worker who knows the entity, for a while
    return _round_robin_order(able, turn)


def continuity_worker_id(case: Case) -> int | None:
    """The user who last decided, or held, a case of the same business entity (case_ref)."""
    seen: list[tuple[datetime, int]] = []
    decision = (
        Decision.objects.filter(case__case_ref=case.case_ref)
        .exclude(case_id=case.pk)
        .order_by("-decided_at")
        .values_list("decided_at", "actor_id")
        .first()
    )
    if decision:
        seen.append(decision)
    held = (
        Transfer.objects.filter(case__case_ref=case.case_ref, to_user__isnull=False)
        .exclude(case_id=case.pk)
        .order_by("-at")
        .values_list("at", "to_user_id")
        .first()
    )
    if held:
        seen.append(held)
    holder = (
        Case.objects.filter(case_ref=case.case_ref, assignee__isnull=False)
        .exclude(pk=case.pk)
        .order_by("-updated_at")
        .values_list("updated_at", "assignee_id")
        .first()
    )
    if holder:
        seen.append(holder)
    return max(seen)[1] if seen else None


def _assign_one(
    case_id: str, member: Staff, queue: Queue, *, now: datetime, assigned_at: datetime
) -> str:
    """One hand-out in its own transaction: "assigned", "worker_unable" (try the next
    worker) or "case_gone" (taken, moved or being taken by someone else)."""
    user = member.user
    with transaction.atomic(durable=True):
        profile = lock_profile(user)
        case = (
            Case.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("queue", "assignee")
            .filter(pk=case_id, state=State.OPEN, queue=queue)
            .first()
        )
        if case is None:
            return "case_gone"
        if not profile.on_shift:
            return "worker_unable"
        if active_load(user) + case.workload_weight > effective_capacity(profile, now=now):
            return "worker_unable"
        held_pushed = Case.objects.filter(
            state=State.CLAIMED, assignee=user, lease_kind="push", queue=queue
        ).count()
        if held_pushed >= queue.push_concurrency_cap:
            return "worker_unable"
        if not is_eligible(worker_facts(user, profile=profile), case_requirements(case))[0]:
            return "worker_unable"
        _hand_out(
            case,
            user,
            profile,
            now=now,
            actor=Actor.system("assignment-sweep"),
            rule=f"assignment:{queue.assignment_model}",
            assigned_at=assigned_at,
        )
        return "assigned"
