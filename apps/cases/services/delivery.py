"""Resume exactly once: relay outbox events as signed webhooks, or hand them to the pull
feed, with one stable event id; retries on a schedule kept in the database."""

from __future__ import annotations

import json
import logging
import random
import time
from datetime import datetime, timedelta
from typing import Any

import httpx
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _
from standardwebhooks.webhooks import Webhook

from apps.audit.services import Actor
from apps.workflows.models import ApiSource

from ..access import access_case, require_supervise
from ..errors import CaseError
from ..models import (
    Case,
    Decision,
    DeliveryAttempt,
    DeliveryStatus,
    OutboxEvent,
    OutboxStatus,
    State,
)
from .transitions import commit_change, move, snapshot

logger = logging.getLogger(__name__)

# While one relay is sending an event, the event's next_attempt_at is pushed this far ahead
# so the sweep does not send it a second time concurrently (a soft in-flight lease).
IN_FLIGHT_SECONDS = 120


def event_body(
    event: OutboxEvent,
    case: Case,
    *,
    decision: Decision | None = None,
    request: dict[str, Any] | None = None,
    actor: Any = None,
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "case_id": case.pk,
        "case_ref": case.case_ref,
        "workflow_type": case.workflow_type.name,
        "workflow_version": case.workflow_version,
        "workflow_instance_id": case.workflow_instance_id,
        "checkpoint_id": case.checkpoint_id,
        "resume_handle": case.resume_handle or None,
        "evidence_version": case.evidence_version,
        "evidence_digest": case.evidence_digest,
    }
    if decision is not None:
        data.update(
            resolution=decision.resolution,
            fields=decision.fields,
            note=decision.note,
            actor={"id": str(decision.actor.pk), "name": decision.actor.get_username()},
            decision_policy_version=decision.decision_policy_version,
            evidence_version=decision.evidence_version,
            evidence_digest=decision.evidence_digest,
            decided_at=decision.decided_at.isoformat(),
        )
    if request is not None:
        data.update(
            request=request,
            actor={"id": str(actor.pk), "name": actor.get_username()} if actor else None,
        )
    return {
        "id": event.pk,
        "type": event.type,
        "created_at": event.created_at.isoformat(),
        "data": data,
    }


def enqueue_after_commit(event_id: str) -> None:
    """Hand the event to a Celery worker once the transaction that wrote it commits.
    If the enqueue is lost, the beat sweep (relay_due_events) still finds the row."""

    def _send() -> None:
        from ..tasks import relay_event_task

        try:
            relay_event_task.delay(event_id)
        except Exception:  # broker down: the sweep delivers it later
            logger.warning("could not enqueue relay of %s; the sweep will pick it up", event_id)

    transaction.on_commit(_send)


def _backoff(attempts: int) -> timedelta:
    base = settings.EXCEPTION_DESK["DELIVERY_BASE_DELAY_SECONDS"]
    cap = settings.EXCEPTION_DESK["DELIVERY_MAX_DELAY_SECONDS"]
    delay = min(cap, base * (2 ** max(0, attempts - 1)))
    # Full jitter keeps many failed events from retrying in lock-step.
    return timedelta(seconds=random.uniform(delay / 2, delay))  # noqa: S311


def _take_for_sending(event_id: str, now: datetime) -> bool:
    """Claim the right to send this event now, with one conditional UPDATE.

    Every condition is on the outbox row itself, on purpose. A condition through a join (the
    workflow type's callback URL) makes Django write ``WHERE id IN (SELECT ...)``, and
    PostgreSQL does not re-check such a subquery against a row a concurrent relay has just
    updated: both relays would take the event and the workflow would be called twice.
    """
    # The in-flight hold counts from the later of the caller's `now` (a sweep's start, which
    # may be minutes old by now) and the clock, so it never starts out already expired.
    hold_until = max(now, timezone.now()) + timedelta(seconds=IN_FLIGHT_SECONDS)
    taken = OutboxEvent.objects.filter(
        pk=event_id,
        status=OutboxStatus.PENDING,
        next_attempt_at__lte=now,
    ).update(next_attempt_at=hold_until)
    return taken == 1


