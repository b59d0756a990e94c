"""Configuration of the rules in the Django admin. Every change is audited: the object itself
through AuditedModelAdmin, its inline rows (resolutions, skills, escalation steps), its
many-to-many choices and bulk deletions through AuditedConfigAdmin below, each as a
`config:<model>` event in the admin's transaction."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.forms.models import model_to_dict
from django.utils.translation import gettext_lazy as _
from guardian.admin import GuardedModelAdmin

from apps.audit.admin_mixins import AuditedModelAdmin
from apps.audit.services import Actor, record

from .models import (
    BusinessCalendar,
    CapacityAdjustment,
    EscalationStep,
    ExceptionClass,
    Queue,
    Resolution,
    RoutingRule,
    Skill,
    TaskType,
    TaskTypeSkill,
    WorkerProfile,
    WorkerSkill,
)


def _stream(obj: Any) -> str:
    return f"config:{obj._meta.label_lower}"


def _m2m_state(obj: Any) -> dict[str, list[Any]]:
    """The many-to-many choices of a saved object, as sorted primary keys. A relation with
    its own model (task type skills) is edited and audited as inline rows instead."""
    return {
        field.name: sorted(related.pk for related in getattr(obj, field.name).all())
        for field in obj._meta.many_to_many
        if field.remote_field.through._meta.auto_created
    }


class AuditedConfigAdmin(AuditedModelAdmin):
    """AuditedModelAdmin audits the object's own fields on save and delete. Three other
    kinds of change pass beside it, and are audited here: inline rows (saved through
    formsets), many-to-many choices (saved after save_model, so its "after" cannot see
    them) and the changelist's bulk "delete selected" (which skips delete_model)."""

    def save_related(self, request: Any, form: Any, formsets: Any, change: bool) -> None:
        before = _m2m_state(form.instance) if change else {}
        super().save_related(request, form, formsets, change)
        after = _m2m_state(form.instance)
        if after and after != before and (change or any(after.values())):
            record(
                stream=_stream(form.instance),
                actor=Actor.user(request.user),
                action="config.relations_changed",
                before={"id": form.instance.pk, **before},
                after={"id": form.instance.pk, **after},
            )

    def save_formset(self, request: Any, form: Any, formset: Any, change: bool) -> None:
        # Snapshot the stored rows before the formset writes over (or deletes) them; a
        # deleted object has lost its primary key by the time the formset reports it.
        stored = {
            inline_form.instance.pk: model_to_dict(type(inline_form.instance).objects.get(pk=pk))
            for inline_form in formset.initial_forms
            if (pk := inline_form.instance.pk) is not None and inline_form.has_changed()
        }
        deleted = [
            inline_form.instance.pk
            for inline_form in formset.initial_forms
            if inline_form.instance.pk is not None and formset._should_delete_form(inline_form)
        ]
        super().save_formset(request, form, formset, change)
        actor = Actor.user(request.user)
        stream = f"config:{formset.model._meta.label_lower}"
        for obj in formset.new_objects:
            record(
                stream=stream,
                actor=actor,
                action="config.created",
                after={"id": obj.pk, **model_to_dict(obj)},
            )
        for obj, _changed_fields in formset.changed_objects:
            record(
                stream=stream,
                actor=actor,
                action="config.changed",
                before={"id": obj.pk, **stored.get(obj.pk, {})},
                after={"id": obj.pk, **model_to_dict(obj)},
            )
        for pk in deleted:
            record(
                stream=stream,
                actor=actor,
                action="config.deleted",
                before={"id": pk, **stored.get(pk, {})},
            )

    def delete_queryset(self, request: Any, queryset: QuerySet[Any]) -> None:
        # One audited deletion per object, in the admin's transaction.
        for obj in queryset:
            self.delete_model(request, obj)


# --- Calendars, skills, task types ------------------------------------------------------


@admin.register(BusinessCalendar)
class BusinessCalendarAdmin(AuditedConfigAdmin):
    list_display = ["name", "time_zone", "holiday_country", "holiday_subdivision"]
    search_fields = ["name"]


@admin.register(Skill)
class SkillAdmin(AuditedConfigAdmin):
    list_display = ["code", "name"]
    search_fields = ["code", "name"]


class TaskTypeSkillInline(admin.TabularInline):
    model = TaskTypeSkill
    extra = 0
    verbose_name = _("required skill")
    verbose_name_plural = _("required skills")


@admin.register(TaskType)
class TaskTypeAdmin(AuditedConfigAdmin):
    list_display = [
        "workflow_type",
        "exception_class",
        "workload_weight",
        "data_classification",
        "language",
        "jurisdiction",
        "authority_by_amount",
    ]
    list_filter = ["workflow_type", "exception_class", "data_classification"]
    inlines = [TaskTypeSkillInline]


