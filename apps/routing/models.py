"""The rules: queues, exception classes and their resolutions, routing rules, worker profiles."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

TRIAGE_QUEUE = "triage"
PLATFORM_QUEUE = "platform"


class Severity(models.TextChoices):
    LOW = "low", _("Low")
    MEDIUM = "medium", _("Medium")
    HIGH = "high", _("High")
    CRITICAL = "critical", _("Critical")


class Classification(models.TextChoices):
    """Data classification of evidence, ordered from least to most sensitive."""

    PUBLIC = "public", _("Public")
    INTERNAL = "internal", _("Internal")
    CONFIDENTIAL = "confidential", _("Confidential")
    RESTRICTED = "restricted", _("Restricted")


CLASSIFICATION_RANK = {
    Classification.PUBLIC: 0,
    Classification.INTERNAL: 1,
    Classification.CONFIDENTIAL: 2,
    Classification.RESTRICTED: 3,
}


class Queue(models.Model):
    name = models.SlugField(max_length=64, unique=True)
    display_name = models.CharField(max_length=120)
    owning_team = models.CharField(max_length=120, blank=True)
    description = models.TextField(blank=True)
    service_target_minutes = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text=_("Overrides the class's service target (e.g. a short target for triage)."),
    )

    class Meta:
        ordering = ["name"]
        permissions = [
            ("view_queue", _("See the queue's cases")),
            ("work_queue", _("Claim and decide the queue's cases")),
            ("supervise_queue", _("Transfer, override and retry deliveries in the queue")),
        ]
        default_permissions = ("add", "change", "delete")

    def __str__(self) -> str:
        return self.display_name or self.name


class ExceptionClass(models.Model):
    code = models.SlugField(max_length=64, unique=True)
    display_name = models.CharField(max_length=120)
    description = models.TextField(blank=True)
    owner_queue = models.ForeignKey(Queue, on_delete=models.PROTECT, related_name="+")
    default_severity = models.CharField(max_length=16, choices=Severity.choices)
    service_target_minutes = models.PositiveIntegerField(default=24 * 60)
    emits_information_requested = models.BooleanField(
        default=False,
        help_text=_("Send the workflow case.information_requested when a worker asks."),
    )
    wait_timeout_minutes = models.PositiveIntegerField(
        default=24 * 60, help_text=_("A waiting case returns to open after this long.")
    )

    class Meta:
        ordering = ["code"]
        verbose_name_plural = "exception classes"

    def __str__(self) -> str:
        return self.display_name or self.code


class Outcome(models.TextChoices):
    RESUME = "resume", _("Resume the workflow")
    COMPENSATE = "compensate", _("Compensate")
    CLOSE = "close", _("Close the workflow's task")
    REQUEST_INFORMATION = "request_information", _("Request information (not a decision)")


class Resolution(models.Model):
    """One allowed resolution of a class, with the bounded form a worker fills in.

    field_schema is a list of {"name", "label", "type": text|string|choice|decimal|evidence_ref,
    "required": bool, "choices": [...], "max_length": int}; it is validated on the server.
    """

    exception_class = models.ForeignKey(
        ExceptionClass, on_delete=models.CASCADE, related_name="resolutions"
    )
    code = models.SlugField(max_length=64)
    label = models.CharField(max_length=120)
    help_text = models.CharField(max_length=300, blank=True)
    position = models.PositiveSmallIntegerField(default=0)
    field_schema = models.JSONField(default=list, blank=True)
    outcome = models.CharField(max_length=24, choices=Outcome.choices, default=Outcome.RESUME)
    requires_reason = models.BooleanField(default=False)
    irreversible = models.BooleanField(default=False)
    retry_like = models.BooleanField(
        default=False,
        help_text=_("Repeats an external write; hidden while the side effect is unknown."),
    )
    required_group = models.CharField(
        max_length=64, blank=True, help_text=_("Role (group) required, besides work_queue.")
    )

    class Meta:
        ordering = ["exception_class", "position", "code"]
        constraints = [
            models.UniqueConstraint(
                fields=["exception_class", "code"], name="resolution_class_code_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.exception_class.code}:{self.code}"


class RoutingRule(models.Model):
    """Ordered rules over trusted metadata; the first match picks the queue.

    Empty conditions match anything. Nothing a model wrote (summary, notes) is consulted.
    """

    position = models.PositiveIntegerField(default=100)
    name = models.CharField(max_length=120)
    active = models.BooleanField(default=True)
    workflow_type = models.CharField(max_length=64, blank=True)
    exception_class = models.CharField(max_length=64, blank=True)
    tenant = models.CharField(max_length=120, blank=True)
    region = models.CharField(max_length=64, blank=True)
    severity = models.CharField(max_length=16, blank=True, choices=Severity.choices)
    min_amount = models.DecimalField(max_digits=18, decimal_places=2, null=True, blank=True)
    max_amount = models.DecimalField(max_digits=18, decimal_places=2, null=True, blank=True)
    queue = models.ForeignKey(Queue, on_delete=models.PROTECT, related_name="rules")

    class Meta:
        ordering = ["position", "id"]

    def __str__(self) -> str:
        return f"{self.position}: {self.name} -> {self.queue.name}"

    def as_policy_rule(self) -> dict[str, object]:
        return {
            "id": self.pk,
            "name": self.name,
            "workflow_type": self.workflow_type,
            "exception_class": self.exception_class,
            "tenant": self.tenant,
            "region": self.region,
            "severity": self.severity,
            "min_amount": self.min_amount,
            "max_amount": self.max_amount,
            "queue": self.queue.name,
        }


class WorkerProfile(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="worker_profile"
    )
    clearance = models.CharField(
        max_length=16, choices=Classification.choices, default=Classification.INTERNAL
    )
    amount_limit = models.DecimalField(
        max_digits=18,
        decimal_places=2,
        default=Decimal("0"),
        help_text=_("Largest amount this worker may approve."),
    )

    def __str__(self) -> str:
        return f"profile of {self.user}"

    def may_see(self, classification: str) -> bool:
        return CLASSIFICATION_RANK.get(classification, 99) <= CLASSIFICATION_RANK[self.clearance]
