"""Escalation fixtures: a five-level ladder on the invoice and refund classes, an overflow
queue, a control owner, and e-mail addresses for the personas.

The ladder (remaining % of the service target at which a level fires):
  L1 remind_assignee    50   (time half gone)
  L2 alert_supervisor   25
  L3 bump_priority       0   (due now)
  L4 transfer_overflow -50   (overdue by half the target)
  L5 control_owner    -100   (overdue by the whole target)
Impact gating (min_severity) is exercised on its own in test_escalation_ladder.py.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from guardian.shortcuts import assign_perm

from apps.cases.models import Case
from apps.routing.models import EscalationStep, ExceptionClass, Queue
from tests.conftest import make_user

LADDER = [
    (1, "remind_assignee", 50, ""),
    (2, "alert_supervisor", 25, ""),
    (3, "bump_priority", 0, ""),
    (4, "transfer_overflow", -50, ""),
    (5, "control_owner", -100, ""),
]
LEVELS = [level for level, *_ in LADDER]
SUPERVISE = ["view_queue", "work_queue", "supervise_queue"]


def moment(case: Case, percent: float) -> datetime:
    """The instant at which ``percent`` of the case's service target is left (negative:
    overdue by that share of the target), a second past it so the level is reached."""
    span = case.due_at - case.created_at
    return case.due_at - span * (percent / 100) + timedelta(seconds=1)


def install_ladder(class_code: str) -> ExceptionClass:
    exception_class = ExceptionClass.objects.get(code=class_code)
    for level, action, percent, min_severity in LADDER:
        EscalationStep.objects.update_or_create(
            exception_class=exception_class,
            level=level,
            defaults={
                "action": action,
                "remaining_percent": percent,
                "min_severity": min_severity,
            },
        )
    return exception_class


@pytest.fixture
def ladder(reference_data: None) -> ExceptionClass:
    """The ladder on evidence_conflict, the invoice packet's class."""
    return install_ladder("evidence_conflict")


@pytest.fixture
def overflow_queue(reference_data: None) -> Queue:
    """accounts_payable overflows into ap_overflow."""
    overflow, _ = Queue.objects.get_or_create(
        name="ap_overflow", defaults={"display_name": "Accounts payable overflow"}
    )
    Queue.objects.filter(name="accounts_payable").update(overflow_queue=overflow)
    return overflow


@pytest.fixture
def overflow_supervisor(overflow_queue: Queue) -> User:
    """Supervises the overflow queue only: the one who hears that a case arrived there."""
    user = make_user(
        "olga", role="supervisor", queues={"ap_overflow": SUPERVISE}, clearance="restricted"
    )
    user.email = "olga@example.test"
    user.save(update_fields=["email"])
    return user


@pytest.fixture
def control_owner(reference_data: None) -> User:
    user = User.objects.create_user(
        username="carla", password="pw-carla", email="carla@example.test"
    )
    return user


@pytest.fixture
def people(worker: User, worker2: User, supervisor: User, viewer: User) -> dict[str, User]:
    """The personas with e-mail addresses (the viewer deliberately has none)."""
    for user in (worker, worker2, supervisor):
        user.email = f"{user.username}@example.test"
        user.save(update_fields=["email"])
    return {"worker": worker, "worker2": worker2, "supervisor": supervisor, "viewer": viewer}


def grant(user: User, queue: Queue, perms: list[str]) -> None:
    for perm in perms:
        assign_perm(f"routing.{perm}", user, queue)


def notifications_of(user: User, **filters: Any) -> list[Any]:
    return list(user.notifications.filter(**filters).order_by("created_at", "pk"))


@pytest.fixture
def browser_of() -> Any:
    """A logged-in browser for a persona (the decision pages)."""

    def _client(user: User) -> Client:
        client = Client()
        client.force_login(user)
        return client

    return _client
