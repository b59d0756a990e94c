"""Release case 7: a failed resume leaves a visible pending state that can be retried safely.
Nobody is asked to decide again; a supervisor re-sends the same event."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.audit.services import verify
from apps.cases.errors import CaseError
from apps.cases.models import (
    Decision,
    DeliveryAttempt,
    DeliveryStatus,
    OutboxEvent,
    OutboxStatus,
    State,
)
from apps.cases.selectors import recovery_rows
from apps.cases.services import relay_due_events, relay_event, retry_delivery
from apps.cases.services.delivery import unacknowledged_events

from .helpers import claim_and_decide


def recovery_queue(user: User) -> list[str]:
    """The case ids on the recovery page as this user sees it."""
    return [row.case.pk for row in recovery_rows(user)]


def test_gone_endpoint_stops_retrying_and_lists_the_case_for_recovery(
    webhook_receiver, file_invoice_case, worker, supervisor, api_source, time_machine
):
    time_machine.move_to(timezone.now(), tick=False)
    webhook_receiver.answer_with(410)
    case, event = claim_and_decide(file_invoice_case(), worker)

    assert relay_event(event_id=event.pk) == "gone"

    event.refresh_from_db()
    assert event.status == OutboxStatus.GONE
    assert event.last_status_code == 410
    case.refresh_from_db()
    assert case.state == State.RESOLUTION_PENDING
    assert case.delivery_status == DeliveryStatus.FAILED
    assert recovery_queue(supervisor) == [case.pk]
    assert recovery_queue(worker) == []  # recovery is a supervisor's page
    (row,) = recovery_rows(supervisor)
    assert row.decision == case.decision  # shown with the accepted decision: nobody re-decides
    assert row.event.pk == event.pk
    failed = AuditEvent.objects.get(stream=case.pk, action="case.delivery_failed")
    assert failed.after["event_id"] == event.pk
    assert "410" in failed.reason
    # The engine can still learn the decision by pulling.
    assert [e.pk for e in unacknowledged_events(source=api_source[0])] == [event.pk]

    time_machine.move_to(timezone.now() + timedelta(days=2), tick=False)
    assert relay_due_events() == {}
    assert relay_event(event_id=event.pk) == "skipped"
    assert len(webhook_receiver.requests) == 1


def test_after_the_retry_limit_the_decision_waits_visibly_and_a_supervisor_resends_it(
    webhook_receiver,
    file_invoice_case,
    worker,
    supervisor,
    settings,
    time_machine,
    django_capture_on_commit_callbacks,
):
    settings.EXCEPTION_DESK = {**settings.EXCEPTION_DESK, "DELIVERY_MAX_ATTEMPTS": 3}
    time_machine.move_to(timezone.now(), tick=False)
    webhook_receiver.answer_with(500, 502, 503, 200)
    case, event = claim_and_decide(file_invoice_case(), worker)
    decision = Decision.objects.get(case=case)

    outcomes = []
    for _ in range(3):
        outcomes.append(relay_event(event_id=event.pk))
        event.refresh_from_db()
        if event.next_attempt_at:
            time_machine.move_to(event.next_attempt_at, tick=False)
    assert outcomes == ["retry", "retry", "failed"]

    event.refresh_from_db()
    assert event.status == OutboxStatus.FAILED
    case.refresh_from_db()
    assert case.state == State.RESOLUTION_PENDING
    assert case.delivery_status == DeliveryStatus.FAILED
    assert recovery_queue(supervisor) == [case.pk]
    # Past the limit the sweep leaves it alone: retrying is a supervisor's decision now.
    time_machine.move_to(timezone.now() + timedelta(days=1), tick=False)
    assert relay_due_events() == {}
    assert len(webhook_receiver.requests) == 3

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        retried = retry_delivery(case_id=case.pk, actor=supervisor)
    assert retried.pk == event.pk
    assert len(callbacks) == 1  # the relay is handed to Celery after commit
    case.refresh_from_db()
    assert case.delivery_status == DeliveryStatus.PENDING
    assert recovery_queue(supervisor) == []

    assert relay_due_events() == {"delivered": 1}

    case.refresh_from_db()
    assert case.state == State.RESOLVED
    assert case.delivery_status == DeliveryStatus.DELIVERED
    received = webhook_receiver.requests
    assert [r.answered for r in received] == [500, 502, 503, 200]
    assert {r.webhook_id for r in received} == {event.pk}
    assert all(r.signature_error is None for r in received)
    assert len({r.body for r in received}) == 1
    # Never re-decided: the one decision stands, and the attempt log keeps every try in order.
    assert list(Decision.objects.filter(case=case)) == [decision]
    assert OutboxEvent.objects.filter(case=case).count() == 1
    numbers = list(
        DeliveryAttempt.objects.filter(event=event).order_by("pk").values_list("number", flat=True)
    )
    assert numbers == [1, 2, 3, 4]
    actions = list(
        AuditEvent.objects.filter(stream=case.pk)
        .order_by("sequence")
        .values_list("action", flat=True)
    )
    assert actions[-3:] == ["case.delivery_failed", "case.delivery_retried", "case.resumed"]
    retried_event = AuditEvent.objects.get(stream=case.pk, action="case.delivery_retried")
    assert retried_event.actor_label == supervisor.get_username()
    assert list(verify()) == []


def test_a_worker_without_supervise_permission_cannot_retry_a_failed_delivery(
    webhook_receiver, file_invoice_case, worker, viewer, outsider
):
    webhook_receiver.answer_with(410)
    case, event = claim_and_decide(file_invoice_case(), worker)
    assert relay_event(event_id=event.pk) == "gone"

    with pytest.raises(CaseError) as forbidden:
        retry_delivery(case_id=case.pk, actor=worker)
    assert forbidden.value.kind == "forbidden"
    with pytest.raises(CaseError) as read_only:
        retry_delivery(case_id=case.pk, actor=viewer)
    assert read_only.value.kind == "forbidden"
    with pytest.raises(CaseError) as out_of_scope:
        retry_delivery(case_id=case.pk, actor=outsider)
    assert out_of_scope.value.kind == "not_found"

    event.refresh_from_db()
    assert event.status == OutboxStatus.GONE
    case.refresh_from_db()
    assert case.delivery_status == DeliveryStatus.FAILED
    assert not AuditEvent.objects.filter(stream=case.pk, action="case.delivery_retried").exists()


def test_retrying_an_already_delivered_decision_is_refused(
    webhook_receiver, file_invoice_case, worker, supervisor
):
    case, event = claim_and_decide(file_invoice_case(), worker)
    assert relay_event(event_id=event.pk) == "delivered"

    with pytest.raises(CaseError) as conflict:
        retry_delivery(case_id=case.pk, actor=supervisor)

    assert conflict.value.kind == "conflict"
    assert len(webhook_receiver.requests) == 1
