"""Reads for the worker and supervisor pages. No writes here; guardian only through access.

Lists are filtered by the queues a user may see (few rows, one subquery), never by
per-case permission rows, and pull their related rows in the same query.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Prefetch, Q, QuerySet
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.routing.models import ExceptionClass, Outcome, Queue, Resolution

from .access import (
    can_supervise,
    can_work,
    clearance_of,
    may_see,
    require_eligible,
    visible_queues,
)
from .errors import CaseError
from .models import Case, Decision, DeliveryStatus, Draft, EvidenceItem, OutboxEvent, State
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
