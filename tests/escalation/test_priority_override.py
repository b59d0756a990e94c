"""A supervisor overrides a case's priority with a reason and an expiry; the override is
audited and ends by itself, and the band returns to the policy's."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.audit.services import verify
from apps.cases.errors import CaseError
from apps.cases.models import Case
from apps.cases.services import (
    clear_priority_override,
    expire_overrides,
    override_priority,
)
from apps.cases.services.common import refresh_priority
from tests.delivery.helpers import claim_and_decide


def policy_band(case: Case) -> str:
    """The band the priority policy gives the case right now, ignoring any override."""
    probe = Case.objects.get(pk=case.pk)
    probe.priority_override_band = ""
    probe.priority_override_expires_at = None
    refresh_priority(probe, now=timezone.now())
    return probe.priority_band


def other_band(band: str) -> str:
    return "P1" if band != "P1" else "P4"


def test_a_supervisor_overrides_the_band_with_reason_and_expiry_and_it_is_audited(
    supervisor, file_invoice_case
):
    case = file_invoice_case()
    target = other_band(case.priority_band)
    expires = timezone.now() + timedelta(hours=4)

    overridden = override_priority(
        case_id=case.pk, actor=supervisor, band=target, reason="CFO asked", expires_at=expires
    )

    case.refresh_from_db()
    assert case.priority_band == target
    assert (case.priority_override_band, case.priority_override_reason) == (target, "CFO asked")
    assert (case.priority_override_by, case.priority_override_expires_at) == (supervisor, expires)
    assert overridden.version == case.version == 1  # an open decision form stays valid
    event = AuditEvent.objects.get(stream=case.pk, action="case.priority_overridden")
    assert (event.actor_label, event.reason) == ("sam", "CFO asked")
    assert event.after["override"]["band"] == target
    assert event.after["priority"] == target and event.before["priority"] != target
    assert list(verify([case.pk])) == []


def test_only_a_supervisor_of_the_queue_may_override(worker, viewer, outsider, file_invoice_case):
    case = file_invoice_case()
    expires = timezone.now() + timedelta(hours=1)
    for actor, kind in ((worker, "forbidden"), (viewer, "forbidden"), (outsider, "not_found")):
        with pytest.raises(CaseError) as error:
            override_priority(
                case_id=case.pk, actor=actor, band="P1", reason="mine", expires_at=expires
            )
        assert error.value.kind == kind
    case.refresh_from_db()
    assert case.priority_override_band == ""
    assert not AuditEvent.objects.filter(stream=case.pk, action="case.priority_overridden")


@pytest.mark.parametrize(
    ("band", "reason", "expires_in", "field"),
    [
        ("P0", "reason", timedelta(hours=1), "band"),
        ("P1", "  ", timedelta(hours=1), "reason"),
        ("P1", "reason", None, "expires_at"),
        ("P1", "reason", timedelta(minutes=-1), "expires_at"),
        ("P1", "reason", timedelta(days=7, minutes=1), "expires_at"),
    ],
)
def test_an_override_needs_a_band_a_reason_and_an_expiry_within_seven_days(
    supervisor, file_invoice_case, band, reason, expires_in, field
):
    case = file_invoice_case()
    expires = None if expires_in is None else timezone.now() + expires_in

    with pytest.raises(CaseError) as error:
        override_priority(
            case_id=case.pk, actor=supervisor, band=band, reason=reason, expires_at=expires
        )

    assert error.value.kind == "invalid"
    assert field in error.value.fields
    case.refresh_from_db()
    assert case.priority_override_band == ""


def test_a_decided_case_can_no_longer_be_overridden(supervisor, worker, file_invoice_case):
    case, _event = claim_and_decide(file_invoice_case(), worker)
    with pytest.raises(CaseError) as error:
        override_priority(
            case_id=case.pk,
            actor=supervisor,
            band="P1",
            reason="too late",
            expires_at=timezone.now() + timedelta(hours=1),
        )
    assert error.value.kind == "conflict"


def test_an_override_expires_by_itself_and_the_band_returns_to_the_policy(
    supervisor, file_invoice_case
):
    case = file_invoice_case()
    start = timezone.now()
    target = other_band(case.priority_band)
    override_priority(
        case_id=case.pk,
        actor=supervisor,
        band=target,
        reason="vendor escalation call",
        expires_at=start + timedelta(hours=2),
    )

    with time_machine.travel(start + timedelta(hours=1, minutes=59), tick=False):
        assert expire_overrides() == 0
        case.refresh_from_db()
        assert case.priority_band == target  # still in force

    with time_machine.travel(start + timedelta(hours=2, seconds=1), tick=False):
        assert expire_overrides() == 1
        assert expire_overrides() == 0  # the next beat finds nothing to do
        case.refresh_from_db()
        assert case.priority_override_band == ""
        assert case.priority_override_by is None
        assert case.priority_override_expires_at is None
        assert case.priority_band == policy_band(case) != target

    events = AuditEvent.objects.filter(stream=case.pk, action="case.priority_override_expired")
    assert events.count() == 1
    assert events[0].actor_kind == "system"
    assert events[0].before["override"]["band"] == target
    assert events[0].after["override"] is None
    assert list(verify([case.pk])) == []


def test_a_supervisor_clears_an_override_early_and_a_second_clear_changes_nothing(
    supervisor, worker, file_invoice_case
):
    case = file_invoice_case()
    target = other_band(case.priority_band)
    override_priority(
        case_id=case.pk,
        actor=supervisor,
        band=target,
        reason="rush",
        expires_at=timezone.now() + timedelta(days=1),
    )
    with pytest.raises(CaseError) as error:
        clear_priority_override(case_id=case.pk, actor=worker, reason="not mine")
    assert error.value.kind == "forbidden"
    with pytest.raises(CaseError) as error:
        clear_priority_override(case_id=case.pk, actor=supervisor, reason="")
    assert error.value.kind == "invalid"

    clear_priority_override(case_id=case.pk, actor=supervisor, reason="handled")
    clear_priority_override(case_id=case.pk, actor=supervisor, reason="handled")

    case.refresh_from_db()
    assert case.priority_override_band == ""
    assert case.priority_band == policy_band(case)
    cleared = AuditEvent.objects.filter(stream=case.pk, action="case.priority_override_cleared")
    assert [event.reason for event in cleared] == ["handled"]
    assert expire_overrides(now=timezone.now() + timedelta(days=2)) == 0
