"""Fetch and authorize in one call. Guardian is consulted only here and in selectors.

Business scope is the queue: `view_queue` to see a case (else 404, its existence is not
revealed), `work_queue` to claim or decide (else 403), `supervise_queue` to retry
deliveries and steer. Roles are Django groups.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from guardian.shortcuts import get_objects_for_user

from apps.routing.models import CLASSIFICATION_RANK, Classification, Queue, WorkerProfile

from .errors import CaseError
from .models import Case

WORKER_GROUPS = {"worker", "supervisor"}


def visible_queues(user: Any, perm: str = "routing.view_queue") -> QuerySet[Queue]:
    if not user.is_authenticated:
        return Queue.objects.none()
    return get_objects_for_user(user, perm, klass=Queue, accept_global_perms=False)


def can_view(user: Any, queue: Queue) -> bool:
    return bool(user.is_authenticated and user.has_perm("routing.view_queue", queue))


def can_work(user: Any, queue: Queue) -> bool:
    if not user.is_authenticated or not user.has_perm("routing.work_queue", queue):
        return False
    return user.is_superuser or user.groups.filter(name__in=WORKER_GROUPS).exists()


def can_supervise(user: Any, queue: Queue) -> bool:
    return bool(user.is_authenticated and user.has_perm("routing.supervise_queue", queue))


def in_group(user: Any, group: str) -> bool:
    return bool(user.is_superuser or user.groups.filter(name=group).exists())


def clearance_of(user: Any) -> str:
    profile = WorkerProfile.objects.filter(user=user).only("clearance").first()
    return profile.clearance if profile else Classification.INTERNAL


def may_see(clearance: str, classification: str) -> bool:
    return CLASSIFICATION_RANK.get(classification, 99) <= CLASSIFICATION_RANK.get(clearance, -1)


def access_case(user: Any, case_id: str, *, for_update: bool = False) -> Case:
    """The case if the user may see it; CaseError not_found otherwise (no existence leak)."""
    cases = Case.objects.select_related("queue", "exception_class", "workflow_type", "assignee")
    if for_update:
        cases = cases.select_for_update(of=("self",))
    case = cases.filter(pk=case_id).first()
    if case is None or not can_view(user, case.queue):
        raise CaseError("not_found", "No such case.")
    return case


def require_work(user: Any, case: Case) -> None:
    if not can_work(user, case.queue):
        raise CaseError("forbidden", "You may see this case but not work on it.")


def require_supervise(user: Any, case: Case) -> None:
    if not can_supervise(user, case.queue):
        raise CaseError("forbidden", "Only a supervisor of this queue may do this.")


def require_eligible(user: Any, case: Case) -> None:
    """Hard constraints checked at claim and again at decision: clearance and segregation."""
    require_work(user, case)
    clearance = clearance_of(user)
    needed = case.evidence.values_list("classification", flat=True).distinct()
    if any(not may_see(clearance, c) for c in needed):
        raise CaseError("forbidden", "Your data clearance does not cover this case's evidence.")
    initiated_by = str(case.attributes.get("initiated_by") or "")
    if initiated_by and initiated_by == user.get_username():
        raise CaseError(
            "forbidden",
            "Segregation of duties: you initiated this request, so you may not decide it.",
        )