def relay_event(*, event_id: str, now: datetime | None = None) -> str:
    """Send one due event once. Returns what happened: delivered, retry, failed, gone,
    skipped (not due, already delivered, pull-only, or another relay holds it)."""
    now = now or timezone.now()
    event = OutboxEvent.objects.select_related("case__workflow_type").filter(pk=event_id).first()
    if event is None or not event.case.workflow_type.callback_url:
        return "skipped"  # gone, or a pull-feed-only workflow: the engine fetches it
    if not _take_for_sending(event_id, now):
        return "skipped"
    workflow_type = event.case.workflow_type
    payload = json.dumps(event.body, separators=(",", ":"), sort_keys=True)
    sent_at = timezone.now()
    signature = Webhook(workflow_type.signing_secret).sign(event.pk, sent_at, payload)
    headers = {
        "content-type": "application/json",
        "webhook-id": event.pk,
        "webhook-timestamp": str(int(sent_at.timestamp())),
        "webhook-signature": signature,
        "user-agent": "ExceptionDesk-Relay/1",
    }
    status_code: int | None = None
    error = ""
    started = time.monotonic()
    try:
        response = httpx.post(
            workflow_type.callback_url,
            content=payload.encode("utf-8"),
            headers=headers,
            timeout=settings.EXCEPTION_DESK["DELIVERY_TIMEOUT_SECONDS"],
            follow_redirects=False,
        )
        status_code = response.status_code
        if not 200 <= status_code < 300:
            error = f"HTTP {status_code}: {response.text[:200]}"
    except (httpx.HTTPError, httpx.InvalidURL) as exc:  # recorded and retried, never lost
        error = f"{type(exc).__name__}: {exc}"[:500]
    duration_ms = int((time.monotonic() - started) * 1000)
    return _record_attempt(event_id, status_code, error, duration_ms)


def _record_attempt(event_id: str, status_code: int | None, error: str, duration_ms: int) -> str:
    now = timezone.now()
    with transaction.atomic(durable=True):
        case_id = OutboxEvent.objects.values_list("case_id", flat=True).get(pk=event_id)
        # Lock order: case, then its event (the same order decide_case writes them in).
        case = (
            Case.objects.select_for_update(of=("self",))
            .select_related("queue", "assignee")
            .get(pk=case_id)
        )
        event = OutboxEvent.objects.select_for_update().get(pk=event_id)
        if event.status != OutboxStatus.PENDING:
            return "skipped"  # acked through the feed meanwhile
        # `attempts` is the budget used since the last (supervisor) retry; the log's numbers
        # keep counting across retries so the history reads 1, 2, 3, ... without repeats.
        event.attempts += 1
        DeliveryAttempt.objects.create(
            event=event,
            number=DeliveryAttempt.objects.filter(event=event).count() + 1,
            attempted_at=now,
            status_code=status_code,
            error=error,
            duration_ms=duration_ms,
        )
        event.last_status_code = status_code
        event.last_error = error
        if status_code is not None and 200 <= status_code < 300:
            _mark_delivered(case, event, via="webhook", actor=Actor.system("relay"), now=now)
            return "delivered"
        max_attempts = settings.EXCEPTION_DESK["DELIVERY_MAX_ATTEMPTS"]
        if status_code == 410:
            event.status, outcome = OutboxStatus.GONE, "gone"
        elif event.attempts >= max_attempts:
            event.status, outcome = OutboxStatus.FAILED, "failed"
        else:
            event.next_attempt_at = now + _backoff(event.attempts)
            outcome = "retry"
        event.save()
        if outcome in {"gone", "failed"} and event.type == "case.decided":
            # Decision completed, workflow recovery pending: visible, never re-decided.
            before = snapshot(case)
            case.delivery_status = DeliveryStatus.FAILED
            commit_change(
                case,
                actor=Actor.system("relay"),
                action="case.delivery_failed",
                before=before,
                reason=error,
                bump_version=False,
                extra={"event_id": event.pk, "attempts": event.attempts},
            )
        return outcome


