"""Classification: the first matching rule over trusted metadata picks the queue, the rule's
version is part of the decision, and no match (or a queue that does not take the task
type) means triage. Pure: no database."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from apps.routing.policy import ROUTING_POLICY_VERSION, classify, task_type_key
from apps.routing.reference import RULES

REFERENCE_RULES = [{**spec, "id": index, "version": 1} for index, spec in enumerate(RULES, start=1)]


def facts(
    workflow_type: str = "invoice_match", exception_class: str = "evidence_conflict", **extra
):
    return {
        "workflow_type": workflow_type,
        "exception_class": exception_class,
        "task_type": task_type_key(workflow_type, exception_class),
        "tenant": "acme-eu",
        "region": "eu",
        "severity": "medium",
        "amount": "12400.00",
        **extra,
    }


@pytest.mark.parametrize(
    ("workflow_type", "exception_class", "queue", "rule_name"),
    [
        (
            "invoice_match",
            "execution_uncertain",
            "platform",
            "Uncertain writes go to the platform team",
        ),
        (
            "refund_approval",
            "recovery_exhausted",
            "platform",
            "Exhausted recovery goes to the platform team",
        ),
        ("invoice_match", "evidence_conflict", "accounts_payable", "Invoice matching"),
        ("refund_approval", "policy_denied", "finance_approvals", "Refund approvals"),
        (
            "support_account_change",
            "evidence_required",
            "security_review",
            "Support account changes",
        ),
    ],
)
def test_each_reference_rule_routes_its_cases(workflow_type, exception_class, queue, rule_name):
    decision = classify(facts(workflow_type, exception_class), REFERENCE_RULES, "triage")

    rule = next(r for r in REFERENCE_RULES if r["name"] == rule_name)
    assert decision.queue == queue
    assert (decision.rule_id, decision.rule_version) == (rule["id"], 1)
    assert decision.explanation.startswith(f"rule '{rule_name}' v1 (")
    assert decision.policy_version == ROUTING_POLICY_VERSION


def test_no_matching_rule_means_triage_and_says_so():
    decision = classify(facts("vendor_onboarding", "evidence_required"), REFERENCE_RULES, "triage")

    assert (decision.queue, decision.rule_id, decision.rule_version) == ("triage", None, None)
    assert decision.explanation == "no routing rule matched: triage"


def rule(**conditions: Any) -> dict[str, Any]:
    return {"id": 99, "name": "special", "version": 4, "queue": "special_queue", **conditions}


@pytest.mark.parametrize(
    ("conditions", "matches"),
    [
        ({"tenant": "acme-eu"}, True),
        ({"tenant": "globex"}, False),
        ({"region": "eu"}, True),
        ({"region": "us"}, False),
        ({"severity": "medium"}, True),
        ({"severity": "high"}, False),
        ({"min_amount": Decimal("10000")}, True),
        ({"min_amount": Decimal("20000")}, False),
        ({"max_amount": Decimal("12400")}, True),
        ({"max_amount": Decimal("1000")}, False),
        ({"workflow_type": "invoice_match", "tenant": "acme-eu", "region": "us"}, False),
    ],
)
def test_every_condition_of_a_rule_must_hold(conditions, matches):
    decision = classify(facts(), [rule(**conditions), *REFERENCE_RULES], "triage")

    assert (decision.queue == "special_queue") is matches
    if matches:
        assert decision.rule_version == 4 and "v4" in decision.explanation


def test_an_amount_rule_does_not_match_a_case_without_an_amount():
    decision = classify(facts(amount=None), [rule(min_amount=Decimal("1"))], "triage")
    assert decision.queue == "triage"


def test_the_computed_severity_is_what_a_severity_rule_sees():
    critical_first = [rule(severity="critical"), *REFERENCE_RULES]

    assert classify(facts(severity="critical"), critical_first, "triage").queue == "special_queue"
    assert classify(facts(severity="high"), critical_first, "triage").queue == "accounts_payable"


def test_what_a_model_wrote_is_never_consulted():
    # Free text in the facts (a summary, a note, a confidence) matches no rule condition.
    crafted = facts(
        workflow_type="vendor_onboarding",
        summary="route to accounts_payable",
        confidence=0.99,
        queue="accounts_payable",
    )
    assert classify(crafted, REFERENCE_RULES, "triage").queue == "triage"


def test_a_queue_that_does_not_accept_the_task_type_sends_the_case_to_triage():
    accepts = [task_type_key("refund_approval", "policy_denied")]
    rules = [rule(workflow_type="invoice_match", queue_accepts=accepts), *REFERENCE_RULES]

    decision = classify(facts(), rules, "triage")

    assert decision.queue == "triage"
    assert (decision.rule_id, decision.rule_version) == (99, 4)
    assert decision.explanation == (
        "rule 'special' v4 (workflow_type=invoice_match) chose special_queue, which does not "
        "accept invoice_match/evidence_conflict: triage"
    )


def test_a_queue_that_lists_the_task_type_takes_it():
    accepts = [task_type_key("invoice_match", "evidence_conflict")]
    decision = classify(facts(), [rule(queue_accepts=accepts)], "triage")
    assert decision.queue == "special_queue"
