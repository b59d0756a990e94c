"""The reference configuration every install starts from: queues, the seven exception
classes with their resolutions, and routing rules. Idempotent: `ensure_reference_data()`
creates what is missing and leaves what an admin changed alone."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Group
from django.db import transaction

from apps.audit.services import Actor, record

from .models import ExceptionClass, Queue, Resolution, RoutingRule

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
