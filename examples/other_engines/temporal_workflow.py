"""Temporal: the workflow waits for a signal carrying the desk's decision.

NOT run by the test suite, and the Temporal SDK is NOT a dependency of this repo. To try
it you need a Temporal server (``temporal server start-dev``) and:

    pip install temporalio httpx standardwebhooks    # plus this repo's exception_desk_client
    export DESK_URL=http://127.0.0.1:8000 DESK_API_KEY=edk_... DESK_WEBHOOK_SECRET=whsec_...
    python -m examples.other_engines.temporal_workflow worker     # runs the worker
    python -m examples.other_engines.temporal_workflow start INV-8421

How it maps onto the desk:

- The workflow id is the resume handle. Filing is an activity, and Temporal retries
  activities; the dedupe key (workflow id + run id + step) makes every retry return the
  same case. While the desk is down the activity keeps failing and the workflow does not
  move past it.
- The decision arrives as a signal, sent by ``deliver_decision`` from your webhook
  receiver (or from a pull-feed loop). Temporal does not deduplicate signals, so the
  workflow keeps the first decision and ignores any later one, and the receiver rejects
  replayed webhook-ids with the verifier's seen store.
- Applying the purchase order is an activity with an idempotency key, after the signal.
"""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

try:
    from temporalio import activity, workflow
    from temporalio.client import Client
    from temporalio.common import RetryPolicy
    from temporalio.worker import Worker
except ImportError as error:  # the snippet's own dependency, not the desk's
    raise ImportError("This snippet needs the Temporal SDK: pip install temporalio") from error

with workflow.unsafe.imports_passed_through():
    from exception_desk_client import (
        Desk,
        SqliteSeenStore,
        WebhookRejected,
        WebhookReplayed,
        WebhookVerifier,
    )

TASK_QUEUE = "invoice-matching"


@dataclass
class FileRequest:
    invoice: str
    workflow_id: str
    run_id: str
    candidates: list[str]


@activity.defn
def file_case(request: FileRequest) -> str:
    step = "po-conflict-1"
    packet: dict[str, Any] = {
        "workflow_type": "invoice_match",
        "workflow_version": "17",
        "workflow_instance_id": request.workflow_id,
        "checkpoint_id": f"{request.run_id}:{step}",
        "resume_handle": request.workflow_id,
        "case_ref": f"invoice_{request.invoice.removeprefix('INV-')}",
        "summary": f"Invoice {request.invoice} matches {len(request.candidates)} orders",
        "class": "evidence_conflict",
        "reason_code": "multiple_po_match",
        "evidence": [
            {
                "ref": ref,
                "source": "erp",
                "source_timestamp": "2026-08-31T14:19:59Z",
                "classification": "internal",
                "content": {"po_number": ref},
            }
            for ref in request.candidates
        ],
        "dedupe_key": f"temporal:{request.workflow_id}:{request.run_id}:{step}",
    }
    with Desk(os.environ["DESK_URL"], os.environ["DESK_API_KEY"], retries=2) as desk:
        return desk.file_case(packet).id  # DeskUnavailable fails the attempt; Temporal retries


@activity.defn
def apply_purchase_order(invoice: str, po_ref: str, case_id: str) -> str:
    record = {"invoice": invoice, "purchase_order": po_ref, "idempotency_key": f"{invoice}:match"}
    # ... call the ERP with record["idempotency_key"] ...
    with Desk(os.environ["DESK_URL"], os.environ["DESK_API_KEY"]) as desk:
        desk.report_side_effect(case_id, state="confirmed_applied", provider_record=record)
    return po_ref


@workflow.defn
class InvoiceMatching:
    def __init__(self) -> None:
        self._decision: dict[str, Any] | None = None
        self._case_id = ""

    @workflow.signal
    def decide(self, decision: dict[str, Any]) -> None:
        # First decision wins: a second signal (a redelivery) must not change the outcome.
        if self._decision is None and decision.get("case_id") == self._case_id:
            self._decision = decision

    @workflow.run
    async def run(self, invoice: str) -> str:
        info = workflow.info()
        self._case_id = await workflow.execute_activity(
            file_case,
            FileRequest(invoice, info.workflow_id, info.run_id, ["po_781", "po_799"]),
            start_to_close_timeout=timedelta(seconds=30),
            retry_policy=RetryPolicy(maximum_interval=timedelta(minutes=5)),
        )
        await workflow.wait_condition(lambda: self._decision is not None)
        decision = self._decision or {}
        if decision["resolution"] != "select_po":
            return "closed"
        return await workflow.execute_activity(
            apply_purchase_order,
            args=[invoice, decision["fields"]["po_number"], self._case_id],
            start_to_close_timeout=timedelta(seconds=30),
        )


async def deliver_decision(client: Client, body: bytes, headers: dict[str, str]) -> int:
    """Your webhook endpoint's body: verify, then signal the waiting workflow."""
    verifier = WebhookVerifier(
        os.environ["DESK_WEBHOOK_SECRET"], SqliteSeenStore("seen_webhooks.sqlite")
    )
    try:
        event = verifier.verify(body, headers)
    except WebhookReplayed:
        return 200  # already signalled; the workflow ignores a second decision anyway
    except WebhookRejected:
        return 400
    if event.is_decision:
        handle = client.get_workflow_handle(event.resume_handle)
        await handle.signal(InvoiceMatching.decide, {**event.data, "event_id": event.id})
    return 200


async def main(argv: list[str]) -> None:
    client = await Client.connect(os.environ.get("TEMPORAL_ADDRESS", "localhost:7233"))
    if argv[:1] == ["worker"]:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor() as executor:
            worker = Worker(
                client,
                task_queue=TASK_QUEUE,
                workflows=[InvoiceMatching],
                activities=[file_case, apply_purchase_order],
                activity_executor=executor,
            )
            await worker.run()
    elif argv[:1] == ["start"] and len(argv) == 2:
        handle = await client.start_workflow(
            InvoiceMatching.run, argv[1], id=f"invoice-{argv[1]}", task_queue=TASK_QUEUE
        )
        print(f"started {handle.id}")
    else:
        raise SystemExit("usage: temporal_workflow.py worker | start INVOICE")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