# --- Queues, classes, rules --------------------------------------------------------------


@admin.register(Queue)
class QueueAdmin(AuditedConfigAdmin, GuardedModelAdmin):
    list_display = [
        "name",
        "display_name",
        "owning_team",
        "assignment_model",
        "service_target_minutes",
        "calendar",
        "overflow_queue",
    ]
    list_filter = ["assignment_model", "owning_team"]
    search_fields = ["name", "display_name"]
    filter_horizontal = ["accepted_task_types"]
    fieldsets = [
        (None, {"fields": ["name", "display_name", "owning_team", "description"]}),
        (
            _("Service objective and hours"),
            {"fields": ["service_target_minutes", "calendar", "overflow_queue", "continuity_note"]},
        ),
        (_("Accepted work"), {"fields": ["accepted_task_types"]}),
        (
            _("Assignment"),
            {
                "fields": [
                    "assignment_model",
                    "push_bands",
                    "push_concurrency_cap",
                    "focus_period_minutes",
                    "continuity_release_minutes",
                ]
            },
        ),
    ]


class ResolutionInline(admin.StackedInline):
    model = Resolution
    extra = 0


class EscalationStepInline(admin.TabularInline):
    model = EscalationStep
    extra = 0
    ordering = ["level"]


@admin.register(ExceptionClass)
class ExceptionClassAdmin(AuditedConfigAdmin):
    list_display = [
        "code",
        "display_name",
        "owner_queue",
        "default_severity",
        "service_target_minutes",
        "control_owner",
    ]
    inlines = [ResolutionInline, EscalationStepInline]


@admin.register(RoutingRule)
class RoutingRuleAdmin(AuditedConfigAdmin):
    list_display = [
        "position",
        "name",
        "active",
        "workflow_type",
        "exception_class",
        "queue",
        "version",
    ]
    list_editable = ["active"]
    ordering = ["position"]
    readonly_fields = ["version"]

    def save_model(self, request: Any, obj: RoutingRule, form: Any, change: bool) -> None:
        # Cases store the (rule id, version) that routed them, so a changed rule is a new
        # version: an old case still says which wording of the rule matched it.
        if change and form.has_changed():
            obj.version = RoutingRule.objects.get(pk=obj.pk).version + 1
        super().save_model(request, obj, form, change)


# --- Worker profiles and capacity --------------------------------------------------------


class WorkerSkillInline(admin.TabularInline):
    model = WorkerSkill
    extra = 0


class CapacityAdjustmentInline(admin.TabularInline):
    """Shown for context only: adjustments are made on the supervisor board (audited,
    with a reason and an expiry) and lapse by themselves."""

    model = CapacityAdjustment
    extra = 0
    can_delete = False
    fields = ["capacity", "reason", "actor", "created_at", "expires_at", "ended_at"]
    readonly_fields = fields
    ordering = ["-created_at"]
    verbose_name_plural = _("capacity adjustments (made on the supervisor board)")

    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False


@admin.register(WorkerProfile)
class WorkerProfileAdmin(AuditedConfigAdmin):
    list_display = ["user", "clearance", "amount_limit", "capacity", "on_shift"]
    list_filter = ["on_shift", "clearance"]
    search_fields = ["user__username"]
    inlines = [WorkerSkillInline, CapacityAdjustmentInline]
    # Going on or off shift hands cases off (services.transfers): it is done from the
    # queue page, not by ticking a box here. The assignment times are the sweeps' record.
    readonly_fields = ["on_shift", "last_assigned_at", "last_pushed_at"]
    fieldsets = [
        (None, {"fields": ["user", "clearance", "amount_limit", "capacity"]}),
        (
            _("Qualifications"),
            {"fields": ["certifications", "languages", "jurisdictions"]},
        ),
        (
            _("Shift"),
            {"fields": ["on_shift", "shift_ends_at", "last_assigned_at", "last_pushed_at"]},
        ),
    ]


@admin.register(CapacityAdjustment)
class CapacityAdjustmentAdmin(admin.ModelAdmin):
    """A read-only list: the service writes these (and their audit events); the admin
    never edits one, so its history stays what the supervisor decided."""

    list_display = [
        "profile",
        "capacity",
        "reason",
        "actor",
        "created_at",
        "expires_at",
        "ended_at",
    ]
    list_filter = ["ended_at"]
    search_fields = ["profile__user__username", "reason"]
    date_hierarchy = "created_at"

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return False
