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


class BusinessCalendar(models.Model):
    """Working hours and holidays that service targets run on. Holidays come from the
    maintained `holidays` package (country + subdivision) plus explicit extra dates."""

    name = models.SlugField(max_length=64, unique=True)
    time_zone = models.CharField(max_length=64, default="UTC")
    working_hours = models.JSONField(
        default=dict,
        help_text=_(
            'Per weekday, a list of [start, end] local times, e.g. {"mon": [["09:00", "17:00"]]}.'
            " A weekday that is missing is closed."
        ),
    )
    holiday_country = models.CharField(max_length=8, blank=True)
    holiday_subdivision = models.CharField(max_length=16, blank=True)
    extra_holidays = models.JSONField(
        default=list, blank=True, help_text=_('Extra closed dates, e.g. ["2026-12-24"].')
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class AssignmentModel(models.TextChoices):
    FIFO_PULL = "fifo_pull", _("FIFO pull: workers claim from the list")
    PRIORITY_PUSH = "priority_push", _("Priority push: 'Next case' hands out the best case")
    ROUND_ROBIN = "round_robin", _("Round robin auto-assignment")
    HIGHEST_CAPACITY = "highest_capacity", _("Highest free capacity auto-assignment")
    CONTINUITY = "continuity", _("Continuity: related cases go to the worker who knows them")
    BLEND = "blend", _("Blend: urgent cases pushed, the rest pulled")


class Skill(models.Model):
    code = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=120)

    class Meta:
        ordering = ["code"]

    def __str__(self) -> str:
        return self.name or self.code


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
    calendar = models.ForeignKey(
        BusinessCalendar,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="queues",
        help_text=_("Business hours for service targets. Empty: around the clock."),
    )
    overflow_queue = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    continuity_note = models.TextField(
        blank=True, help_text=_("What to do when this queue cannot be worked (outage, absence).")
    )
    accepted_task_types = models.ManyToManyField(
        "TaskType",
        blank=True,
        related_name="+",
        help_text=_("Task types this queue accepts. Empty: any."),
    )
    assignment_model = models.CharField(
        max_length=20, choices=AssignmentModel.choices, default=AssignmentModel.FIFO_PULL
    )
    push_concurrency_cap = models.PositiveSmallIntegerField(
        default=3, help_text=_("Most pushed cases a worker holds at once from this queue.")
    )
    focus_period_minutes = models.PositiveSmallIntegerField(
        default=0, help_text=_("After a push, no new push to that worker for this long unless P1.")
    )
    continuity_release_minutes = models.PositiveIntegerField(
        default=60,
        help_text=_("A case held for its continuity worker is released to everyone after this."),
    )
    push_bands = models.JSONField(
        default=list,
        blank=True,
        help_text=_('Blend: bands that are pushed, e.g. ["P1", "P2"]; the rest are pulled.'),
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
    control_owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text=_("Receives the last escalation level."),
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


class EscalationAction(models.TextChoices):
    REMIND_ASSIGNEE = "remind_assignee", _("Remind the assignee")
    ALERT_SUPERVISOR = "alert_supervisor", _("Alert the queue's supervisors")
    BUMP_PRIORITY = "bump_priority", _("Raise the priority one band")
    TRANSFER_OVERFLOW = "transfer_overflow", _("Transfer to the overflow queue")
    CONTROL_OWNER = "control_owner", _("Escalate to the control owner")


class EscalationStep(models.Model):
    """One level of a class's escalation ladder. It fires once per case when the time left
    falls to `remaining_percent` of the service target (negative: past the due time), and
    only for cases at or above `min_severity` (impact, not elapsed age alone)."""

    exception_class = models.ForeignKey(
        ExceptionClass, on_delete=models.CASCADE, related_name="escalation_steps"
    )
    level = models.PositiveSmallIntegerField()
    action = models.CharField(max_length=24, choices=EscalationAction.choices)
    remaining_percent = models.SmallIntegerField(
        help_text=_("Fire when time left <= this % of the service target (e.g. 50, 10, 0, -50).")
    )
    min_severity = models.CharField(max_length=16, choices=Severity.choices, blank=True)

    class Meta:
        ordering = ["exception_class", "level"]
        constraints = [
            models.UniqueConstraint(
                fields=["exception_class", "level"], name="escalation_step_class_level_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.exception_class.code} L{self.level} {self.action}"


class TaskType(models.Model):
    """What a (workflow type, exception class) pair requires of whoever decides it. Copied
    onto each case at filing; changed on a case only by a recorded reroute."""

    workflow_type = models.ForeignKey(
        "workflows.WorkflowType", on_delete=models.CASCADE, related_name="task_types"
    )
    exception_class = models.ForeignKey(
        ExceptionClass, on_delete=models.CASCADE, related_name="task_types"
    )
    skills = models.ManyToManyField(Skill, through="TaskTypeSkill", blank=True)
    certifications = models.JSONField(default=list, blank=True)
    authority_by_amount = models.BooleanField(
        default=False, help_text=_("The decider's amount limit must cover the case amount.")
    )
    language = models.CharField(max_length=16, blank=True)
    jurisdiction = models.CharField(
        max_length=32,
        blank=True,
        help_text=_("Required jurisdiction; '@region' takes the case's region attribute."),
    )
    workload_weight = models.PositiveSmallIntegerField(default=1)
    data_classification = models.CharField(
        max_length=16, choices=Classification.choices, default=Classification.INTERNAL
    )

    class Meta:
        ordering = ["workflow_type", "exception_class"]
        constraints = [
            models.UniqueConstraint(
                fields=["workflow_type", "exception_class"], name="task_type_unique_pair"
            )
        ]

    def __str__(self) -> str:
        return f"{self.workflow_type_id}/{self.exception_class.code}"


class TaskTypeSkill(models.Model):
    task_type = models.ForeignKey(TaskType, on_delete=models.CASCADE)
    skill = models.ForeignKey(Skill, on_delete=models.CASCADE)
    min_proficiency = models.PositiveSmallIntegerField(default=1)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["task_type", "skill"], name="task_type_skill_unique")
        ]

    def __str__(self) -> str:
        return f"{self.skill.code}>={self.min_proficiency}"


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
    version = models.PositiveIntegerField(
        default=1, help_text=_("Bumped on every change; cases store the version that matched.")
    )

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
            "version": self.version,
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
    skills = models.ManyToManyField(Skill, through="WorkerSkill", blank=True)
    certifications = models.JSONField(default=list, blank=True)
    languages = models.JSONField(default=list, blank=True)
    jurisdictions = models.JSONField(default=list, blank=True)
    on_shift = models.BooleanField(default=True)
    shift_ends_at = models.DateTimeField(null=True, blank=True)
    capacity = models.PositiveSmallIntegerField(
        default=10, help_text=_("Workload units this worker may hold at once.")
    )
    last_assigned_at = models.DateTimeField(null=True, blank=True)
    last_pushed_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"profile of {self.user}"

    def may_see(self, classification: str) -> bool:
        return CLASSIFICATION_RANK.get(classification, 99) <= CLASSIFICATION_RANK[self.clearance]


class WorkerSkill(models.Model):
    profile = models.ForeignKey(WorkerProfile, on_delete=models.CASCADE)
    skill = models.ForeignKey(Skill, on_delete=models.CASCADE)
    proficiency = models.PositiveSmallIntegerField(default=3)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["profile", "skill"], name="worker_skill_unique")
        ]

    def __str__(self) -> str:
        return f"{self.skill.code}={self.proficiency}"


class CapacityAdjustment(models.Model):
    """A supervisor's capacity for a worker for a while, with a reason; it lapses by itself."""

    profile = models.ForeignKey(
        WorkerProfile, on_delete=models.CASCADE, related_name="capacity_adjustments"
    )
    capacity = models.PositiveSmallIntegerField()
    reason = models.CharField(max_length=300)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["ended_at", "expires_at"], name="capacity_adj_live_idx")]

    def __str__(self) -> str:
        return (
            f"{self.profile.user} capacity {self.capacity} until {self.expires_at:%Y-%m-%d %H:%M}"
        )
