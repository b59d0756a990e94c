"""'Next case' (priority push): the best case the worker is eligible for and has room for,
in a deterministic order, within the queue's push cap and focus period."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.cases.errors import CaseError
from apps.cases.models import Case, State, Transfer
from apps.cases.services import claim_case, next_case, skip_case
from apps.routing.models import Queue, WorkerProfile

from .conftest import make_worker

BASE = timezone.now().replace(microsecond=0)


def configure(queue: str = "accounts_payable", **fields) -> None:
    Queue.objects.filter(name=queue).update(**fields)


@pytest.fixture
def push_queue(reference_data):
    configure(assignment_model="priority_push", push_concurrency_cap=10)


def test_next_case_orders_by_band_then_due_then_created(push_queue, file_case_with):
    p3 = file_case_with(priority_band="P3", due_at=BASE + timedelta(minutes=5))
    p2_late = file_case_with(priority_band="P2", due_at=BASE + timedelta(hours=3))
    p2_old = file_case_with(
        priority_band="P2", due_at=BASE + timedelta(hours=1), created_at=BASE - timedelta(hours=5)
    )
    p2_new = file_case_with(
        priority_band="P2", due_at=BASE + timedelta(hours=1), created_at=BASE - timedelta(hours=1)
    )
    wendy = make_worker("wendy")

    handed = [next_case(actor=wendy).pk for _ in range(4)]

    assert handed == [p2_old.pk, p2_new.pk, p2_late.pk, p3.pk]
    assert next_case(actor=wendy) is None


def test_a_pushed_case_is_claimed_with_a_push_lease_a_transfer_row_and_an_audit_event(
    push_queue, file_case_with
):
    case = file_case_with()
    wendy = make_worker("wendy")

    pushed = next_case(actor=wendy)

    assert pushed.pk == case.pk
    pushed.refresh_from_db()
    assert pushed.state == State.CLAIMED
    assert pushed.assignee == wendy
    assert pushed.lease_kind == "push"
    assert pushed.lease_token and pushed.lease_expires_at > timezone.now()
    transfer = Transfer.objects.get(case=case)
    assert (transfer.kind, transfer.to_user, transfer.actor, transfer.rule) == (
        "push",
        wendy,
        wendy,
        "next-case",
    )
    event = AuditEvent.objects.filter(stream=case.pk).latest("sequence")
    assert event.action == "case.claimed"
    assert event.after["lease_kind"] == "push"
    assert WorkerProfile.objects.get(user=wendy).last_pushed_at is not None


def test_next_case_skips_cases_the_worker_is_not_eligible_for(push_queue, file_case_with):
    file_case_with(priority_band="P1", required_skills={"refunds": 4})
    file_case_with(priority_band="P1", required_language="de")
    own = file_case_with(
        priority_band="P1", attributes={"tenant": "t", "amount": "1", "initiated_by": "wendy"}
    )
    fits = file_case_with(priority_band="P3")
    wendy = make_worker("wendy", skills={"refunds": 2})

    assert next_case(actor=wendy).pk == fits.pk
    assert next_case(actor=wendy) is None
    assert Case.objects.get(pk=own.pk).state == State.OPEN


def test_next_case_passes_over_a_case_heavier_than_the_room_left(push_queue, file_case_with):
    wendy = make_worker("wendy", capacity=3)
    claim_case(case_id=file_case_with(queue="accounts_payable").pk, actor=wendy)
    file_case_with(priority_band="P1", workload_weight=3)
    light = file_case_with(priority_band="P4", workload_weight=2)

    assert next_case(actor=wendy).pk == light.pk


def test_next_case_at_capacity_or_off_shift_says_so(push_queue, file_case_with):
    full = make_worker("full", capacity=1)
    claim_case(case_id=file_case_with().pk, actor=full)
    away = make_worker("away", on_shift=False)
    file_case_with()

    with pytest.raises(CaseError) as at_capacity:
        next_case(actor=full)
    with pytest.raises(CaseError) as off_shift:
        next_case(actor=away)

    assert at_capacity.value.message == (
        "You are at capacity: 1 of 1 workload units in use. Finish or release a case first."
    )
    assert off_shift.value.message == "You are off shift: go on shift to receive cases."


def test_fifo_pull_and_auto_assign_queues_are_not_pushed(reference_data, file_case_with):
    wendy = make_worker("wendy", queues=("accounts_payable", "finance_approvals"))
    file_case_with()  # accounts_payable: fifo_pull by default
    configure("finance_approvals", assignment_model="round_robin")
    file_case_with(queue="finance_approvals")

    assert next_case(actor=wendy) is None


def test_a_worker_gets_no_cases_from_queues_they_only_view(push_queue, file_case_with):
    configure("finance_approvals", assignment_model="priority_push")
    file_case_with(queue="finance_approvals", priority_band="P1")
    mine = file_case_with(priority_band="P4")
    wendy = make_worker("wendy")
    from guardian.shortcuts import assign_perm

    assign_perm("routing.view_queue", wendy, Queue.objects.get(name="finance_approvals"))

    assert next_case(actor=wendy).pk == mine.pk


def test_the_push_concurrency_cap_limits_pushed_cases_per_queue(push_queue, file_case_with):
    configure(push_concurrency_cap=2)
    cases = [file_case_with() for _ in range(3)]
    wendy = make_worker("wendy")
    pulled = file_case_with()
    claim_case(case_id=pulled.pk, actor=wendy)  # pulled cases do not count toward the cap

    assert next_case(actor=wendy) is not None
    assert next_case(actor=wendy) is not None
    assert next_case(actor=wendy) is None
    assert Case.objects.filter(pk__in=[c.pk for c in cases], state=State.OPEN).count() == 1


def test_the_focus_period_holds_back_new_pushes_except_p1(push_queue, file_case_with):
    configure(focus_period_minutes=30)
    first = file_case_with(priority_band="P3", due_at=BASE + timedelta(hours=1))
    normal = file_case_with(priority_band="P3", due_at=BASE + timedelta(hours=2))
    wendy = make_worker("wendy")

    with time_machine.travel(BASE, tick=False):
        assert next_case(actor=wendy).pk == first.pk
    with time_machine.travel(BASE + timedelta(minutes=10), tick=False):
        assert next_case(actor=wendy) is None  # protected focus time
        urgent = file_case_with(priority_band="P1")
        assert next_case(actor=wendy).pk == urgent.pk  # P1 breaks through
    with time_machine.travel(BASE + timedelta(minutes=41), tick=False):
        assert next_case(actor=wendy).pk == normal.pk  # 30 min after the last push


def test_a_blend_queue_pushes_only_its_push_bands(reference_data, file_case_with):
    configure(assignment_model="blend", push_bands=["P1", "P2"])
    routine = file_case_with(priority_band="P3")
    urgent = file_case_with(priority_band="P2")
    wendy = make_worker("wendy")

    assert next_case(actor=wendy).pk == urgent.pk
    assert next_case(actor=wendy) is None
    assert claim_case(case_id=routine.pk, actor=wendy).state == State.CLAIMED  # pulled


def test_a_skipped_case_is_not_pushed_back_to_the_same_worker_for_an_hour(
    push_queue, file_case_with
):
    best = file_case_with(priority_band="P1")
    other = file_case_with(priority_band="P4")
    wendy = make_worker("wendy")
    walter = make_worker("walter")

    assert next_case(actor=wendy).pk == best.pk
    skip_case(case_id=best.pk, actor=wendy, reason="Conflict of interest with the vendor")

    assert next_case(actor=wendy).pk == other.pk
    assert next_case(actor=walter).pk == best.pk
    best.refresh_from_db()
    assert best.skip_count == 1
