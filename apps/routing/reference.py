"""The reference configuration every install starts from: queues, the seven exception
classes with their resolutions, routing rules, skills, business calendars, overflow routes
and escalation ladders. Idempotent: `ensure_reference_data()` creates what is missing and
leaves what an admin changed alone.

Task types (what each workflow type x class requires of the decider) and the queues'
business calendars are demo configuration, applied by `ensure_demo_routing()`: an install
without skilled worker profiles would otherwise have cases nobody may claim, and service
targets would silently switch from the wall clock to business hours."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Group
from django.db import transaction

from apps.audit.services import Actor, record

from .models import (
    BusinessCalendar,
    EscalationStep,
    ExceptionClass,
    Queue,
    Resolution,
    RoutingRule,
    Skill,
    TaskType,
    TaskTypeSkill,
)

ROLES = ["worker", "supervisor", "auditor", "quality_reviewer", "admin"]

QUEUES: list[dict[str, Any]] = [
    {"name": "accounts_payable", "display_name": "Accounts payable", "owning_team": "Finance"},
    {"name": "finance_approvals", "display_name": "Finance approvals", "owning_team": "Finance"},
    {"name": "security_review", "display_name": "Security review", "owning_team": "Security"},
    {
        "name": "platform",
        "display_name": "Platform",
        "owning_team": "Engineering",
        "description": "Platform faults, quarantined checkpoints and workflow recovery.",
    },
    {
        "name": "triage",
        "display_name": "Triage",
        "owning_team": "Operations",
        "description": "Cases no routing rule matched. Short service target.",
        "service_target_minutes": 60,
    },
]

_REASON = {
    "name": "reason",
    "label": "Reason",
    "type": "text",
    "required": True,
    "max_length": 1000,
}
REQUEST_INFORMATION: dict[str, Any] = {
    "code": "request_information",
    "label": "Request information",
    "outcome": "request_information",
    "help_text": "Ask someone for what is missing; the case waits and keeps ageing.",
}
CLOSE_INVALID: dict[str, Any] = {
    "code": "close_invalid",
    "label": "Close as invalid",
    "outcome": "close",
    "requires_reason": True,
    "irreversible": True,
    "help_text": "The task should not be completed. The workflow is told to stop.",
}

CLASSES: list[dict[str, Any]] = [
    {
        "code": "evidence_required",
        "display_name": "Evidence required",
        "owner": "accounts_payable",
        "severity": "medium",
        "target": 8 * 60,
        "emits": True,
        "resolutions": [
            {
                "code": "provide_evidence",
                "label": "Provide the missing evidence",
                "outcome": "resume",
                "field_schema": [
                    {
                        "name": "evidence_ref",
                        "label": "Reference of the document found",
                        "type": "string",
                        "required": True,
                        "max_length": 200,
                    }
                ],
            },
            REQUEST_INFORMATION,
            CLOSE_INVALID,
        ],
    },
    {
        "code": "evidence_conflict",
        "display_name": "Evidence conflict",
        "owner": "accounts_payable",
        "severity": "medium",
        "target": 18 * 60 + 40,
        "emits": True,
        "resolutions": [
            {
                "code": "select_po",
                "label": "Select the purchase order",
                "outcome": "resume",
                "field_schema": [
                    {
                        "name": "po_number",
                        "label": "Purchase order",
                        "type": "evidence_ref",
                        "required": True,
                        "max_length": 100,
                    }
                ],
            },
            REQUEST_INFORMATION,
            CLOSE_INVALID,
        ],
    },
    {
        "code": "policy_denied",
        "display_name": "Policy denied",
        "owner": "finance_approvals",
        "severity": "high",
        "target": 2 * 60,
        "emits": False,
        "resolutions": [
            {
                "code": "approve_exception",
                "label": "Approve as an exception",
                "outcome": "resume",
                "requires_reason": True,
                "irreversible": True,
                "field_schema": [
                    {
                        "name": "approved_amount",
                        "label": "Approved amount",
                        "type": "decimal",
                        "required": True,
                    }
                ],
            },
            {
                "code": "deny",
                "label": "Deny",
                "outcome": "close",
                "requires_reason": True,
                "irreversible": True,
            },
            REQUEST_INFORMATION,
        ],
    },
    {
        "code": "output_rejected",
        "display_name": "Output rejected",
        "owner": "accounts_payable",
        "severity": "medium",
        "target": 8 * 60,
        "emits": False,
        "resolutions": [
            {
                "code": "correct_and_resubmit",
                "label": "Correct and resubmit",
                "outcome": "resume",
                "retry_like": True,
                "field_schema": [
                    {
                        "name": "corrected_value",
                        "label": "Corrected value",
                        "type": "text",
                        "required": True,
                        "max_length": 2000,
                    }
                ],
            },
            REQUEST_INFORMATION,
            CLOSE_INVALID,
        ],
    },
    {
        "code": "execution_uncertain",
        "display_name": "Execution uncertain",
        "owner": "platform",
        "severity": "high",
        "target": 4 * 60,
        "emits": False,
        "resolutions": [
            {
                "code": "retry_write",
                "label": "Retry the write",
                "outcome": "resume",
                "retry_like": True,
                "requires_reason": True,
            },
            {
                "code": "confirm_applied",
                "label": "Continue: the write is applied",
                "outcome": "resume",
                "field_schema": [
                    {
                        "name": "provider_record",
                        "label": "Provider record or idempotency key",
                        "type": "string",
                        "required": True,
                        "max_length": 200,
                    }
                ],
            },
            CLOSE_INVALID,
        ],
    },
    {
        "code": "recovery_exhausted",
        "display_name": "Recovery exhausted",
        "owner": "platform",
        "severity": "high",
        "target": 4 * 60,
        "emits": False,
        "resolutions": [
            {"code": "retry_now", "label": "Retry now", "outcome": "resume", "retry_like": True},
            {
                "code": "compensate",
                "label": "Compensate",
                "outcome": "compensate",
                "requires_reason": True,
                "irreversible": True,
            },
            CLOSE_INVALID,
        ],
    },
    {
        "code": "quality_threshold_missed",
        "display_name": "Quality threshold missed",
        "owner": "accounts_payable",
        "severity": "low",
        "target": 24 * 60,
        "emits": False,
        "resolutions": [
            {"code": "accept_output", "label": "Accept the output", "outcome": "resume"},
            {
                "code": "correct_output",
                "label": "Correct the output",
                "outcome": "resume",
                "field_schema": [
                    {
                        "name": "corrected_value",
                        "label": "Corrected value",
                        "type": "text",
                        "required": True,
                        "max_length": 2000,
                    }
                ],
            },
            {
                "code": "reject_output",
                "label": "Reject the output",
                "outcome": "close",
                "requires_reason": True,
            },
        ],
    },
]

RULES: list[dict[str, Any]] = [
    {
        "position": 10,
        "name": "Uncertain writes go to the platform team",
        "exception_class": "execution_uncertain",
        "queue": "platform",
    },
    {
        "position": 20,
        "name": "Exhausted recovery goes to the platform team",
        "exception_class": "recovery_exhausted",
        "queue": "platform",
    },
    {
        "position": 30,
        "name": "Invoice matching",
        "workflow_type": "invoice_match",
        "queue": "accounts_payable",
    },
    {
        "position": 40,
        "name": "Refund approvals",
        "workflow_type": "refund_approval",
        "queue": "finance_approvals",
    },
    {
        "position": 50,
        "name": "Support account changes",
        "workflow_type": "support_account_change",
        "queue": "security_review",
    },
]


SKILLS: list[dict[str, str]] = [
    {"code": "invoice_matching", "name": "Invoice matching"},
    {"code": "refunds", "name": "Refunds"},
    {"code": "account_security", "name": "Account security"},
    {"code": "platform_ops", "name": "Platform operations"},
]

WEEKDAYS_9_TO_5 = {day: [["09:00", "17:00"]] for day in ("mon", "tue", "wed", "thu", "fri")}
CALENDARS: list[dict[str, Any]] = [
    {
        "name": "eu-finance",
        "time_zone": "Europe/Berlin",
        "working_hours": WEEKDAYS_9_TO_5,
        "holiday_country": "DE",
    },
    {
        "name": "24x7",
        "time_zone": "UTC",
        "working_hours": {
            day: [["00:00", "24:00"]] for day in ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
        },
    },
]

# Where a queue's late cases go at escalation level 4. Accounts payable overflows to the
# finance approvers (same team, the same skills). The other queues hold work that needs
# their own specialists (security, platform) or are the last stop (triage): none.
OVERFLOW = {"accounts_payable": "finance_approvals"}

# Every class's ladder: fire when the time left falls to this % of the service target
# (negative: that far past due), for cases at least this severe.
ESCALATION_LADDER: list[dict[str, Any]] = [
    {"level": 1, "action": "remind_assignee", "remaining_percent": 50, "min_severity": ""},
    {"level": 2, "action": "alert_supervisor", "remaining_percent": 20, "min_severity": ""},
    {"level": 3, "action": "bump_priority", "remaining_percent": 0, "min_severity": ""},
    {
        "level": 4,
        "action": "transfer_overflow",
        "remaining_percent": -25,
        "min_severity": "medium",
    },
    {"level": 5, "action": "control_owner", "remaining_percent": -100, "min_severity": "high"},
]

BUSINESS_CLASSES = [
    "evidence_required",
    "evidence_conflict",
    "policy_denied",
    "output_rejected",
    "quality_threshold_missed",
]
PLATFORM_CLASSES = ["execution_uncertain", "recovery_exhausted"]


def _task_type(skill: str, weight: int, **extra: Any) -> dict[str, Any]:
    return {"skills": [(skill, 1)], "workload_weight": weight, **extra}


# (workflow type, class) -> requirements. Platform faults need platform operations
# whatever the workflow; the business classes need the workflow's own domain skill.
DEMO_TASK_TYPES: dict[tuple[str, str], dict[str, Any]] = {
    **{("invoice_match", c): _task_type("invoice_matching", 1) for c in BUSINESS_CLASSES},
    **{("refund_approval", c): _task_type("refunds", 1) for c in BUSINESS_CLASSES},
    ("refund_approval", "policy_denied"): _task_type("refunds", 2, authority_by_amount=True),
    **{
        ("support_account_change", c): _task_type(
            "account_security", 2, data_classification="confidential"
        )
        for c in BUSINESS_CLASSES
    },
    **{
        (workflow, c): _task_type("platform_ops", 2)
        for workflow in ("invoice_match", "refund_approval", "support_account_change")
        for c in PLATFORM_CLASSES
    },
}

DEMO_QUEUE_CALENDARS = {
    "accounts_payable": "eu-finance",
    "finance_approvals": "eu-finance",
    "platform": "24x7",
    "security_review": "24x7",
    "triage": "24x7",
}


def ensure_reference_data() -> None:
    actor = Actor.system("reference-data")
    with transaction.atomic():
        for role in ROLES:  # also made by a data migration; a flushed test DB loses them
            Group.objects.get_or_create(name=role)
        queues = {}
        for spec in QUEUES:
            queue, created = Queue.objects.get_or_create(name=spec["name"], defaults=spec)
            queues[queue.name] = queue
            if created:
                record(
                    stream="config:routing.queue",
                    actor=actor,
                    action="config.created",
                    after={"id": queue.pk, "name": queue.name},
                )
        for spec in CLASSES:
            exception_class, created = ExceptionClass.objects.get_or_create(
                code=spec["code"],
                defaults={
                    "display_name": spec["display_name"],
                    "owner_queue": queues[spec["owner"]],
                    "default_severity": spec["severity"],
                    "service_target_minutes": spec["target"],
                    "emits_information_requested": spec["emits"],
                },
            )
            if created:
                record(
                    stream="config:routing.exceptionclass",
                    actor=actor,
                    action="config.created",
                    after={"id": exception_class.pk, "code": exception_class.code},
                )
            for position, resolution in enumerate(spec["resolutions"]):
                Resolution.objects.get_or_create(
                    exception_class=exception_class,
                    code=resolution["code"],
                    defaults={
                        **{k: v for k, v in resolution.items() if k != "code"},
                        "position": position,
                    },
                )
        for spec in RULES:
            if not RoutingRule.objects.filter(name=spec["name"]).exists():
                rule = RoutingRule.objects.create(
                    **{k: v for k, v in spec.items() if k != "queue"}, queue=queues[spec["queue"]]
                )
                record(
                    stream="config:routing.routingrule",
                    actor=actor,
                    action="config.created",
                    after={"id": rule.pk, "name": rule.name, "queue": spec["queue"]},
                )
        _ensure_skills(actor)
        _ensure_calendars(actor)
        _ensure_overflow_routes(actor, queues)
        _ensure_escalation_ladders(actor)


def _created(actor: Actor, model: str, after: dict[str, Any]) -> None:
    record(stream=f"config:routing.{model}", actor=actor, action="config.created", after=after)


def _ensure_skills(actor: Actor) -> None:
    for spec in SKILLS:
        skill, created = Skill.objects.get_or_create(code=spec["code"], defaults=spec)
        if created:
            _created(actor, "skill", {"id": skill.pk, "code": skill.code})


def _ensure_calendars(actor: Actor) -> None:
    for spec in CALENDARS:
        calendar, created = BusinessCalendar.objects.get_or_create(name=spec["name"], defaults=spec)
        if created:
            _created(actor, "businesscalendar", {"id": calendar.pk, **spec})


def _ensure_overflow_routes(actor: Actor, queues: dict[str, Queue]) -> None:
    """Fill an overflow route that is missing; one an admin set is left alone."""
    for name, overflow in OVERFLOW.items():
        queue = queues[name]
        if queue.overflow_queue_id is None:
            queue.overflow_queue = queues[overflow]
            queue.save(update_fields=["overflow_queue"])
            record(
                stream="config:routing.queue",
                actor=actor,
                action="config.changed",
                before={"id": queue.pk, "overflow_queue": None},
                after={"id": queue.pk, "overflow_queue": overflow},
            )


def _ensure_escalation_ladders(actor: Actor) -> None:
    for exception_class in ExceptionClass.objects.all():
        for spec in ESCALATION_LADDER:
            step, created = EscalationStep.objects.get_or_create(
                exception_class=exception_class,
                level=spec["level"],
                defaults={k: v for k, v in spec.items() if k != "level"},
            )
            if created:
                _created(
                    actor,
                    "escalationstep",
                    {"id": step.pk, "class": exception_class.code, **spec},
                )


def ensure_demo_routing() -> None:
    """The demo's task types and queue calendars; `seed_demo` calls this after it has made
    the workflow types. Idempotent like `ensure_reference_data()` (which it runs first):
    a missing task type is created, an existing one is left as an admin left it; a queue
    gets its demo calendar only while it has none."""
    from apps.workflows.models import WorkflowType

    ensure_reference_data()
    actor = Actor.system("reference-data")
    with transaction.atomic():
        workflow_types = {w.name: w for w in WorkflowType.objects.all()}
        classes = {c.code: c for c in ExceptionClass.objects.all()}
        skills = {s.code: s for s in Skill.objects.all()}
        for (workflow_name, class_code), spec in DEMO_TASK_TYPES.items():
            workflow_type = workflow_types.get(workflow_name)
            if workflow_type is None:
                continue  # this install does not run that workflow
            fields = {k: v for k, v in spec.items() if k != "skills"}
            task_type, created = TaskType.objects.get_or_create(
                workflow_type=workflow_type, exception_class=classes[class_code], defaults=fields
            )
            if not created:
                continue
            for skill_code, proficiency in spec["skills"]:
                TaskTypeSkill.objects.create(
                    task_type=task_type, skill=skills[skill_code], min_proficiency=proficiency
                )
            _created(
                actor,
                "tasktype",
                {
                    "id": task_type.pk,
                    "task_type": f"{workflow_name}/{class_code}",
                    **fields,
                    "skills": [f"{code}>={level}" for code, level in spec["skills"]],
                },
            )
        calendars = {c.name: c for c in BusinessCalendar.objects.all()}
        for queue in Queue.objects.filter(name__in=DEMO_QUEUE_CALENDARS, calendar__isnull=True):
            queue.calendar = calendars[DEMO_QUEUE_CALENDARS[queue.name]]
            queue.save(update_fields=["calendar"])
            record(
                stream="config:routing.queue",
                actor=actor,
                action="config.changed",
                before={"id": queue.pk, "calendar": None},
                after={"id": queue.pk, "calendar": queue.calendar.name},
            )
