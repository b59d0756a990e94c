"""Cases are read-only in the admin: every change goes through the lifecycle services."""

from typing import Any

from django.contrib import admin

from .models import Case, Decision, EvidenceItem, OutboxEvent


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return False


class EvidenceInline(admin.TabularInline):
    model = EvidenceItem
    fields = [
        "version",
        "position",
        "ref",
        "source",
        "source_timestamp",
        "classification",
        "digest",
    ]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False


@admin.register(Case)
class CaseAdmin(ReadOnlyAdmin):
    list_display = ["id", "case_ref", "state", "queue", "priority_band", "due_at", "assignee"]
    list_filter = ["state", "queue", "exception_class", "is_test"]
    search_fields = ["id", "case_ref", "summary", "workflow_instance_id"]
    exclude = ["resume_handle"]
    inlines = [EvidenceInline]


@admin.register(Decision)
class DecisionAdmin(ReadOnlyAdmin):
    list_display = ["case", "resolution", "actor", "decided_at"]
    search_fields = ["case__id", "resolution_id"]


@admin.register(OutboxEvent)
class OutboxEventAdmin(ReadOnlyAdmin):
    list_display = ["id", "case", "type", "status", "attempts", "next_attempt_at", "delivered_at"]
    list_filter = ["status", "type"]
    exclude = ["body"]
