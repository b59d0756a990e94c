"""Edges found in review: a lapsed lease re-taken by its holder, choice fields that are not
strings, evidence references outside the case, a replay asked by an outsider, and a manual
delivery retry while the automatic schedule still runs."""

from __future__ import annotations

import uuid

import pytest
import time_machine
from django.utils import timezone

from apps.cases.errors import CaseError
from apps.cases.models import Decision, OutboxEvent, State
from apps.cases.services import claim_case, decide_case, retry_delivery
from apps.cases.services.decisions import _validate_fields
from apps.routing.models import Resolution


def decide(case, actor, **overrides):
    arguments = {
        "case_id": case.pk,
        "actor": actor,
        "expected_version": case.version,
        "lease_token": case.lease_token,
        "resolution": "select_po",
        "fields": {"po_number": "po_781"},
        "note": "",
        "resolution_id": str(uuid.uuid4()),
        "evidence_digest": case.evidence_digest,
    }
    return decide_case(**{**arguments, **overrides})


def test_the_holder_of_a_lapsed_lease_takes_it_up_again_before_the_sweep(claimed_case, worker):
    later = claimed_case.lease_expires_at + timezone.timedelta(minutes=1)
    with time_machine.travel(later, tick=False):
        again = claim_case(case_id=claimed_case.pk, actor=worker)
        assert again.state == State.CLAIMED and again.assignee == worker
        assert again.lease_expires_at > timezone.now()
        decide(again, worker)
    assert Decision.objects.filter(case=claimed_case).exists()


def test_a_choice_field_with_numeric_choices_gives_a_field_error_not_a_crash():
    resolution = Resolution(
        code="pick",
        field_schema=[
            {"name": "tier", "label": "Tier", "type": "choice", "choices": [1, 2], "required": True}
        ],
    )

    with pytest.raises(CaseError) as error:
        _validate_fields(resolution, {"tier": "3"})

    assert error.value.fields == {"fields.tier": ["Tier must be one of 1, 2."]}


def test_a_purchase_order_outside_the_case_evidence_is_refused(claimed_case, worker):
    with pytest.raises(CaseError) as error:
        decide(claimed_case, worker, fields={"po_number": "po_999"})

    assert error.value.kind == "invalid"
    assert "po_781" in error.value.fields["fields.po_number"][0]
    assert not Decision.objects.filter(case=claimed_case).exists()


def test_a_replayed_resolution_id_is_not_answered_to_someone_outside_the_scope(
    claimed_case, worker, outsider
):
    first = decide(claimed_case, worker)

    with pytest.raises(CaseError) as error:
        decide(claimed_case, outsider, resolution_id=first.decision.resolution_id)

    assert error.value.kind == "not_found"


def test_a_manual_retry_is_refused_while_delivery_is_still_on_its_schedule(
    claimed_case, worker, supervisor
):
    decide(claimed_case, worker)
    event = OutboxEvent.objects.get(case=claimed_case)
    assert event.status == "pending"

    with pytest.raises(CaseError) as error:
        retry_delivery(case_id=claimed_case.pk, actor=supervisor)

    assert error.value.kind == "conflict"
    event.refresh_from_db()
    assert (event.status, event.attempts) == ("pending", 0)
