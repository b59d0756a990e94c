"""The whole loop with the real library: the LangGraph invoice graph pauses at the
purchase-order conflict and files a case; a worker decides "select_po" through the pages;
the desk's signed webhook reaches the example's receiver, which resumes the thread from its
SQLite checkpoint; the graph applies the chosen purchase order exactly once."""

from __future__ import annotations

import pytest

from apps.cases.models import Case, EvidenceItem, OutboxEvent, State
from apps.cases.services import relay_due_events
from examples.langgraph_invoice.graph import SAMPLE_INVOICE, thread_config

pytestmark = [pytest.mark.threaded, pytest.mark.django_db(transaction=True)]

THREAD = "invoice-8421"


def test_the_graph_pauses_files_one_case_and_resumes_once_from_its_checkpoint(
    workflows, receiver, worker, decide_through_pages
):
    paused = workflows.start_invoice(THREAD, SAMPLE_INVOICE)

    # Paused at the conflict, with an open case in accounts_payable and no effect yet.
    (pause,) = paused["__interrupt__"]
    case = Case.objects.get(pk=pause.value["case_id"])
    graph = workflows.graph_for("invoice_match")
    snapshot = graph.get_state(thread_config(THREAD))
    assert snapshot.next == ("await_decision",)
    assert (case.state, case.queue.name) == (State.OPEN, "accounts_payable")
    assert case.workflow_instance_id == THREAD and case.resume_handle == THREAD
    assert case.checkpoint_id == snapshot.config["configurable"]["checkpoint_id"]
    assert sorted(EvidenceItem.objects.filter(case=case).values_list("ref", flat=True)) == [
        "po_781",
        "po_799",
    ]
    assert workflows.ledger.side_effects() == []

    decide_through_pages(worker, case.pk, "select_po", {"po_number": "po_781"})
    assert workflows.ledger.side_effects() == []  # decided, not yet delivered

    assert relay_due_events() == {"delivered": 1}

    (effect,) = workflows.ledger.side_effects()
    assert (effect.thread_id, effect.case_id) == (THREAD, case.pk)
    assert effect.detail == {"invoice": "INV-8421", "purchase_order": "PO-781"}
    finished = graph.get_state(thread_config(THREAD))
    assert finished.next == () and finished.values["outcome"] == "matched"
    # The node re-ran on resume and filed again: the desk answered with the same case.
    assert Case.objects.filter(workflow_instance_id=THREAD).count() == 1
    case.refresh_from_db()
    assert (case.state, case.delivery_status) == (State.RESOLVED, "delivered")
    assert case.side_effect_state == "confirmed_applied"
    assert case.side_effect_record["purchase_order"] == "PO-781"
    event = OutboxEvent.objects.get(case=case)
    assert workflows.ledger.resumed_by(THREAD) == event.pk

    # The sweep again, and resuming the finished thread by hand: nothing more happens.
    assert relay_due_events() == {}
    workflows.resume(THREAD, "invoice_match", {"case_id": case.pk})
    assert len(workflows.ledger.side_effects()) == 1


def test_an_invoice_with_one_matching_order_is_applied_without_a_case(workflows):
    invoice = {**SAMPLE_INVOICE, "number": "INV-9000", "vendor": "Globex Ltd", "total": "990"}

    result = workflows.start_invoice("invoice-9000", invoice)

    assert result["outcome"] == "matched" and "__interrupt__" not in result
    assert [effect.detail["purchase_order"] for effect in workflows.ledger.side_effects()] == [
        "PO-802"
    ]
    assert not Case.objects.exists()