def _mark_delivered(
    case: Case, event: OutboxEvent, *, via: str, actor: Actor, now: datetime
) -> None:
    event.status = OutboxStatus.DELIVERED
    event.delivered_at = now
    event.delivered_via = via
    event.next_attempt_at = None
    event.save()
    if event.type == "case.decided" and case.state == State.RESOLUTION_PENDING:
        before = snapshot(case)
        move(case, State.RESOLVED)
        case.delivery_status = DeliveryStatus.DELIVERED
        commit_change(
            case,
            actor=actor,
            action="case.resumed",
            before=before,
            extra={"event_id": event.pk, "via": via},
            bump_version=False,
        )


def relay_due_events(*, now: datetime | None = None, limit: int = 200) -> dict[str, int]:
    """The sweep: every pending webhook event whose next attempt is due, oldest first."""
    now = now or timezone.now()
    due = list(
        OutboxEvent.objects.filter(
            status=OutboxStatus.PENDING,
            next_attempt_at__lte=now,
            case__workflow_type__callback_url__gt="",
        )
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)[:limit]
    )
    counts: dict[str, int] = {}
    for event_id in due:
        outcome = relay_event(event_id=event_id, now=now)
        counts[outcome] = counts.get(outcome, 0) + 1
    return counts


def unacknowledged_events(*, source: ApiSource, limit: int = 100) -> list[OutboxEvent]:
    """The pull feed: the source's events not yet delivered or acknowledged, oldest first.
    Webhook events that failed are listed too, so an engine can recover by pulling."""
    return list(
        OutboxEvent.objects.filter(case__source=source)
        .filter(
            Q(status=OutboxStatus.PENDING)
            | Q(status=OutboxStatus.FAILED)
            | Q(status=OutboxStatus.GONE)
        )
        .order_by("created_at", "id")[:limit]
    )


def ack_event(*, source: ApiSource, event_id: str) -> OutboxEvent:
    with transaction.atomic(durable=True):
        case_id = (
            OutboxEvent.objects.filter(pk=event_id, case__source=source)
            .values_list("case_id", flat=True)
            .first()
        )
        if case_id is None:
            raise CaseError("not_found", _("No such event."))
        case = (
            Case.objects.select_for_update(of=("self",))
            .select_related("queue", "assignee")
            .get(pk=case_id)
        )
        event = OutboxEvent.objects.select_for_update().get(pk=event_id)
        if event.status != OutboxStatus.DELIVERED:
            _mark_delivered(case, event, via="ack", actor=Actor.source(source), now=timezone.now())
        return event


def retry_delivery(*, case_id: str, actor: Any) -> OutboxEvent:
    """A supervisor retries the same event (same id, same body) after delivery failed."""
    with transaction.atomic(durable=True):
        case = access_case(actor, case_id, for_update=True)
        require_supervise(actor, case)
        event = (
            OutboxEvent.objects.select_for_update().filter(case=case, type="case.decided").first()
        )
        if event is None or case.state != State.RESOLUTION_PENDING:
            raise CaseError("conflict", _("There is no pending decision to deliver."), case=case)
        if event.status == OutboxStatus.DELIVERED:
            raise CaseError("conflict", _("The decision was already delivered."), case=case)
        if event.status == OutboxStatus.PENDING:
            # Still on its automatic schedule (perhaps being sent right now): a manual retry
            # would send it twice at once and restart its budget for ever.
            raise CaseError(
                "conflict",
                _("Delivery is still being retried automatically; retry after it has failed."),
                case=case,
            )
        now = timezone.now()
        event.status = OutboxStatus.PENDING
        event.next_attempt_at = now
        event.attempts = 0  # a fresh budget for this recovery attempt; the log keeps them all
        event.save()
        before = snapshot(case)
        case.delivery_status = DeliveryStatus.PENDING
        commit_change(
            case,
            actor=Actor.user(actor),
            action="case.delivery_retried",
            before=before,
            extra={"event_id": event.pk},
            bump_version=False,
        )
        enqueue_after_commit(event.pk)
        return event
