"""Sweeps run from Celery beat; two beats (or a slow run and the next one) may overlap.
Each sweep must be harmless when it does: every lapsed lease returned once, every due
event sent once."""

from __future__ import annotations

import json
from collections import Counter
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.audit.services import verify
from apps.cases.models import Case, DeliveryStatus, OutboxEvent, OutboxStatus, State
from apps.cases.services import claim_case, expire_leases, relay_due_events
from apps.cases.services.leases import lease_duration
from apps.routing.models import WorkerProfile
from tests.delivery.helpers import claim_and_decide

from .threads import run_at_once

pytestmark = [pytest.mark.threaded, pytest.mark.django_db(transaction=True)]

CASES = 40
EVENTS = 12


def test_two_lease_sweeps_at_once_expire_each_lapsed_claim_exactly_once(file_invoice_case, worker):
    # One worker holding many claims at once: give them the capacity for it.
    WorkerProfile.objects.filter(user=worker).update(capacity=CASES)
    cases = [claim_case(case_id=file_invoice_case().pk, actor=worker) for _ in range(CASES)]
    after_expiry = timezone.now() + lease_duration() + timedelta(seconds=1)

    outcomes = run_at_once([lambda: expire_leases(now=after_expiry) for _ in range(2)])

    assert all(isinstance(count, int) for count in outcomes), outcomes
    assert sum(outcomes) == CASES
    ids = [case.pk for case in cases]
    assert Case.objects.filter(pk__in=ids, state=State.OPEN, assignee=None).count() == CASES
    expired_events = Counter(
        AuditEvent.objects.filter(stream__in=ids, action="case.lease_expired").values_list(
            "stream", flat=True
        )
    )
    assert expired_events == Counter(ids)
    assert list(verify(ids)) == []
    # Each case's version moved once: claimed (2) then expired (3).
    assert set(Case.objects.filter(pk__in=ids).values_list("version", flat=True)) == {3}


def test_two_relay_sweeps_at_once_send_each_due_event_exactly_once(
    webhook_receiver, file_invoice_case, worker
):
    events = [claim_and_decide(file_invoice_case(), worker)[1] for _ in range(EVENTS)]
    event_ids = {event.pk for event in events}

    outcomes = run_at_once([relay_due_events for _ in range(2)])

    assert all(isinstance(counts, dict) for counts in outcomes), outcomes
    assert sum(counts.get("delivered", 0) for counts in outcomes) == EVENTS
    assert not any(counts.get("retry") or counts.get("failed") for counts in outcomes)
    sent = Counter(request.webhook_id for request in webhook_receiver.requests)
    assert sent == Counter(event_ids)  # one POST per event, none twice
    assert {json.loads(r.body)["id"] for r in webhook_receiver.requests} == event_ids
    assert all(r.signature_error is None for r in webhook_receiver.requests)
    assert (
        OutboxEvent.objects.filter(pk__in=event_ids, status=OutboxStatus.DELIVERED).count()
        == EVENTS
    )
    case_ids = [event.case_id for event in events]
    assert (
        Case.objects.filter(
            pk__in=case_ids, state=State.RESOLVED, delivery_status=DeliveryStatus.DELIVERED
        ).count()
        == EVENTS
    )
    resumed = Counter(
        AuditEvent.objects.filter(stream__in=case_ids, action="case.resumed").values_list(
            "stream", flat=True
        )
    )
    assert resumed == Counter(case_ids)
