"""A plain Celery workflow that hands a conflict to the desk and continues with the decision.

NOT run by the test suite. Celery and Redis are what this snippet needs (the desk itself
uses Celery too, but this is your workflow's Celery app, not the desk's):

    pip install "celery[redis]" httpx standardwebhooks   # plus this repo's exception_desk_client
    export DESK_URL=http://127.0.0.1:8000 DESK_API_KEY=edk_... BROKER_URL=redis://127.0.0.1:6379/3
    celery -A examples.other_engines.celery_workflow worker --beat --loglevel INFO
    python -c "from examples.other_engines.celery_workflow import match_invoice; \\
               match_invoice.delay('INV-8421')"

There is no checkpointer here, so the workflow keeps its own: a row per invoice in its
database (a dict stands in below). The shape is the same as with LangGraph:

  1. ``match_invoice`` stops at the conflict, records "waiting on case X at step S", files
     the case (dedupe key = invoice + step, so a Celery retry files nothing new), and ends.
     A desk outage raises DeskUnavailable; the task retries later with the same packet.
  2. The decision comes back by the pull feed (``pull_decisions`` on beat, below) or by a
     webhook (``receive_webhook`` in any web framework). Either way ``apply_decision``
     runs, and only it applies the side effect, once per invoice.
"""

from __future__ import annotations

import os
import threading
from typing import Any

try:
    from celery import Celery
except ImportError as error:  # the snippet's own dependency, not the desk's
    raise ImportError("This snippet needs Celery: pip install 'celery[redis]'") from error

from exception_desk_client import (
    Desk,
    DeskUnavailable,
    SqliteSeenStore,
    WebhookRejected,
    WebhookReplayed,
    WebhookVerifier,
)

app = Celery("invoice_workflow", broker=os.environ.get("BROKER_URL", "redis://127.0.0.1:6379/3"))
app.conf.beat_schedule = {
    "pull-desk-decisions": {"task": "invoice_workflow.pull_decisions", "schedule": 10.0}
}

# The workflow's own state, keyed by invoice. Use your database: the row must be updated
# with a compare-and-set ("waiting" -> "applied") so two workers cannot both apply.
WORKFLOW_STATE: dict[str, dict[str, Any]] = {}
_STATE_LOCK = threading.Lock()


def desk() -> Desk:
    return Desk(os.environ["DESK_URL"], os.environ["DESK_API_KEY"], retries=3)


def conflict_packet(invoice: str, candidates: list[str]) -> dict[str, Any]:
    step = "po-conflict-1"  # the step's identity: the same on every retry of this task
    return {
        "workflow_type": "invoice_match",
        "workflow_version": "17",
        "workflow_instance_id": invoice,
        "checkpoint_id": step,
        "resume_handle": invoice,
        "case_ref": f"invoice_{invoice.removeprefix('INV-')}",
        "summary": f"Invoice {invoice} matches {len(candidates)} open purchase orders",
        "class": "evidence_conflict",
        "reason_code": "multiple_po_match",
        "evidence": [
            {
                "ref": ref,
                "source": "erp",
                "source_timestamp": "2026-08-31T14:19:59Z",
                "classification": "internal",
                "content": {"po_number": ref.upper().replace("_", "-")},
            }
            for ref in candidates
        ],
        "dedupe_key": f"celery:{invoice}:{step}",
    }


@app.task(name="invoice_workflow.match_invoice", bind=True, max_retries=None)
def match_invoice(self: Any, invoice: str) -> str:
    candidates = ["po_781", "po_799"]  # your lookup
    if len(candidates) == 1:
        return apply_purchase_order(invoice, candidates[0], case_id="")
    with desk() as client:
        try:
            case = client.file_case(conflict_packet(invoice, candidates))
        except DeskUnavailable as outage:
            # Nothing advanced: retry later, the same packet files the same case.
            raise self.retry(exc=outage, countdown=60) from outage
    with _STATE_LOCK:
        WORKFLOW_STATE.setdefault(invoice, {"status": "waiting", "case_id": case.id})
    return f"waiting on {case.id}"


@app.task(name="invoice_workflow.apply_decision")
def apply_decision(event: dict[str, Any]) -> str:
    data = event["data"]
    invoice = data["resume_handle"]
    with _STATE_LOCK:  # your database's compare-and-set
        state = WORKFLOW_STATE.get(invoice)
        if state is None or state["status"] != "waiting" or state["case_id"] != data["case_id"]:
            return "not waiting"  # a redelivery, or a decision for another pause
        state["status"] = "applying"
    if data["resolution"] == "select_po":
        return apply_purchase_order(invoice, data["fields"]["po_number"], case_id=data["case_id"])
    with _STATE_LOCK:
        WORKFLOW_STATE[invoice]["status"] = "closed"
    return "closed"


def apply_purchase_order(invoice: str, po_ref: str, *, case_id: str) -> str:
    # The business effect, with an idempotency key the destination enforces.
    record = {"invoice": invoice, "purchase_order": po_ref, "idempotency_key": f"{invoice}:match"}
    with _STATE_LOCK:
        WORKFLOW_STATE[invoice] = {"status": "applied", "case_id": case_id, **record}
    if case_id:
        with desk() as client:
            client.report_side_effect(case_id, state="confirmed_applied", provider_record=record)
    return "applied"


@app.task(name="invoice_workflow.pull_decisions")
def pull_decisions() -> int:
    """The pull feed on beat: act, then acknowledge (a crash in between redelivers)."""
    handled = 0
    with desk() as client:
        for event in client.decisions():
            if event.is_decision:
                apply_decision(event.raw)  # inline: ack only after it is applied
            client.ack(event)
            handled += 1
    return handled


_VERIFIER: WebhookVerifier | None = None


def receive_webhook(body: bytes, headers: dict[str, str]) -> int:
    """Call from your web framework's view; return its answer as the HTTP status."""
    global _VERIFIER
    if _VERIFIER is None:
        _VERIFIER = WebhookVerifier(
            os.environ["DESK_WEBHOOK_SECRET"], SqliteSeenStore("seen_webhooks.sqlite")
        )
    try:
        event = _VERIFIER.verify(body, headers)
    except WebhookReplayed:
        return 200  # apply_decision's compare-and-set makes a second run harmless anyway
    except WebhookRejected:
        return 400
    if event.is_decision:
        apply_decision.delay(event.raw)  # the broker holds it durably; answer at once
    return 202
