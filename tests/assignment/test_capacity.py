"""Capacity in workload units: claims stop at it, supervisors adjust it for a while with a
reason, and the adjustment lapses by itself, audited."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.audit.services import verify
from apps.cases.errors import CaseError
from apps.cases.models import State
from apps.cases.services import (
    active_load,
    adjust_capacity,
    claim_case,
    effective_capacity,
    lapse_capacity_adjustments,
    release_case,
)
from apps.routing.models import CapacityAdjustment, WorkerProfile

from .conftest import make_worker


def profile_of(user):
    return WorkerProfile.objects.get(user=user)


def test_a_claim_that_would_exceed_capacity_is_refused_with_the_numbers(file_case_with):
    wendy = make_worker("wendy", capacity=3)
    first = file_case_with(workload_weight=2)
    second = file_case_with(workload_weight=2)
    light = file_case_with(workload_weight=1)
    claim_case(case_id=first.pk, actor=wendy)

    with pytest.raises(CaseError) as refused:
        claim_case(case_id=second.pk, actor=wendy)

    assert refused.value.kind == "conflict"
    assert refused.value.message == (
        "At capacity: 2 of 3 workload units in use, and this case needs 2."
    )
    assert second.__class__.objects.get(pk=second.pk).state == State.OPEN
    claim_case(case_id=light.pk, actor=wendy)  # exactly at capacity is allowed
    assert active_load(wendy) == 3


def test_releasing_a_case_frees_its_units(file_case_with):
    wendy = make_worker("wendy", capacity=2)
    held = claim_case(case_id=file_case_with(workload_weight=2).pk, actor=wendy)
    waiting = file_case_with(workload_weight=2)
    with pytest.raises(CaseError):
        claim_case(case_id=waiting.pk, actor=wendy)

    release_case(case_id=held.pk, actor=wendy, lease_token=held.lease_token)

    assert claim_case(case_id=waiting.pk, actor=wendy).state == State.CLAIMED


def test_a_supervisor_raises_capacity_for_a_while_and_it_is_audited(file_case_with, lead):
    wendy = make_worker("wendy", capacity=1)
    claim_case(case_id=file_case_with().pk, actor=wendy)
    until = timezone.now() + timedelta(hours=4)

    adjustment = adjust_capacity(
        worker=wendy, capacity=3, reason="Backlog after the outage", expires_at=until, actor=lead
    )

    assert effective_capacity(profile_of(wendy)) == 3
    claim_case(case_id=file_case_with().pk, actor=wendy)  # the second case now fits
    event = AuditEvent.objects.get(stream="worker:wendy", action="worker.capacity_adjusted")
    assert event.actor_label == "lena"
    assert event.reason == "Backlog after the outage"
    assert event.before["capacity"] == 1
    assert event.after["capacity"] == 3
    assert event.after["adjustment"] == adjustment.pk
    assert list(verify(["worker:wendy"])) == []


def test_a_new_adjustment_ends_the_previous_one(lead):
    wendy = make_worker("wendy", capacity=5)
    until = timezone.now() + timedelta(hours=4)
    first = adjust_capacity(
        worker=wendy, capacity=2, reason="Training", expires_at=until, actor=lead
    )
    second = adjust_capacity(worker=wendy, capacity=7, reason="Cover", expires_at=until, actor=lead)

    first.refresh_from_db()
    assert first.ended_at is not None
    assert CapacityAdjustment.objects.filter(profile__user=wendy, ended_at=None).get() == second
    assert effective_capacity(profile_of(wendy)) == 7


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"reason": "  "}, "reason"),
        ({"expires_at": None}, "expires_at"),
        ({"expires_at": timezone.now() - timedelta(minutes=1)}, "expires_at"),
        ({"capacity": -1}, "capacity"),
    ],
    ids=["no-reason", "no-expiry", "expiry-past", "negative"],
)
def test_an_adjustment_needs_a_reason_a_future_expiry_and_a_sane_capacity(lead, changes, field):
    wendy = make_worker("wendy", capacity=5)
    arguments = {
        "worker": wendy,
        "capacity": 3,
        "reason": "Cover",
        "expires_at": timezone.now() + timedelta(hours=1),
        "actor": lead,
        **changes,
    }

    with pytest.raises(CaseError) as refused:
        adjust_capacity(**arguments)

    assert refused.value.kind == "invalid"
    assert field in refused.value.fields
    assert not CapacityAdjustment.objects.exists()


def test_only_a_supervisor_of_a_queue_the_worker_works_may_adjust(reference_data):
    wendy = make_worker("wendy")  # accounts_payable
    security_lead = make_worker("sid", role="supervisor", queues=(), supervise=("security_review",))
    colleague = make_worker("walter")

    for actor in (security_lead, colleague, wendy):
        with pytest.raises(CaseError) as refused:
            adjust_capacity(
                worker=wendy,
                capacity=9,
                reason="more",
                expires_at=timezone.now() + timedelta(hours=1),
                actor=actor,
            )
        assert refused.value.kind == "forbidden"
    assert not CapacityAdjustment.objects.exists()


def test_an_adjustment_stops_counting_at_expiry_and_the_sweep_lapses_it_once(lead):
    wendy = make_worker("wendy", capacity=4)
    start = timezone.now()
    adjust_capacity(
        worker=wendy,
        capacity=8,
        reason="Quarter end",
        expires_at=start + timedelta(hours=2),
        actor=lead,
    )
    later = start + timedelta(hours=2, minutes=1)

    with time_machine.travel(later, tick=False):
        # Before any sweep ran, the expired adjustment no longer counts.
        assert effective_capacity(profile_of(wendy)) == 4
        assert lapse_capacity_adjustments() == 1
        assert lapse_capacity_adjustments() == 0  # idempotent

    adjustment = CapacityAdjustment.objects.get(profile__user=wendy)
    assert adjustment.ended_at == start + timedelta(hours=2)
    lapsed = AuditEvent.objects.filter(
        stream="worker:wendy", action="worker.capacity_adjustment_lapsed"
    )
    assert lapsed.count() == 1
    assert lapsed.get().after == {"capacity": 4}
    assert lapsed.get().actor_label == "capacity-sweep"


def test_lowering_capacity_keeps_held_cases_but_gives_no_more(file_case_with, lead):
    wendy = make_worker("wendy", capacity=3)
    for _ in range(3):
        claim_case(case_id=file_case_with().pk, actor=wendy)

    adjust_capacity(
        worker=wendy,
        capacity=1,
        reason="Onboarding a new colleague",
        expires_at=timezone.now() + timedelta(hours=1),
        actor=lead,
    )

    assert active_load(wendy) == 3
    with pytest.raises(CaseError) as refused:
        claim_case(case_id=file_case_with().pk, actor=wendy)
    assert "3 of 1 workload units" in refused.value.message
