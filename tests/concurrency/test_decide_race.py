"""Release case 4: reviewers resolving the same version at once — one command accepted,
every other one a conflict that shows the accepted decision."""

from __future__ import annotations

import uuid

import pytest
from django.contrib.auth.models import User

from apps.audit.models import AuditEvent
from apps.audit.services import verify
from apps.cases.errors import CaseError
from apps.cases.models import Decision, OutboxEvent, State
from apps.cases.services import decide_case
from apps.cases.services.decisions import DecisionResult

from .threads import run_at_once

pytestmark = [pytest.mark.threaded, pytest.mark.django_db(transaction=True)]

THREADS = 16


def test_sixteen_submissions_with_one_lease_and_version_accept_exactly_one(claimed_case, worker):
    case = claimed_case

    def submit(resolution_id: str) -> DecisionResult:
        acting = User.objects.get(pk=worker.pk)  # each request loads its own user
        return decide_case(
            case_id=case.pk,
            actor=acting,
            expected_version=case.version,
            lease_token=case.lease_token,
            resolution="select_po",
            fields={"po_number": "po_781"},
            note=f"submitted as {resolution_id}",
            resolution_id=resolution_id,
            evidence_digest=case.evidence_digest,
        )

    resolution_ids = [str(uuid.uuid4()) for _ in range(THREADS)]
    outcomes = run_at_once([lambda rid=rid: submit(rid) for rid in resolution_ids])

    accepted = [o for o in outcomes if isinstance(o, DecisionResult)]
    refused = [o for o in outcomes if isinstance(o, CaseError)]
    unexpected = [o for o in outcomes if not isinstance(o, DecisionResult | CaseError)]
    assert unexpected == []
    assert len(accepted) == 1
    assert accepted[0].replayed is False
    assert len(refused) == THREADS - 1
    assert {error.kind for error in refused} == {"conflict"}

    decision = Decision.objects.get(case=case)
    assert decision.pk == accepted[0].decision.pk
    assert decision.resolution_id == resolution_ids[outcomes.index(accepted[0])]
    # Each loser is shown the case as it now is: decided, with the accepted decision.
    for error in refused:
        assert error.case is not None
        assert error.case.state == State.RESOLUTION_PENDING
        assert error.case.decision.pk == decision.pk
    case.refresh_from_db()
    assert case.state == State.RESOLUTION_PENDING
    assert case.version == accepted[0].decision.case_version + 1
    assert OutboxEvent.objects.filter(case=case).count() == 1
    assert AuditEvent.objects.filter(stream=case.pk, action="case.decided").count() == 1
    assert list(verify([case.pk])) == []
