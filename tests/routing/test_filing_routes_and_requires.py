"""Filing: routing stores the rule, its version and the policy version; the case copies its
task type's requirements and its computed severity; the due time runs on the queue's
business calendar."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from apps.audit.models import AuditEvent
from apps.cases.models import State
from apps.routing.models import (
    BusinessCalendar,
    Queue,
    RoutingRule,
    Skill,
    TaskType,
    TaskTypeSkill,
)
from apps.routing.policy import ROUTING_POLICY_VERSION, SEVERITY_POLICY_VERSION
from apps.workflows.models import WorkflowType

BERLIN = ZoneInfo("Europe/Berlin")


def berlin(*args: int) -> datetime:
    return datetime(*args, tzinfo=BERLIN)


def test_a_filed_case_stores_the_matching_rule_its_version_and_the_policy_version(file_packet):
    case = file_packet()

    rule = RoutingRule.objects.get(name="Invoice matching")
    assert case.queue.name == "accounts_payable"
    assert (case.routing_rule_id, case.routing_rule_version) == (rule.pk, 1)
    assert case.routing_policy_version == ROUTING_POLICY_VERSION
    assert case.routing_explanation == "rule 'Invoice matching' v1 (workflow_type=invoice_match)"
    filed = AuditEvent.objects.get(stream=case.pk, action="case.filed")
    assert filed.after["routing_rule"] == [rule.pk, 1]
    assert filed.after["routing"] == case.routing_explanation


def test_a_rule_changed_in_the_admin_gets_a_new_version_that_new_cases_record(file_packet, client):
    before = file_packet()
    rule = RoutingRule.objects.get(name="Invoice matching")
    admin = User.objects.create_superuser("root", password="pw-root")
    client.force_login(admin)
    url = reverse("admin:routing_routingrule_change", args=[rule.pk])
    form = {
        "position": rule.position,
        "name": rule.name,
        "active": "on",
        "workflow_type": "invoice_match",
        "exception_class": "",
        "tenant": "acme-eu",  # the change: only this tenant's invoices
        "region": "",
        "severity": "",
        "min_amount": "",
        "max_amount": "",
        "queue": rule.queue_id,
        "version": 77,  # read-only: a posted version is ignored
    }

    assert client.post(url, form).status_code == 302
    assert client.post(url, form).status_code == 302  # saved again unchanged: no new version
    after = file_packet()

    rule.refresh_from_db()
    assert rule.version == 2
    assert (before.routing_rule_id, before.routing_rule_version) == (rule.pk, 1)
    assert (after.routing_rule_id, after.routing_rule_version) == (rule.pk, 2)
    assert "v2 (workflow_type=invoice_match, tenant=acme-eu)" in after.routing_explanation


def test_an_unmatched_case_goes_to_triage_with_its_short_service_target(file_packet):
    case = file_packet(workflow_type="vendor_onboarding", workflow_version="1")

    assert case.queue.name == "triage"
    assert (case.routing_rule_id, case.routing_rule_version) == (None, None)
    assert case.routing_explanation == "no routing rule matched: triage"
    assert case.due_at == case.created_at + timedelta(minutes=60) == case.original_due_at


def test_a_queue_that_does_not_accept_the_task_type_sends_it_to_triage(file_packet):
    invoice_match = WorkflowType.objects.get(name="invoice_match")
    missing_evidence = TaskType.objects.create(
        workflow_type=invoice_match, exception_class_id=_class_id("evidence_required")
    )
    Queue.objects.get(name="accounts_payable").accepted_task_types.set([missing_evidence])

    conflict = file_packet()  # evidence_conflict: not accepted
    missing = file_packet(**{"class": "evidence_required"})

    assert conflict.queue.name == "triage"
    assert conflict.routing_rule_id == RoutingRule.objects.get(name="Invoice matching").pk
    assert conflict.routing_explanation.endswith(
        "chose accounts_payable, which does not accept invoice_match/evidence_conflict: triage"
    )
    assert missing.queue.name == "accounts_payable"


def _class_id(code: str) -> int:
    from apps.routing.models import ExceptionClass

    return ExceptionClass.objects.get(code=code).pk


def test_filing_copies_the_task_types_requirements_onto_the_case(file_packet):
    task_type = TaskType.objects.create(
        workflow_type=WorkflowType.objects.get(name="refund_approval"),
        exception_class_id=_class_id("policy_denied"),
        certifications=["refund-authority-2026"],
        authority_by_amount=True,
        language="de",
        jurisdiction="@region",
        workload_weight=3,
        data_classification="confidential",
    )
    refunds = Skill.objects.get(code="refunds")
    account_security = Skill.objects.get(code="account_security")
    TaskTypeSkill.objects.create(task_type=task_type, skill=refunds, min_proficiency=2)
    TaskTypeSkill.objects.create(task_type=task_type, skill=account_security, min_proficiency=1)

    case = file_packet(
        workflow_type="refund_approval",
        workflow_version="3",
        **{"class": "policy_denied"},
        attributes={"region": "de-by", "amount": "640.50", "currency": "EUR"},
    )

    assert case.queue.name == "finance_approvals"
    assert case.required_skills == [
        {"code": "account_security", "min_proficiency": 1},
        {"code": "refunds", "min_proficiency": 2},
    ]
    assert case.required_certifications == ["refund-authority-2026"]
    assert case.required_language == "de"
    assert case.required_jurisdiction == "de-by"
    case.refresh_from_db()
    assert case.authority_amount == Decimal("640.50")
    assert case.workload_weight == 3
    assert case.data_classification == "confidential"
    filed = AuditEvent.objects.get(stream=case.pk, action="case.filed")
    assert filed.after["task_type"] == "refund_approval/policy_denied"


def test_without_a_task_type_a_case_has_weight_one_and_no_skills(file_packet):
    case = file_packet()

    assert case.required_skills == [] and case.required_certifications == []
    assert (case.required_language, case.required_jurisdiction) == ("", "")
    assert case.authority_amount is None
    assert case.workload_weight == 1
    assert case.data_classification == "internal"


def test_a_region_jurisdiction_without_a_region_stays_unfillable(file_packet):
    TaskType.objects.create(
        workflow_type=WorkflowType.objects.get(name="invoice_match"),
        exception_class_id=_class_id("evidence_conflict"),
        jurisdiction="@region",
    )

    case = file_packet(attributes={"amount": "10.00", "currency": "EUR"})

    # Nobody holds "@region": the case waits for a supervisor instead of reaching someone
    # of the wrong jurisdiction.
    assert case.required_jurisdiction == "@region"


def test_evidence_more_sensitive_than_the_task_type_raises_the_cases_classification(
    file_packet,
):
    restricted = {
        "ref": "bank_letter",
        "source": "treasury",
        "source_timestamp": "2026-08-31T14:00:00Z",
        "classification": "restricted",
        "content": {"iban": "DE89 3704 0044 0532 0130 00"},
    }
    from tests.conftest import invoice_packet

    case = file_packet(evidence=[*invoice_packet()["evidence"], restricted])

    assert case.data_classification == "restricted"


def test_severity_is_computed_stored_explained_and_feeds_routing(file_packet):
    security = Queue.objects.get(name="security_review")
    RoutingRule.objects.create(
        position=1, name="Critical first", severity="critical", queue=security
    )

    routine = file_packet(attributes={"amount": "12400.00", "currency": "EUR", "confidence": 0.1})
    critical = file_packet(
        attributes={"amount": "12400.00", "currency": "EUR", "compliance_risk": "critical"}
    )

    assert routine.severity == "medium" and routine.queue.name == "accounts_payable"
    assert routine.severity_policy_version == SEVERITY_POLICY_VERSION
    assert routine.severity_explanation == (
        "medium: amount 12,400.00 (medium), class default (medium); model confidence not used"
    )
    assert routine.severity_inputs["ignored"] == ["confidence"]
    assert critical.severity == "critical" and critical.queue.name == "security_review"
    assert critical.severity_explanation.startswith("critical: compliance risk critical")
    assert critical.priority_components["severity"] == 70  # and priority uses it


def test_a_quarantined_case_records_no_rule_but_the_policy_version(file_packet):
    case = file_packet(workflow_version="99")

    assert (case.state, case.queue.name) == (State.QUARANTINED, "platform")
    assert (case.routing_rule_id, case.routing_rule_version) == (None, None)
    assert case.routing_policy_version == ROUTING_POLICY_VERSION


@pytest.fixture
def eu_finance_payables(reference_data):
    queue = Queue.objects.get(name="accounts_payable")
    queue.calendar = BusinessCalendar.objects.get(name="eu-finance")
    queue.save(update_fields=["calendar"])
    return queue


def test_a_case_filed_friday_afternoon_on_the_finance_calendar_is_due_monday(
    eu_finance_payables, file_packet
):
    # policy_denied has a 2 h target; 30 minutes are left on Friday.
    case = file_packet(at=berlin(2026, 9, 4, 16, 30), **{"class": "policy_denied"})

    assert case.queue == eu_finance_payables
    assert case.due_at == berlin(2026, 9, 7, 10, 30) == case.original_due_at


def test_a_case_filed_the_day_before_a_public_holiday_skips_it(eu_finance_payables, file_packet):
    # Thursday 14 May 2026 is Ascension Day.
    case = file_packet(at=berlin(2026, 5, 13, 16, 0), **{"class": "policy_denied"})

    assert case.due_at == berlin(2026, 5, 15, 10, 0)


def test_a_queue_without_a_calendar_keeps_the_wall_clock(file_packet):
    case = file_packet(at=berlin(2026, 9, 4, 16, 30), **{"class": "policy_denied"})

    assert case.due_at == berlin(2026, 9, 4, 18, 30)
