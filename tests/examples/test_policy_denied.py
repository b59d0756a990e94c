"""The policy-denied path: a refund above the agent's limit is not issued until a person
approves it as an exception, and never when they deny it."""

from __future__ import annotations

import pytest

from apps.cases.models import Case, State
from apps.cases.services import relay_due_events
from examples.langgraph_invoice.graph import SAMPLE_REFUND, thread_config

pytestmark = [pytest.mark.threaded, pytest.mark.django_db(transaction=True)]


def pause_for_approval(workflows, thread_id: str) -> Case:
    paused = workflows.start_refund(thread_id, SAMPLE_REFUND)
    (pause,) = paused["__interrupt__"]
    case = Case.objects.get(pk=pause.value["case_id"])
    assert (case.queue.name, case.exception_class.code) == ("finance_approvals", "policy_denied")
    assert workflows.ledger.side_effects() == []
    return case


def test_an_approved_exception_issues_the_refund_once_for_the_approved_amount(
    workflows, receiver, finance_worker, decide_through_pages
):
    case = pause_for_approval(workflows, "refund-1")

    decide_through_pages(
        finance_worker,
        case.pk,
        "approve_exception",
        {"approved_amount": "1000.00"},
        note="Long-standing customer; approved up to 1000.",
        confirm=True,
    )
    assert workflows.ledger.side_effects() == []  # decided, not yet delivered
    relay_due_events()

    (refund,) = workflows.ledger.side_effects()
    assert refund.kind == "refund_issued"
    assert refund.detail == {"order": "ORD-903122", "amount": "1000.00", "currency": "EUR"}
    case.refresh_from_db()
    assert (case.state, case.side_effect_state) == (State.RESOLVED, "confirmed_applied")


def test_a_denied_refund_is_never_issued(workflows, receiver, finance_worker, decide_through_pages):
    case = pause_for_approval(workflows, "refund-2")

    decide_through_pages(
        finance_worker, case.pk, "deny", note="Second refund on this order.", confirm=True
    )
    assert relay_due_events() == {"delivered": 1}

    assert workflows.ledger.side_effects() == []
    finished = workflows.graph_for("refund_approval").get_state(thread_config("refund-2"))
    assert finished.next == () and finished.values["outcome"] == "denied"
    case.refresh_from_db()
    assert (case.state, case.side_effect_state) == (State.RESOLVED, "none_attempted")


def test_a_refund_within_the_limit_needs_no_person(workflows):
    result = workflows.start_refund("refund-3", {**SAMPLE_REFUND, "amount": "120.00"})

    assert result["outcome"] == "refunded"
    assert [effect.detail["amount"] for effect in workflows.ledger.side_effects()] == ["120.00"]
    assert not Case.objects.exists()
