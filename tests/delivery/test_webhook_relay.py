"""Release case 6: a valid resolution resumes the workflow from its checkpoint exactly once,
through a signed webhook to a real HTTP endpoint, retried on a schedule kept in the database."""

from __future__ import annotations

import json
import socket
from datetime import timedelta

import pytest
from django.utils import timezone
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from apps.audit.models import AuditEvent
from apps.audit.services import verify
from apps.cases.models import (
    DeliveryAttempt,
    DeliveryStatus,
    OutboxEvent,
    OutboxStatus,
    State,
)
from apps.cases.services import claim_case, relay_due_events, relay_event
from apps.workflows.models import WorkflowType

from .helpers import claim_and_decide, decide

DECIDED_DATA_KEYS = {
    "case_id",
    "case_ref",
    "workflow_type",
    "workflow_version",
    "workflow_instance_id",
    "checkpoint_id",
    "resume_handle",
    "resolution",
    "fields",
    "note",
    "actor",
    "decision_policy_version",
    "evidence_version",
    "evidence_digest",
    "decided_at",
}


def test_failing_then_healthy_endpoint_resumes_the_workflow_exactly_once_with_one_event_id(
    webhook_receiver, file_invoice_case, worker, time_machine
):
    time_machine.move_to(timezone.now(), tick=False)
    webhook_receiver.answer_with(500, 200)
    case, event = claim_and_decide(file_invoice_case(), worker)

    assert relay_event(event_id=event.pk) == "retry"
    event.refresh_from_db()
    assert event.status == OutboxStatus.PENDING
    assert event.next_attempt_at > timezone.now()

    # Not due yet: the sweep leaves it alone and the endpoint hears nothing more.
    assert relay_due_events() == {}
    assert len(webhook_receiver.requests) == 1

    time_machine.move_to(event.next_attempt_at + timedelta(seconds=1), tick=False)
    assert relay_due_events() == {"delivered": 1}
    # Once delivered, neither the sweep nor a stray task sends it again.
    time_machine.move_to(timezone.now() + timedelta(hours=2), tick=False)
    assert relay_due_events() == {}
    assert relay_event(event_id=event.pk) == "skipped"

    received = webhook_receiver.requests
    assert [r.answered for r in received] == [500, 200]
    assert sum(1 for r in received if 200 <= r.answered < 300) == 1
    assert {r.webhook_id for r in received} == {event.pk}
    assert all(r.signature_error is None for r in received), received
    assert {json.loads(r.body)["id"] for r in received} == {event.pk}
    assert received[0].body == received[1].body  # the same event, not a new one per attempt

    case.refresh_from_db()
    assert case.state == State.RESOLVED
    assert case.delivery_status == DeliveryStatus.DELIVERED
    event.refresh_from_db()
    assert event.status == OutboxStatus.DELIVERED
    assert event.delivered_via == "webhook"
    attempts = list(DeliveryAttempt.objects.filter(event=event).order_by("number"))
    assert [(a.number, a.status_code) for a in attempts] == [(1, 500), (2, 200)]
    assert "HTTP 500" in attempts[0].error
    assert attempts[1].error == ""
    resumed = AuditEvent.objects.filter(stream=case.pk, action="case.resumed")
    assert resumed.count() == 1
    assert resumed.get().after["event_id"] == event.pk
    assert list(verify()) == []


def test_signature_verifies_only_with_the_workflow_types_secret(
    webhook_receiver, file_invoice_case, worker
):
    _, event = claim_and_decide(file_invoice_case(), worker)
    assert relay_event(event_id=event.pk) == "delivered"
    (request,) = webhook_receiver.requests
    secret = WorkflowType.objects.get(name="invoice_match").signing_secret

    assert Webhook(secret).verify(request.body, request.headers)["id"] == event.pk
    other_secret = WorkflowType.objects.get(name="refund_approval").signing_secret
    with pytest.raises(WebhookVerificationError):
        Webhook(other_secret).verify(request.body, request.headers)
    tampered = request.body.replace(b"select_po", b"close_invalid")
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(tampered, request.headers)


