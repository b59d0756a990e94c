"""Priority on real cases: it ages over frozen time, honours an active override until it
expires, and a contractual deadline outranks any amount."""

from __future__ import annotations

from datetime import timedelta

import time_machine
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.cases.models import Case
from apps.cases.services import refresh_priorities
from apps.routing.policy import PRIORITY_POLICY_VERSION

NO_AMOUNT = {"tenant": "acme-eu", "region": "eu"}


def test_a_low_band_rises_over_frozen_time_and_each_band_change_is_audited(file_packet):
    start = timezone.now()
    case = file_packet(at=start, attributes=NO_AMOUNT, **{"class": "quality_threshold_missed"})
    assert (case.severity, case.priority_band) == ("low", "P4")

    with time_machine.travel(start + timedelta(hours=25), tick=False):
        assert refresh_priorities() == 1
    case.refresh_from_db()
    assert case.priority_band == "P3"
    assert case.priority_explanation == "P3: low severity, overdue by 60 min, waiting 25 h"

    with time_machine.travel(start + timedelta(days=5), tick=False):
        assert refresh_priorities() == 1
    case.refresh_from_db()
    assert case.priority_band == "P2"
    assert case.priority_components["age"] == 30
    assert case.priority_policy_version == PRIORITY_POLICY_VERSION

    changes = AuditEvent.objects.filter(stream=case.pk, action="case.priority_changed")
    assert [e.after["priority"] for e in changes.order_by("id")] == ["P3", "P2"]


def test_an_active_override_sets_the_band_until_it_expires(file_packet, supervisor):
    start = timezone.now()
    case = file_packet(at=start, attributes=NO_AMOUNT, **{"class": "quality_threshold_missed"})
    Case.objects.filter(pk=case.pk).update(
        priority_override_band="P1",
        priority_override_reason="regulator asked today",
        priority_override_by=supervisor,
        priority_override_expires_at=start + timedelta(hours=2),
    )

    with time_machine.travel(start + timedelta(hours=1), tick=False):
        refresh_priorities()
    case.refresh_from_db()
    assert case.priority_band == "P1"
    assert case.priority_explanation.startswith("P1 (override by sam: regulator asked today)")
    assert case.priority_score == 20  # the computed score is kept: low 10 + due in 23 h 10
    assert case.priority_components["severity"] == 10

    with time_machine.travel(start + timedelta(hours=3), tick=False):
        refresh_priorities()
    case.refresh_from_db()
    assert case.priority_band == "P4"  # expired: the computed band is back
    assert case.priority_explanation.startswith("P4: low severity")


def test_a_contractual_deadline_outranks_a_huge_amount(file_packet):
    rich = file_packet(attributes={"amount": "250000000.00", "currency": "EUR"})
    bound = file_packet(
        attributes={"amount": "12.00", "currency": "EUR", "deadline_kind": "contractual"}
    )

    assert rich.severity == "high"  # money raised it as far as money can
    assert (rich.priority_band, bound.priority_band) == ("P2", "P1")
    assert bound.priority_score > rich.priority_score
    assert "contractual deadline" in bound.priority_explanation
    assert "amount 250,000,000.00 EUR" in rich.priority_explanation
    # The queue puts the deadline first.
    ordered = Case.objects.order_by("priority_band", "due_at", "created_at")
    assert list(ordered.values_list("pk", flat=True)) == [bound.pk, rich.pk]


def test_customer_class_and_blocked_work_raise_priority_and_are_named(file_packet):
    plain = file_packet(attributes=NO_AMOUNT)
    important = file_packet(attributes={**NO_AMOUNT, "customer_tier": "strategic", "blocking": 2})

    assert important.priority_score == plain.priority_score + 15 + 10
    assert important.priority_explanation.endswith("strategic customer, blocks 2 tasks")
