"""Reads for the worker and supervisor pages. No writes here; guardian only through access.

Lists are filtered by the queues a user may see (few rows, one subquery), never by
per-case permission rows, and pull their related rows in the same query.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import reduce
from operator import or_
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.db.models import (
    BooleanField,
    Count,
    DateTimeField,
    DurationField,
    Exists,
    ExpressionWrapper,
    F,
    Max,
    Min,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Value,
)
from django.utils import timezone
from guardian.models import GroupObjectPermission, UserObjectPermission

from apps.audit.models import AuditEvent
from apps.routing.models import (
    CapacityAdjustment,
    ExceptionClass,
    Outcome,
    Queue,
    Resolution,
    WorkerProfile,
)

from .access import (
    WORKER_GROUPS,
    can_supervise,
    can_work,
    clearance_of,
    may_see,
    require_eligible,
    visible_queues,
)
from .errors import CaseError
from .models import (
    CapacityAlert,
    Case,
    Decision,
    DeliveryStatus,
    Draft,
    EvidenceItem,
    Notification,
    OutboxEvent,
    State,
)
from .services import allowed_resolutions

# The queue's default view: the work someone could still act on.
ACTIVE_STATES = (State.OPEN, State.CLAIMED, State.WAITING)
ANY_STATE = "all"

# Every ordering ends in the primary key so pagination is stable between polls.
# "Priority ascending" lists P1 first: the band's text order is its urgency order.
SORT_ORDERINGS: dict[str, tuple[str, ...]] = {
    "priority": ("priority_band", "due_at", "created_at", "id"),
    "-priority": ("-priority_band", "due_at", "created_at", "id"),
    "due": ("due_at", "priority_band", "created_at", "id"),
    "-due": ("-due_at", "priority_band", "created_at", "id"),
    # Age ascending is the youngest case first.
    "age": ("-created_at", "id"),
    "-age": ("created_at", "id"),
}
DEFAULT_SORT = "priority"


@dataclass(frozen=True)
class QueueFilters:
    queue: str = ""
    state: str = ""
    exception_class: str = ""
    text: str = ""
    mine: bool = False
    sort: str = DEFAULT_SORT


def queue_choices(user: Any) -> list[Queue]:
    return list(visible_queues(user).only("pk", "name", "display_name"))


def exception_class_choices() -> list[ExceptionClass]:
    return list(ExceptionClass.objects.only("pk", "code", "display_name"))


def queue_cases(user: Any, filters: QueueFilters) -> QuerySet[Case]:
    """The cases of the user's visible queues matching the filters, in the chosen order."""
    cases = Case.objects.filter(queue__in=visible_queues(user)).select_related(
        "queue", "exception_class", "workflow_type", "assignee"
    )
    if filters.queue:
        cases = cases.filter(queue__name=filters.queue)
    if filters.state == ANY_STATE:
        pass
    elif filters.state:
        cases = cases.filter(state=filters.state)
    else:
        cases = cases.filter(state__in=ACTIVE_STATES)
    if filters.exception_class:
        cases = cases.filter(exception_class__code=filters.exception_class)
    if filters.text:
        cases = cases.filter(
            Q(case_ref__icontains=filters.text) | Q(summary__icontains=filters.text)
        )
    if filters.mine:
        cases = cases.filter(assignee=user)
    return cases.order_by(*SORT_ORDERINGS.get(filters.sort, SORT_ORDERINGS[DEFAULT_SORT]))


def count_arrivals(cases: QuerySet[Case], since: datetime) -> int:
    """How many of these cases were filed after `since` (the previous render)."""
    return cases.filter(created_at__gt=since).count()


def supervises_any_queue(user: Any) -> bool:
    return visible_queues(user, "routing.supervise_queue").exists()


@dataclass(frozen=True)
class EvidenceView:
    item: EvidenceItem
    visible: bool


@dataclass
class CasePage:
    """Everything the decision page shows, read once."""

    case: Case
    can_work: bool
    ineligible_reason: str  # why a worker of the queue may still not take this case
    can_supervise: bool
    holds_lease: bool
    lease_lapsed: bool
    clearance: str
    evidence: list[EvidenceView]
    evidence_refs: list[str]
    resolutions: list[Resolution]
    decidable_resolutions: list[Resolution]
    offers_information_request: bool
    resolution_labels: dict[str, str]
    decision: Decision | None
    decision_event: OutboxEvent | None
    draft: Draft | None
    history: list[AuditEvent] = field(default_factory=list)