def test_decided_event_body_has_exactly_the_documented_shape(
    webhook_receiver, file_invoice_case, worker
):
    case = file_invoice_case(resume_handle="sfn-task-token-0193")
    case, event = claim_and_decide(case, worker)
    assert relay_event(event_id=event.pk) == "delivered"
    (request,) = webhook_receiver.requests
    body = json.loads(request.body)
    decision = case.decision

    assert set(body) == {"id", "type", "created_at", "data"}
    assert body["id"] == event.pk
    assert body["type"] == "case.decided"
    assert body["created_at"] == event.created_at.isoformat()
    assert set(body["data"]) == DECIDED_DATA_KEYS
    assert body["data"] == {
        "case_id": case.pk,
        "case_ref": case.case_ref,
        "workflow_type": "invoice_match",
        "workflow_version": "17",
        "workflow_instance_id": case.workflow_instance_id,
        "checkpoint_id": "cp_0193",
        "resume_handle": "sfn-task-token-0193",
        "resolution": "select_po",
        "fields": {"po_number": "po_781"},
        "note": "PO 781 carries the matching goods receipt.",
        "actor": {"id": str(worker.pk), "name": worker.get_username()},
        "decision_policy_version": decision.decision_policy_version,
        "evidence_version": case.evidence_version,
        "evidence_digest": case.evidence_digest,
        "decided_at": decision.decided_at.isoformat(),
    }
    assert request.headers["content-type"] == "application/json"
    assert request.path == "/hooks/exception-desk"


def test_relay_whose_enqueue_was_lost_is_delivered_by_the_sweep(
    webhook_receiver, file_invoice_case, worker, django_capture_on_commit_callbacks
):
    case = file_invoice_case()
    claim_case(case_id=case.pk, actor=worker)
    # The decision commits but the hand-off to Celery never runs (worker died, broker hiccup).
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        decide(case, worker)
    assert len(callbacks) == 1
    assert webhook_receiver.requests == []
    event = OutboxEvent.objects.get(case=case)
    assert event.next_attempt_at <= timezone.now()

    assert relay_due_events() == {"delivered": 1}

    (request,) = webhook_receiver.requests
    assert request.webhook_id == event.pk
    assert request.signature_error is None
    case.refresh_from_db()
    assert case.state == State.RESOLVED
    assert case.delivery_status == DeliveryStatus.DELIVERED


def test_retries_back_off_exponentially_with_jitter_up_to_the_cap(
    webhook_receiver, file_invoice_case, worker, settings, time_machine
):
    settings.EXCEPTION_DESK = {
        **settings.EXCEPTION_DESK,
        "DELIVERY_MAX_ATTEMPTS": 10,
        "DELIVERY_BASE_DELAY_SECONDS": 10.0,
        "DELIVERY_MAX_DELAY_SECONDS": 80.0,
    }
    time_machine.move_to(timezone.now(), tick=False)
    webhook_receiver.answer_with(500)
    _, event = claim_and_decide(file_invoice_case(), worker)

    delays = []
    for _ in range(5):
        assert relay_due_events() == {"retry": 1}
        event.refresh_from_db()
        last_attempt = DeliveryAttempt.objects.filter(event=event).latest("number")
        delays.append((event.next_attempt_at - last_attempt.attempted_at).total_seconds())
        time_machine.move_to(event.next_attempt_at, tick=False)

    # Attempt n waits a random time in [d/2, d], d = min(cap, base * 2^(n-1)): ceilings
    # 10, 20, 40, 80 and then 80 again (the cap). Below the cap the ranges do not overlap,
    # so the waits grow attempt after attempt.
    for number, delay in enumerate(delays, start=1):
        ceiling = min(80.0, 10.0 * 2 ** (number - 1))
        assert ceiling / 2 <= delay <= ceiling, (number, delays)
    assert delays[:4] == sorted(delays[:4])
    assert len(webhook_receiver.requests) == 5
    assert {r.webhook_id for r in webhook_receiver.requests} == {event.pk}


def test_retry_delays_are_jittered_so_failed_events_do_not_retry_in_lock_step(
    webhook_receiver, file_invoice_case, worker, time_machine
):
    time_machine.move_to(timezone.now(), tick=False)
    webhook_receiver.answer_with(503)
    events = [claim_and_decide(file_invoice_case(), worker)[1] for _ in range(6)]

    assert relay_due_events() == {"retry": 6}

    retry_times = {OutboxEvent.objects.get(pk=e.pk).next_attempt_at for e in events}
    assert len(retry_times) > 1


def test_an_unreachable_endpoint_is_recorded_and_retried_not_lost(
    file_invoice_case, worker, reference_data
):
    # A port nothing listens on: bind one, then close it.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    WorkflowType.objects.filter(name="invoice_match").update(
        callback_url=f"http://127.0.0.1:{closed_port}/hooks"
    )
    case, event = claim_and_decide(file_invoice_case(), worker)

    assert relay_event(event_id=event.pk) == "retry"

    event.refresh_from_db()
    assert event.status == OutboxStatus.PENDING
    assert event.next_attempt_at > timezone.now()
    (attempt,) = DeliveryAttempt.objects.filter(event=event)
    assert attempt.status_code is None
    assert "ConnectError" in attempt.error
    case.refresh_from_db()
    assert case.state == State.RESOLUTION_PENDING
    assert case.delivery_status == DeliveryStatus.PENDING
