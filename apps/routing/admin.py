from django.contrib import admin
from guardian.admin import GuardedModelAdmin

from apps.audit.admin_mixins import AuditedModelAdmin

from .models import ExceptionClass, Queue, Resolution, RoutingRule, WorkerProfile


@admin.register(Queue)
class QueueAdmin(AuditedModelAdmin, GuardedModelAdmin):
    list_display = ["name", "display_name", "owning_team", "service_target_minutes"]
    search_fields = ["name", "display_name"]


class ResolutionInline(admin.StackedInline):
    model = Resolution
    extra = 0


@admin.register(ExceptionClass)
class ExceptionClassAdmin(AuditedModelAdmin):
    list_display = [
        "code",
        "display_name",
        "owner_queue",
        "default_severity",
        "service_target_minutes",
    ]
    inlines = [ResolutionInline]


@admin.register(RoutingRule)
class RoutingRuleAdmin(AuditedModelAdmin):
    list_display = ["position", "name", "active", "workflow_type", "exception_class", "queue"]
    list_editable = ["active"]
    ordering = ["position"]


@admin.register(WorkerProfile)
class WorkerProfileAdmin(AuditedModelAdmin):
    list_display = ["user", "clearance", "amount_limit"]
