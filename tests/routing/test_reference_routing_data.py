"""Reference data for routing: skills, calendars, overflow routes and escalation ladders for
every install; task types and queue calendars only for the demo. Both idempotent."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from apps.audit.models import AuditEvent
from apps.routing.models import (
    BusinessCalendar,
    EscalationStep,
    ExceptionClass,
    Queue,
    Skill,
    TaskType,
)
from apps.routing.reference import ensure_demo_routing, ensure_reference_data

BERLIN = ZoneInfo("Europe/Berlin")


def test_reference_data_adds_skills_calendars_overflow_and_ladders_but_no_task_types(
    reference_data,
):
    assert set(Skill.objects.values_list("code", flat=True)) == {
        "invoice_matching",
        "refunds",
        "account_security",
        "platform_ops",
    }
    eu_finance = BusinessCalendar.objects.get(name="eu-finance")
    assert (eu_finance.time_zone, eu_finance.holiday_country) == ("Europe/Berlin", "DE")
    assert sorted(eu_finance.working_hours) == ["fri", "mon", "thu", "tue", "wed"]
    assert BusinessCalendar.objects.filter(name="24x7").exists()
    payables = Queue.objects.get(name="accounts_payable")
    assert payables.overflow_queue.name == "finance_approvals"
    for exception_class in ExceptionClass.objects.all():
        ladder = list(
            exception_class.escalation_steps.values_list(
                "level", "action", "remaining_percent", "min_severity"
            )
        )
        assert ladder == [
            (1, "remind_assignee", 50, ""),
            (2, "alert_supervisor", 20, ""),
            (3, "bump_priority", 0, ""),
            (4, "transfer_overflow", -25, "medium"),
            (5, "control_owner", -100, "high"),
        ]
    # Existing installs keep wall-clock service targets and claimable cases.
    assert not Queue.objects.filter(calendar__isnull=False).exists()
    assert not TaskType.objects.exists()


def test_reference_data_twice_changes_nothing(reference_data):
    counts = (AuditEvent.objects.count(), EscalationStep.objects.count(), Skill.objects.count())

    ensure_reference_data()

    assert (
        AuditEvent.objects.count(),
        EscalationStep.objects.count(),
        Skill.objects.count(),
    ) == counts


def test_an_overflow_route_an_admin_changed_is_left_alone(reference_data):
    Queue.objects.filter(name="accounts_payable").update(
        overflow_queue=Queue.objects.get(name="triage")
    )

    ensure_reference_data()

    assert Queue.objects.get(name="accounts_payable").overflow_queue.name == "triage"


def test_demo_routing_adds_task_types_and_queue_calendars(reference_data):
    ensure_demo_routing()

    def task_type(workflow: str, code: str) -> TaskType:
        return TaskType.objects.get(workflow_type__name=workflow, exception_class__code=code)

    def skills(found: TaskType) -> list[tuple[str, int]]:
        return [(s.skill.code, s.min_proficiency) for s in found.tasktypeskill_set.all()]

    refund = task_type("refund_approval", "policy_denied")
    assert refund.authority_by_amount and refund.workload_weight == 2
    assert skills(refund) == [("refunds", 1)]
    account = task_type("support_account_change", "evidence_required")
    assert (account.data_classification, account.workload_weight) == ("confidential", 2)
    assert skills(account) == [("account_security", 1)]
    invoice = task_type("invoice_match", "evidence_conflict")
    assert (invoice.workload_weight, invoice.authority_by_amount) == (1, False)
    assert skills(invoice) == [("invoice_matching", 1)]
    assert skills(task_type("invoice_match", "execution_uncertain")) == [("platform_ops", 1)]
    calendars = dict(Queue.objects.values_list("name", "calendar__name"))
    assert calendars == {
        "accounts_payable": "eu-finance",
        "finance_approvals": "eu-finance",
        "platform": "24x7",
        "security_review": "24x7",
        "triage": "24x7",
    }


def test_demo_routing_twice_changes_nothing_and_keeps_an_admins_calendar(reference_data):
    Queue.objects.filter(name="platform").update(
        calendar=BusinessCalendar.objects.get(name="eu-finance")
    )
    ensure_demo_routing()
    counts = (AuditEvent.objects.count(), TaskType.objects.count())

    ensure_demo_routing()

    assert (AuditEvent.objects.count(), TaskType.objects.count()) == counts
    assert Queue.objects.get(name="platform").calendar.name == "eu-finance"


def test_with_demo_routing_a_filed_case_requires_the_demo_skill_on_business_hours(
    reference_data, file_packet
):
    ensure_demo_routing()

    friday_afternoon = datetime(2026, 9, 4, 16, 30, tzinfo=BERLIN)
    case = file_packet(at=friday_afternoon, **{"class": "policy_denied"})

    assert case.required_skills == [{"code": "invoice_matching", "min_proficiency": 1}]
    assert case.due_at == datetime(2026, 9, 7, 10, 30, tzinfo=BERLIN)  # eu-finance hours