def case_page(user: Any, case: Case) -> CasePage:
    """The decision page of a case the caller already passed through access_case."""
    clearance = clearance_of(user)
    # A lapsed lease is not a lease, even before the sweep returns the case to open.
    lapsed = case.state == State.CLAIMED and (
        case.lease_expires_at is None or case.lease_expires_at <= timezone.now()
    )
    evidence_items = list(case.evidence.order_by("version", "position"))
    evidence = [
        EvidenceView(item=item, visible=may_see(clearance, item.classification))
        for item in evidence_items
    ]
    refs = list(dict.fromkeys(item.ref for item in evidence_items))
    every_resolution = list(case.exception_class.resolutions.all())
    resolutions = allowed_resolutions(case)
    decision = (
        Decision.objects.select_related("actor").filter(case=case).first()
        if case.state in {State.RESOLUTION_PENDING, State.RESOLVED}
        else None
    )
    decision_event = (
        OutboxEvent.objects.filter(case=case, type="case.decided").first() if decision else None
    )
    works_queue = can_work(user, case.queue)
    ineligible_reason = ""
    if works_queue:
        try:
            require_eligible(user, case)  # clearance and segregation of duties, read-only
        except CaseError as error:
            ineligible_reason = error.message
    return CasePage(
        case=case,
        can_work=works_queue,
        ineligible_reason=ineligible_reason,
        can_supervise=can_supervise(user, case.queue),
        holds_lease=case.state == State.CLAIMED and case.assignee_id == user.pk and not lapsed,
        lease_lapsed=lapsed,
        clearance=clearance,
        evidence=evidence,
        evidence_refs=refs,
        resolutions=resolutions,
        decidable_resolutions=[r for r in resolutions if r.outcome != Outcome.REQUEST_INFORMATION],
        offers_information_request=any(
            r.outcome == Outcome.REQUEST_INFORMATION for r in resolutions
        ),
        resolution_labels={r.code: r.label for r in every_resolution},
        decision=decision,
        decision_event=decision_event,
        draft=Draft.objects.filter(case=case, user=user).first(),
        history=list(AuditEvent.objects.filter(stream=case.pk).order_by("sequence")),
    )


def accepted_decision(case_id: str) -> Decision | None:
    """The decision that won, shown to a reviewer whose own attempt conflicted."""
    return Decision.objects.select_related("actor").filter(case_id=case_id).first()


@dataclass(frozen=True)
class RecoveryRow:
    case: Case
    decision: Decision
    resolution_label: str
    event: OutboxEvent | None


def recovery_rows(user: Any) -> list[RecoveryRow]:
    """Decided cases whose delivery failed, in the queues the user supervises, oldest
    decision first. Each row carries the accepted decision: nobody decides again."""
    cases = (
        Case.objects.filter(
            queue__in=visible_queues(user, "routing.supervise_queue"),
            state=State.RESOLUTION_PENDING,
            delivery_status=DeliveryStatus.FAILED,
        )
        .select_related("queue", "workflow_type", "exception_class", "decision__actor")
        .prefetch_related(
            Prefetch(
                "events",
                queryset=OutboxEvent.objects.filter(type="case.decided"),
                to_attr="decided_events",
            ),
            Prefetch("exception_class__resolutions", to_attr="class_resolutions"),
        )
        .order_by("decision__decided_at", "id")
    )
    rows = []
    for case in cases:
        labels = {r.code: r.label for r in case.exception_class.class_resolutions}
        decision = case.decision
        rows.append(
            RecoveryRow(
                case=case,
                decision=decision,
                resolution_label=labels.get(decision.resolution, decision.resolution),
                event=case.decided_events[0] if case.decided_events else None,
            )
        )
    return rows


# --- Supervisor board -------------------------------------------------------------------

BANDS = ("P1", "P2", "P3", "P4")
NEAR_BREACH_MINUTES = 30
# A case is near its breach when the time left is within 30 minutes or within this share
# of its service target, whichever is longer (a one-week target warns a day ahead).
NEAR_BREACH_SHARE = 0.2
# Priority inversion: a P1/P2 case due this far away or later is weakly urgent.
INVERSION_HORIZON = timedelta(hours=24)
ATTENTION_LIMIT = 50


def supervised_queues(user: Any) -> list[Queue]:
    return list(visible_queues(user, "routing.supervise_queue").only("pk", "name", "display_name"))


def _breached(now: datetime) -> Q:
    return Q(due_at__lt=now) | Q(breached_at__isnull=False)


