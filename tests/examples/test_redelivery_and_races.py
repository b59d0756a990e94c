"""Redelivery and racing deliveries apply the decision once. LangGraph itself would run
the side effect for each concurrent resume; the receiver's seen store, per-thread lock and
ledger check are what make it once."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from standardwebhooks.webhooks import Webhook

from apps.cases.models import Case, OutboxEvent, State
from apps.workflows.models import WorkflowType
from examples.langgraph_invoice.graph import SAMPLE_INVOICE

pytestmark = [pytest.mark.threaded, pytest.mark.django_db(transaction=True)]

THREAD = "invoice-race"


@pytest.fixture
def decided_event(workflows, receiver, worker, decide_through_pages) -> OutboxEvent:
    """The graph paused and the case decided; the decision event waits in the outbox."""
    paused = workflows.start_invoice(THREAD, SAMPLE_INVOICE)
    case_id = paused["__interrupt__"][0].value["case_id"]
    decide_through_pages(worker, case_id, "select_po", {"po_number": "po_781"})
    return OutboxEvent.objects.get(case_id=case_id, type="case.decided")


def signed_request(event: OutboxEvent, *, at: datetime | None = None) -> tuple[bytes, dict]:
    """The event signed exactly as the desk's relay signs it."""
    at = at or datetime.now(tz=UTC)
    secret = WorkflowType.objects.get(name="invoice_match").signing_secret
    payload = json.dumps(event.body, separators=(",", ":"), sort_keys=True)
    headers = {
        "content-type": "application/json",
        "webhook-id": event.pk,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": Webhook(secret).sign(event.pk, at, payload),
    }
    return payload.encode(), headers


def deliver(url: str, body: bytes, headers: dict) -> httpx.Response:
    return httpx.post(url, content=body, headers=headers, timeout=30)


def test_a_redelivered_webhook_applies_the_decision_once(workflows, receiver, decided_event):
    url = receiver.url_for("invoice_match")
    body, headers = signed_request(decided_event)

    first = deliver(url, body, headers)
    same_again = deliver(url, body, headers)
    # The desk's own retry after a lost 2xx: same id, new timestamp and signature.
    retried = deliver(
        url, *signed_request(decided_event, at=datetime.now(tz=UTC) + timedelta(seconds=5))
    )

    assert [r.status_code for r in (first, same_again, retried)] == [200, 200, 200]
    assert [r.json()["status"] for r in (first, same_again, retried)] == [
        "resumed",
        "duplicate",
        "duplicate",
    ]
    assert len(workflows.ledger.side_effects()) == 1


def test_two_racing_deliveries_of_one_webhook_apply_the_decision_once(
    workflows, receiver, decided_event
):
    url = receiver.url_for("invoice_match")
    body, headers = signed_request(decided_event)
    start = threading.Barrier(2)
    answers: list[httpx.Response] = []
    lock = threading.Lock()

    def post() -> None:
        start.wait()
        response = deliver(url, body, headers)
        with lock:
            answers.append(response)

    racers = [threading.Thread(target=post) for _ in range(2)]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join(timeout=60)

    assert sorted(r.status_code for r in answers) == [200, 200]
    statuses = sorted(r.json()["status"] for r in answers)
    assert statuses.count("resumed") == 1, statuses
    assert len(workflows.ledger.side_effects()) == 1
    assert workflows.ledger.resumed_by(THREAD) == decided_event.pk


def test_a_delivery_after_a_failed_resume_resumes_despite_the_seen_id(
    workflows, receiver, decided_event, monkeypatch
):
    """The first delivery is verified (its id recorded as seen), then the resume fails;
    the desk's retry carries the same id and must still resume, once."""
    url = receiver.url_for("invoice_match")
    graph = workflows.graph_for("invoice_match")
    real_invoke = graph.invoke
    calls = []

    def invoke_failing_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionError("the checkpoint store went away")
        return real_invoke(*args, **kwargs)

    monkeypatch.setattr(graph, "invoke", invoke_failing_once)

    failed = deliver(url, *signed_request(decided_event))
    retried = deliver(url, *signed_request(decided_event))

    assert (failed.status_code, retried.status_code) == (500, 200)
    assert retried.json()["status"] == "resumed"
    assert len(workflows.ledger.side_effects()) == 1


def test_a_forged_or_stale_delivery_is_refused_and_changes_nothing(
    workflows, receiver, decided_event
):
    url = receiver.url_for("invoice_match")
    body, headers = signed_request(decided_event)
    forged = deliver(url, body.replace(b"po_781", b"po_799"), headers)
    stale = deliver(
        url, *signed_request(decided_event, at=datetime.now(tz=UTC) - timedelta(minutes=10))
    )

    assert (forged.status_code, stale.status_code) == (400, 400)
    assert workflows.ledger.side_effects() == []
    assert Case.objects.get(pk=decided_event.case_id).state == State.RESOLUTION_PENDING
    # The real delivery still works afterwards: neither burnt the event's id.
    assert deliver(url, body, headers).json()["status"] == "resumed"
