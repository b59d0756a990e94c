"""The lifecycle through the services: file, claim, decide, relay-ready; audit intact."""

from __future__ import annotations

import uuid

import pytest

from apps.audit.models import AuditEvent
from apps.audit.services import verify
from apps.cases.errors import CaseError
from apps.cases.models import Decision, OutboxEvent, State
from apps.cases.services import claim_case, decide_case, expire_leases, release_case


def test_filed_case_is_routed_prioritized_and_audited(file_invoice_case):
    case = file_invoice_case()
    assert case.state == State.OPEN
    assert case.queue.name == "accounts_payable"
    assert case.priority_band in {"P1", "P2", "P3", "P4"}
    assert case.priority_explanation.startswith(case.priority_band)
    assert case.evidence.count() == 2
    assert AuditEvent.objects.filter(stream=case.pk, action="case.filed").count() == 1


def test_claim_then_decide_writes_decision_outbox_and_audit(
    claimed_case, worker, django_capture_on_commit_callbacks
):
    result = decide_case(
        case_id=claimed_case.pk,
        actor=worker,
        expected_version=claimed_case.version,
        lease_token=claimed_case.lease_token,
        resolution="select_po",
        fields={"po_number": "po_781"},
        note="",
        resolution_id=str(uuid.uuid4()),
        evidence_digest=claimed_case.evidence_digest,
    )
    claimed_case.refresh_from_db()
    assert claimed_case.state == State.RESOLUTION_PENDING
    assert Decision.objects.get(case=claimed_case) == result.decision
    event = OutboxEvent.objects.get(case=claimed_case)
    assert event.type == "case.decided"
    assert event.body["data"]["resolution"] == "select_po"
    assert event.body["data"]["checkpoint_id"] == "cp_0193"
    assert list(verify()) == []


def test_expired_lease_returns_case_to_open_and_cannot_decide(claimed_case, worker):
    import time_machine
    from django.utils import timezone

    with time_machine.travel(timezone.now() + timezone.timedelta(hours=1), tick=False):
        assert expire_leases() == 1
        with pytest.raises(CaseError) as error:
            decide_case(
                case_id=claimed_case.pk,
                actor=worker,
                expected_version=claimed_case.version,
                lease_token=claimed_case.lease_token,
                resolution="select_po",
                fields={"po_number": "po_781"},
                note="",
                resolution_id=str(uuid.uuid4()),
                evidence_digest=claimed_case.evidence_digest,
            )
    assert error.value.kind == "conflict"
    claimed_case.refresh_from_db()
    assert claimed_case.state == State.OPEN
    assert claimed_case.assignee is None


def test_release_returns_case(claimed_case, worker):
    case = release_case(case_id=claimed_case.pk, actor=worker, lease_token=claimed_case.lease_token)
    assert case.state == State.OPEN
    again = claim_case(case_id=case.pk, actor=worker)
    assert again.state == State.CLAIMED


def test_priority_rises_as_the_due_time_nears_and_the_change_is_audited(file_invoice_case):
    import time_machine
    from django.utils import timezone

    from apps.cases.services import refresh_priorities

    case = file_invoice_case()
    first_band, first_score = case.priority_band, case.priority_score
    with time_machine.travel(case.due_at - timezone.timedelta(minutes=30), tick=False):
        assert refresh_priorities() == 1
    case.refresh_from_db()
    assert case.priority_score > first_score
    assert case.priority_band < first_band  # "P2" sorts before "P3": more urgent
    assert "due in 30 min" in case.priority_explanation
    event = AuditEvent.objects.get(stream=case.pk, action="case.priority_changed")
    assert event.before["priority"] == first_band
    assert event.after["priority"] == case.priority_band
