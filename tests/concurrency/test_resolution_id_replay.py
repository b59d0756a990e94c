"""A resolution id is single use: submitting it again (a double click, a retried request,
racing tabs) returns the first result and never makes a second decision."""

from __future__ import annotations

import uuid

import pytest
from django.contrib.auth.models import User

from apps.audit.models import AuditEvent
from apps.cases.models import Decision, OutboxEvent
from apps.cases.services import decide_case
from apps.cases.services.decisions import DecisionResult
from tests.delivery.helpers import decide

from .threads import run_at_once

pytestmark = [pytest.mark.threaded, pytest.mark.django_db(transaction=True)]


def test_the_same_resolution_id_submitted_twice_returns_the_first_decision(claimed_case, worker):
    resolution_id = str(uuid.uuid4())
    case = claimed_case
    version, lease_token = case.version, case.lease_token

    first = decide(case, worker, resolution_id=resolution_id)
    # The repeat carries what the form had when it was first sent.
    second = decide_case(
        case_id=case.pk,
        actor=worker,
        expected_version=version,
        lease_token=lease_token,
        resolution="select_po",
        fields={"po_number": "po_781"},
        note="PO 781 carries the matching goods receipt.",
        resolution_id=resolution_id,
        evidence_digest=case.evidence_digest,
    )

    assert first.replayed is False
    assert second.replayed is True
    assert second.decision.pk == first.decision.pk
    assert Decision.objects.filter(case=case).count() == 1
    assert OutboxEvent.objects.filter(case=case).count() == 1
    assert AuditEvent.objects.filter(stream=case.pk, action="case.decided").count() == 1


def test_racing_submissions_of_one_resolution_id_all_get_the_same_decision(claimed_case, worker):
    case = claimed_case
    resolution_id = str(uuid.uuid4())

    def submit() -> DecisionResult:
        return decide_case(
            case_id=case.pk,
            actor=User.objects.get(pk=worker.pk),
            expected_version=case.version,
            lease_token=case.lease_token,
            resolution="select_po",
            fields={"po_number": "po_781"},
            note="",
            resolution_id=resolution_id,
            evidence_digest=case.evidence_digest,
        )

    outcomes = run_at_once([submit for _ in range(4)])

    assert all(isinstance(o, DecisionResult) for o in outcomes), outcomes
    decision = Decision.objects.get(case=case)
    assert {o.decision.pk for o in outcomes} == {decision.pk}
    assert sorted(o.replayed for o in outcomes) == [False, True, True, True]
    assert OutboxEvent.objects.filter(case=case).count() == 1
    assert AuditEvent.objects.filter(stream=case.pk, action="case.decided").count() == 1
