from django.contrib import admin

from apps.audit.admin_mixins import AuditedModelAdmin

from .models import ApiKey, ApiSource, WorkflowType


@admin.register(WorkflowType)
class WorkflowTypeAdmin(AuditedModelAdmin):
    list_display = ["name", "display_name", "supported_versions", "callback_url"]
    search_fields = ["name", "display_name"]
    # Shown so an admin can copy it into the workflow's webhook verifier, never edited
    # here: a typo would silently break every signature. New types get a random secret.
    readonly_fields = ["signing_secret"]

    def formfield_for_dbfield(self, db_field, request, **kwargs):  # type: ignore[no-untyped-def]
        if db_field.name == "callback_url":
            # A callback URL typed without a scheme means https, as Django 6 will assume.
            kwargs["assume_scheme"] = "https"
        return super().formfield_for_dbfield(db_field, request, **kwargs)


@admin.register(ApiSource)
class ApiSourceAdmin(AuditedModelAdmin):
    list_display = ["name", "is_test", "created_at"]
    filter_horizontal = ["workflow_types"]


@admin.register(ApiKey)
class ApiKeyAdmin(AuditedModelAdmin):
    list_display = ["source", "prefix", "created_at", "revoked_at"]
    readonly_fields = ["source", "prefix", "key_hash", "created_at"]

    def has_add_permission(self, request):  # type: ignore[no-untyped-def]
        return False  # keys are issued by `manage.py create_api_key`, printed once
