"""The work: cases, their evidence, leases, decisions, drafts and the resume outbox.

Only apps/cases/services assigns ``Case.state`` (through ``transitions.move``); database
constraints back the invariants the services rely on.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from ulid import ULID

from apps.routing.models import Classification, ExceptionClass, Queue, Severity
from apps.workflows.models import ApiSource, WorkflowType

PACKET_SCHEMA_VERSION = 1


def new_case_id() -> str:
    return f"exc_{str(ULID()).lower()}"


def new_event_id() -> str:
    return f"evt_{str(ULID()).lower()}"


class State(models.TextChoices):
    OPEN = "open", _("Open")
    CLAIMED = "claimed", _("Claimed")
    WAITING = "waiting", _("Waiting for information")
    RESOLUTION_PENDING = "resolution_pending", _("Decided, resume pending")
    RESOLVED = "resolved", _("Resolved")
    QUARANTINED = "quarantined", _("Quarantined")
    CLOSED = "closed", _("Closed")


class CloseReason(models.TextChoices):
    CANCELED_BY_WORKFLOW = "canceled_by_workflow", _("Canceled by the workflow")
    DUPLICATE = "duplicate", _("Duplicate")


class SideEffectState(models.TextChoices):
    NONE_ATTEMPTED = "none_attempted", _("None attempted")
    CONFIRMED_APPLIED = "confirmed_applied", _("Confirmed applied")
    CONFIRMED_REJECTED = "confirmed_rejected", _("Confirmed rejected")
    UNKNOWN = "unknown", _("Unknown: reconcile before any retry")


class DeliveryStatus(models.TextChoices):
    NONE = "none", _("Nothing to deliver")
    PENDING = "pending", _("Delivering")
    DELIVERED = "delivered", _("Delivered")
    FAILED = "failed", _("Failed: recovery pending")


class Case(models.Model):
    # --- immutable facts -----------------------------------------------------------
    id = models.CharField(primary_key=True, max_length=40, default=new_case_id, editable=False)
    dedupe_key = models.CharField(max_length=400, unique=True)
    packet_digest = models.CharField(max_length=64)
    source = models.ForeignKey(ApiSource, on_delete=models.PROTECT, related_name="cases")
    is_test = models.BooleanField(default=False)
    workflow_type = models.ForeignKey(WorkflowType, on_delete=models.PROTECT, related_name="cases")
    workflow_version = models.CharField(max_length=40)
    workflow_instance_id = models.CharField(max_length=200)
    checkpoint_id = models.CharField(max_length=200)
    resume_handle = models.TextField(blank=True)
    case_ref = models.CharField(max_length=200)
    summary = models.CharField(max_length=500)
    exception_class = models.ForeignKey(ExceptionClass, on_delete=models.PROTECT, related_name="+")
    reason_code = models.CharField(max_length=100)
    reason_note = models.TextField(blank=True)
    proposed_action = models.JSONField(null=True, blank=True)
    policy_version = models.CharField(max_length=100, blank=True)
    policy_decision_ref = models.CharField(max_length=200, blank=True)
    trace_ref = models.CharField(max_length=200, blank=True)
    input_snapshot_ref = models.CharField(max_length=200, blank=True)
    timeline = models.JSONField(default=list, blank=True)
    attributes = models.JSONField(default=dict, blank=True)
    packet_schema_version = models.PositiveSmallIntegerField(default=PACKET_SCHEMA_VERSION)
    created_at = models.DateTimeField()

    # --- mutable routing fields, changed only by recorded transitions -----------------
    queue = models.ForeignKey(Queue, on_delete=models.PROTECT, related_name="cases")
    routing_explanation = models.CharField(max_length=300, blank=True)
    routing_rule_id = models.PositiveIntegerField(null=True, blank=True)
    routing_rule_version = models.PositiveIntegerField(null=True, blank=True)
    routing_policy_version = models.CharField(max_length=40, blank=True)
    # What the task type requires of the decider, copied at filing (changed only by a
    # recorded reroute): [{"code", "min_proficiency"}], certification codes, etc.
    required_skills = models.JSONField(default=list, blank=True)
    required_certifications = models.JSONField(default=list, blank=True)
    required_language = models.CharField(max_length=16, blank=True)
    required_jurisdiction = models.CharField(max_length=32, blank=True)
    authority_amount = models.DecimalField(max_digits=18, decimal_places=2, null=True, blank=True)
    workload_weight = models.PositiveSmallIntegerField(default=1)
    data_classification = models.CharField(
        max_length=16, choices=Classification.choices, default=Classification.INTERNAL
    )
    state = models.CharField(max_length=24, choices=State.choices, default=State.OPEN)
    close_reason = models.CharField(max_length=32, choices=CloseReason.choices, blank=True)
    severity = models.CharField(max_length=16, choices=Severity.choices)
    severity_inputs = models.JSONField(default=dict, blank=True)
    severity_explanation = models.CharField(max_length=300, blank=True)
    severity_policy_version = models.CharField(max_length=40, blank=True)
    priority_band = models.CharField(max_length=2)
    priority_score = models.IntegerField()
    priority_components = models.JSONField(default=dict)
    priority_policy_version = models.CharField(max_length=40)
    priority_explanation = models.CharField(max_length=300)
    priority_override_band = models.CharField(max_length=2, blank=True)
    priority_override_reason = models.CharField(max_length=300, blank=True)
    priority_override_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    priority_override_expires_at = models.DateTimeField(null=True, blank=True)
    due_at = models.DateTimeField()
    original_due_at = models.DateTimeField()
    breached_at = models.DateTimeField(
        null=True, blank=True, help_text=_("First moment the case was past due; never erased.")
    )
    escalation_level = models.PositiveSmallIntegerField(default=0)
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="claimed_cases",
    )
    lease_token = models.CharField(max_length=64, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    lease_kind = models.CharField(max_length=8, blank=True)  # "pull" | "push" | ""
    release_count = models.PositiveIntegerField(default=0)
    skip_count = models.PositiveIntegerField(default=0)
    transfer_count = models.PositiveIntegerField(default=0)
    reroute_count = models.PositiveIntegerField(default=0)
    version = models.PositiveIntegerField(default=1)
    side_effect_state = models.CharField(
        max_length=24, choices=SideEffectState.choices, default=SideEffectState.NONE_ATTEMPTED
    )
    side_effect_record = models.JSONField(default=dict, blank=True)
    waiting_on = models.JSONField(default=dict, blank=True)
    waiting_since = models.DateTimeField(null=True, blank=True)
    blocked_seconds = models.PositiveIntegerField(default=0)
    evidence_version = models.PositiveIntegerField(default=1)
    evidence_digest = models.CharField(max_length=64)
    delivery_status = models.CharField(
        max_length=16, choices=DeliveryStatus.choices, default=DeliveryStatus.NONE
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # A claimed case has exactly one live lease, and only a claimed case has one.
            models.CheckConstraint(
                name="case_claimed_has_lease",
                condition=(
                    Q(state="claimed", assignee__isnull=False, lease_expires_at__isnull=False)
                    & ~Q(lease_token="")
                )
                | (~Q(state="claimed") & Q(lease_token="", lease_expires_at__isnull=True)),
            ),
            models.CheckConstraint(
                name="case_closed_has_reason",
                condition=Q(state="closed") & ~Q(close_reason="")
                | ~Q(state="closed") & Q(close_reason=""),
            ),
            models.CheckConstraint(
                name="case_state_valid",
                condition=Q(state__in=[s.value for s in State]),
            ),
        ]
        indexes = [
            models.Index(
                fields=["queue", "state", "priority_band", "due_at"], name="case_queue_work_idx"
            ),
            models.Index(fields=["state", "lease_expires_at"], name="case_lease_idx"),
            models.Index(fields=["state", "waiting_since"], name="case_waiting_idx"),
            # The queue page and "next case" read active cases in priority order.
            models.Index(
                fields=["priority_band", "due_at", "created_at"],
                name="case_active_order_idx",
                condition=Q(state__in=["open", "claimed", "waiting"]),
            ),
            models.Index(fields=["case_ref"], name="case_ref_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.id} {self.case_ref}"

    @property
    def amount(self) -> str | None:
        value = self.attributes.get("amount")
        return None if value is None else str(value)


class EvidenceItem(models.Model):
    """An immutable snapshot. New evidence is a new version; nothing is replaced."""

    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="evidence")
    version = models.PositiveIntegerField()
    position = models.PositiveSmallIntegerField()
    ref = models.CharField(max_length=200)
    source = models.CharField(max_length=200)
    source_timestamp = models.DateTimeField()
    classification = models.CharField(max_length=16, choices=Classification.choices)
    content = models.JSONField()
    digest = models.CharField(max_length=64)
    added_at = models.DateTimeField()
    added_by = models.CharField(max_length=150)

    class Meta:
        ordering = ["case", "version", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["case", "version", "position"], name="evidence_case_version_position"
            )
        ]

    def __str__(self) -> str:
        return f"{self.case_id} v{self.version} {self.ref}"


class Decision(models.Model):
    """The one accepted decision of a case. Written once; a correction is a later,
    governed action."""

    case = models.OneToOneField(Case, on_delete=models.PROTECT, related_name="decision")
    resolution_id = models.CharField(max_length=64, unique=True)
    resolution = models.CharField(max_length=64)
    outcome = models.CharField(max_length=24)
    fields = models.JSONField(default=dict, blank=True)
    note = models.TextField(blank=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="decisions"
    )
    decided_at = models.DateTimeField()
    case_version = models.PositiveIntegerField()
    evidence_version = models.PositiveIntegerField()
    evidence_digest = models.CharField(max_length=64)
    decision_policy_version = models.CharField(max_length=100)

    def __str__(self) -> str:
        return f"{self.case_id}: {self.resolution}"


class Draft(models.Model):
    """Autosaved work in progress. Never a decision; kept across lease expiry."""

    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="drafts")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    resolution = models.CharField(max_length=64, blank=True)
    fields = models.JSONField(default=dict, blank=True)
    note = models.TextField(blank=True)
    saved_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["case", "user"], name="draft_case_user_unique")
        ]

    def __str__(self) -> str:
        return f"draft {self.case_id} by {self.user_id}"


class OutboxStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    DELIVERED = "delivered", _("Delivered")
    FAILED = "failed", _("Failed")
    GONE = "gone", _("Endpoint gone (410)")


class OutboxEvent(models.Model):
    """An event for the workflow, written in the transaction of the change it announces.

    The relay delivers it with the same id every time; ``next_attempt_at`` keeps the retry
    schedule in the database so a worker dying between commit and enqueue loses nothing.
    """

    id = models.CharField(primary_key=True, max_length=40, default=new_event_id, editable=False)
    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="events")
    type = models.CharField(max_length=40)
    body = models.JSONField()
    created_at = models.DateTimeField()
    status = models.CharField(
        max_length=16, choices=OutboxStatus.choices, default=OutboxStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=500, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    delivered_via = models.CharField(max_length=16, blank=True)  # webhook | ack

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            models.Index(fields=["status", "next_attempt_at"], name="outbox_due_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.id} {self.type} {self.status}"


class DeliveryAttempt(models.Model):
    event = models.ForeignKey(OutboxEvent, on_delete=models.CASCADE, related_name="attempt_log")
    number = models.PositiveIntegerField()
    attempted_at = models.DateTimeField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=500, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["event", "number"]

    def __str__(self) -> str:
        return f"{self.event_id} attempt {self.number}"


class TransferKind(models.TextChoices):
    RELEASE = "release", _("Released by the worker")
    TRANSFER = "transfer", _("Supervisor transfer")
    REROUTE = "reroute", _("Reroute (misclassification)")
    HANDOFF = "handoff", _("Shift hand-off")
    ABSENCE = "absence", _("Absence recovery")
    OVERFLOW = "overflow", _("Overflow")
    PUSH = "push", _("Pushed to a worker")


class Transfer(models.Model):
    """Every change of owner or queue keeps the case id and says from, to, why, who, when."""

    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="transfers")
    kind = models.CharField(max_length=16, choices=TransferKind.choices)
    from_queue = models.ForeignKey(
        Queue, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    to_queue = models.ForeignKey(
        Queue, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    from_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    to_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    reason = models.CharField(max_length=300, blank=True)
    note = models.TextField(blank=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    rule = models.CharField(max_length=120, blank=True)  # the rule or sweep when no person
    draft_policy = models.CharField(max_length=16, blank=True)  # kept | handed_over | dropped
    at = models.DateTimeField()

    class Meta:
        ordering = ["case", "at"]
        indexes = [models.Index(fields=["kind", "at"], name="transfer_kind_at_idx")]

    def __str__(self) -> str:
        return f"{self.case_id} {self.kind} at {self.at:%Y-%m-%d %H:%M}"


class Escalation(models.Model):
    """One record per case per level: the unique constraint makes a ladder fire once even
    when two sweeps race."""

    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="escalations")
    level = models.PositiveSmallIntegerField()
    action = models.CharField(max_length=24)
    fired_at = models.DateTimeField()
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["case", "level"]
        constraints = [
            models.UniqueConstraint(fields=["case", "level"], name="escalation_case_level_unique")
        ]

    def __str__(self) -> str:
        return f"{self.case_id} L{self.level} {self.action}"


class Notification(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications"
    )
    case = models.ForeignKey(
        Case, null=True, blank=True, on_delete=models.CASCADE, related_name="notifications"
    )
    kind = models.CharField(max_length=32)
    message = models.CharField(max_length=500)
    created_at = models.DateTimeField()
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["user", "read_at"], name="notification_unread_idx")]

    def __str__(self) -> str:
        return f"to {self.user_id}: {self.message[:40]}"


class CapacityAlert(models.Model):
    """'No eligible worker' for a case: raised at once, visible on the supervisor board,
    cleared when someone eligible takes the case (never cycled silently)."""

    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="capacity_alerts")
    queue = models.ForeignKey(Queue, on_delete=models.PROTECT, related_name="+")
    explanation = models.CharField(max_length=500)
    raised_at = models.DateTimeField()
    cleared_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-raised_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["case"],
                condition=Q(cleared_at__isnull=True),
                name="capacity_alert_one_open_per_case",
            )
        ]

    def __str__(self) -> str:
        return f"no eligible worker for {self.case_id}"