def _near_breach(now: datetime) -> Q:
    """Not yet breached, and due within 30 minutes or the last 20 % of the target."""
    target = ExpressionWrapper(F("original_due_at") - F("created_at"), output_field=DurationField())
    share_left = ExpressionWrapper(
        Value(now) + target * NEAR_BREACH_SHARE, output_field=DateTimeField()
    )
    not_breached = Q(due_at__gte=now, breached_at__isnull=True)
    return not_breached & (
        Q(due_at__lte=now + timedelta(minutes=NEAR_BREACH_MINUTES)) | Q(due_at__lte=share_left)
    )


@dataclass(frozen=True)
class PriorityInversion:
    """High bands holding weakly urgent work while older low-band work already breached."""

    weak_high: int  # P1/P2 cases due more than 24 h from now, filed after the breach below
    breached_low: int  # P3/P4 cases past due
    oldest_breached_low_at: datetime | None


@dataclass
class QueueLoad:
    queue: Queue
    bands: list[tuple[str, int]]
    active: int
    oldest_created_at: datetime | None
    breached: int
    near_breach: int
    unowned: int
    alerts: list[CapacityAlert]
    inversion: PriorityInversion


@dataclass
class WorkerLoad:
    user: Any
    profile: WorkerProfile | None
    on_shift: bool | None  # None: no worker profile yet
    queues: list[Queue]
    leases: list[Case]
    load: int
    capacity: int | None
    adjustment: CapacityAdjustment | None


@dataclass(frozen=True)
class AttentionCase:
    case: Case
    breached: bool
    near_breach: bool
    alert: CapacityAlert | None


@dataclass
class Board:
    now: datetime
    queues: list[QueueLoad]
    workers: list[WorkerLoad]
    attention: list[AttentionCase]
    attention_total: int

    @property
    def breached(self) -> int:
        return sum(row.breached for row in self.queues)

    @property
    def alerts(self) -> int:
        return sum(len(row.alerts) for row in self.queues)


def _queue_loads(queues: list[Queue], now: datetime) -> list[QueueLoad]:
    """Backlog figures of every queue in two or three queries, whatever the queue count."""
    active = Case.objects.filter(queue__in=queues, state__in=ACTIVE_STATES)
    low_breached = Q(priority_band__in=("P3", "P4")) & _breached(now)
    rows = {
        row["queue_id"]: row
        for row in active.values("queue_id").annotate(
            total=Count("pk"),
            **{band: Count("pk", filter=Q(priority_band=band)) for band in BANDS},
            oldest=Min("created_at"),
            breached=Count("pk", filter=_breached(now)),
            near=Count("pk", filter=_near_breach(now)),
            unowned=Count("pk", filter=Q(state=State.OPEN, assignee__isnull=True)),
            low_breached=Count("pk", filter=low_breached),
            low_breached_oldest=Min("created_at", filter=low_breached),
        )
    }
    # Weakly urgent high-band work filed after the oldest low-band breach of its queue.
    thresholds = [
        Q(queue_id=queue_id, created_at__gt=row["low_breached_oldest"])
        for queue_id, row in rows.items()
        if row["low_breached_oldest"] is not None
    ]
    weak_high: dict[int, int] = {}
    if thresholds:
        weak_high = dict(
            active.filter(
                reduce(or_, thresholds),
                priority_band__in=("P1", "P2"),
                due_at__gt=now + INVERSION_HORIZON,
            )
            .values("queue_id")
            .annotate(n=Count("pk"))
            .values_list("queue_id", "n")
        )
    alerts: dict[int, list[CapacityAlert]] = {}
    for alert in (
        CapacityAlert.objects.filter(queue__in=queues, cleared_at__isnull=True)
        .select_related("case")
        .order_by("raised_at", "pk")
    ):
        alerts.setdefault(alert.queue_id, []).append(alert)
    loads = []
    for queue in queues:
        row = rows.get(queue.pk, {})
        loads.append(
            QueueLoad(
                queue=queue,
                bands=[(band, row.get(band, 0)) for band in BANDS],
                active=row.get("total", 0),
                oldest_created_at=row.get("oldest"),
                breached=row.get("breached", 0),
                near_breach=row.get("near", 0),
                unowned=row.get("unowned", 0),
                alerts=alerts.get(queue.pk, []),
                inversion=PriorityInversion(
                    weak_high=weak_high.get(queue.pk, 0),
                    breached_low=row.get("low_breached", 0),
                    oldest_breached_low_at=row.get("low_breached_oldest"),
                ),
            )
        )
    return loads


def _workers_of(queues: list[Queue]) -> dict[int, set[int]]:
    """user id → ids of these queues the user may work, from guardian's object permission
    rows (user and group grants) in two queries instead of one per queue."""
    queue_type = ContentType.objects.get_for_model(Queue)
    queue_ids = {str(queue.pk): queue.pk for queue in queues}
    grants: dict[int, set[int]] = {}
    for user_id, object_pk in UserObjectPermission.objects.filter(
        content_type=queue_type, permission__codename="work_queue", object_pk__in=queue_ids
    ).values_list("user_id", "object_pk"):
        grants.setdefault(user_id, set()).add(queue_ids[object_pk])
    for user_id, object_pk in GroupObjectPermission.objects.filter(
        content_type=queue_type,
        permission__codename="work_queue",
        object_pk__in=queue_ids,
        group__user__isnull=False,
    ).values_list("group__user", "object_pk"):
        grants.setdefault(user_id, set()).add(queue_ids[object_pk])
    return grants


def _may_work(users: QuerySet[Any]) -> QuerySet[Any]:
    """Active users with a role that works cases (access.can_work's rule, as a filter)."""
    return users.filter(
        Q(groups__name__in=WORKER_GROUPS) | Q(is_superuser=True), is_active=True
    ).distinct()


def live_adjustment_filter(now: datetime) -> Q:
    return Q(ended_at__isnull=True, expires_at__gt=now)


def _worker_loads(queues: list[Queue], now: datetime) -> list[WorkerLoad]:
    grants = _workers_of(queues)
    if not grants:
        return []
    by_id = {queue.pk: queue for queue in queues}
    users = list(
        _may_work(get_user_model().objects.filter(pk__in=grants))
        .select_related("worker_profile")
        .prefetch_related(
            Prefetch(
                "worker_profile__capacity_adjustments",
                queryset=CapacityAdjustment.objects.filter(live_adjustment_filter(now))
                .select_related("actor")
                .order_by("-created_at", "-pk"),
                to_attr="live_adjustments",
            )
        )
        .order_by("username")
    )
    leases: dict[int, list[Case]] = {}
    for case in (
        Case.objects.filter(state=State.CLAIMED, assignee__in=users)
        .select_related("queue")
        .only(
            "pk",
            "case_ref",
            "assignee_id",
            "workload_weight",
            "priority_band",
            "due_at",
            "lease_expires_at",
            "queue__name",
            "queue__display_name",
        )
        .order_by("due_at", "pk")
    ):
        leases.setdefault(case.assignee_id, []).append(case)
    rows = []
    for user in users:
        profile = getattr(user, "worker_profile", None)
        adjustment = None
        if profile is not None and profile.live_adjustments:
            adjustment = profile.live_adjustments[0]
        held = leases.get(user.pk, [])
        rows.append(
            WorkerLoad(
                user=user,
                profile=profile,
                on_shift=profile.on_shift if profile is not None else None,
                queues=[by_id[queue_id] for queue_id in sorted(grants[user.pk])],
                leases=held,
                load=sum(case.workload_weight for case in held),
                capacity=_effective_capacity(profile, adjustment),
                adjustment=adjustment,
            )
        )
    return rows


def _effective_capacity(
    profile: WorkerProfile | None, adjustment: CapacityAdjustment | None
) -> int | None:
    """The live adjustment if any, else the profile's own capacity: the rule of
    services.capacity.effective_capacity, applied to rows already read (no query per
    worker)."""
    if adjustment is not None:
        return adjustment.capacity
    return profile.capacity if profile is not None else None


def _attention(queues: list[Queue], now: datetime) -> tuple[list[AttentionCase], int]:
    """The cases a supervisor may want to act on: breached, near breach, or with nobody
    eligible to take them. Most urgent first; capped (the count says how many in all)."""
    open_alerts = CapacityAlert.objects.filter(cleared_at__isnull=True)
    cases = (
        Case.objects.filter(queue__in=queues, state__in=ACTIVE_STATES)
        .filter(
            _breached(now) | _near_breach(now) | Exists(open_alerts.filter(case_id=OuterRef("pk")))
        )
        .annotate(
            is_breached=ExpressionWrapper(_breached(now), output_field=BooleanField()),
            is_near=ExpressionWrapper(_near_breach(now), output_field=BooleanField()),
        )
        .select_related("queue", "assignee", "exception_class")
        .prefetch_related(Prefetch("capacity_alerts", open_alerts, to_attr="open_alerts"))
        .order_by("due_at", "priority_band", "created_at", "pk")
    )
    total = cases.count()
    rows = [
        AttentionCase(
            case=case,
            breached=case.is_breached,
            near_breach=case.is_near,
            alert=case.open_alerts[0] if case.open_alerts else None,
        )
        for case in cases[:ATTENTION_LIMIT]
    ]
    return rows, total


def supervisor_board(user: Any, *, now: datetime | None = None) -> Board:
    """Everything the board shows for the queues the user supervises, in a fixed number of
    queries whatever the number of queues, workers and cases."""
    now = now or timezone.now()
    queues = supervised_queues(user)
    attention, attention_total = _attention(queues, now)
    return Board(
        now=now,
        queues=_queue_loads(queues, now),
        workers=_worker_loads(queues, now),
        attention=attention,
        attention_total=attention_total,
    )


def case_for_supervisor(user: Any, reference: str) -> Case | None:
    """The case a supervisor named on the board, by id or by its business reference among
    the active cases of the queues they can see. None when nothing (or more than one case)
    matches: the caller says so without revealing cases outside the user's scope."""
    reference = (reference or "").strip()
    if not reference:
        return None
    cases = Case.objects.filter(queue__in=visible_queues(user)).select_related("queue", "assignee")
    by_id = cases.filter(pk=reference).first()
    if by_id is not None:
        return by_id
    matches = list(cases.filter(case_ref=reference, state__in=ACTIVE_STATES)[:2])
    return matches[0] if len(matches) == 1 else None


def worker_for_supervisor(user: Any, worker_id: int | str) -> Any | None:
    """A worker of one of the queues the user supervises (capacity is theirs to adjust)."""
    try:
        worker_pk = int(worker_id)
    except (TypeError, ValueError):
        return None
    grants = _workers_of(supervised_queues(user))
    if worker_pk not in grants:
        return None
    return _may_work(get_user_model().objects.filter(pk=worker_pk)).first()


def transfer_targets(user: Any) -> tuple[list[Queue], list[Any]]:
    """Where a supervisor may transfer a case: the queues they supervise (the service
    refuses others), and the workers of those queues."""
    queues = sorted(supervised_queues(user), key=lambda queue: str(queue))
    workers = list(
        _may_work(get_user_model().objects.filter(pk__in=_workers_of(queues)))
        .only("pk", "username")
        .order_by("username")
    )
    return queues, workers


def reroute_targets() -> list[Queue]:
    """A misrouted case may belong in any queue, supervised by the rerouter or not."""
    return list(Queue.objects.only("pk", "name", "display_name").order_by("display_name"))


# --- Notifications ----------------------------------------------------------------------

NOTIFICATION_PAGE_SIZE = 50


def unread_notifications(user: Any) -> QuerySet[Notification]:
    return Notification.objects.filter(user=user, read_at__isnull=True)


def notification_badge(user: Any) -> tuple[int, int]:
    """(unread count, id of the newest unread) in one query: the poll compares the id to
    announce only notifications that arrived since the last look."""
    row = unread_notifications(user).aggregate(count=Count("pk"), newest=Max("pk"))
    return row["count"], row["newest"] or 0


def notifications_of(user: Any) -> list[Notification]:
    return list(
        Notification.objects.filter(user=user)
        .select_related("case")
        .order_by("-created_at", "-pk")[:NOTIFICATION_PAGE_SIZE]
    )


def notifications_since(user: Any, *, after_id: int) -> tuple[int, Notification | None]:
    """How many unread notifications arrived after `after_id`, and the newest of them."""
    arrived = unread_notifications(user).filter(pk__gt=after_id)
    newest = arrived.order_by("-pk").first()
    return (arrived.count() if newest else 0), newest


# --- Shifts and "next case" ---------------------------------------------------------------


def works_any_queue(user: Any) -> bool:
    return visible_queues(user, "routing.work_queue").exists()


def held_cases(user: Any) -> list[Case]:
    return list(
        Case.objects.filter(state=State.CLAIMED, assignee=user)
        .select_related("queue")
        .order_by("due_at", "pk")
    )


@dataclass(frozen=True)
class ShiftStatus:
    on_shift: bool
    held: list[Case]


def shift_status(user: Any) -> ShiftStatus | None:
    """The worker's shift and the cases they hold; None for someone who works no queue."""
    if not works_any_queue(user):
        return None
    profile = WorkerProfile.objects.filter(user=user).first()
    return ShiftStatus(on_shift=profile.on_shift if profile else True, held=held_cases(user))
