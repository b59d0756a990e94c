from django.apps import AppConfig


class WorkflowsConfig(AppConfig):
    name = "apps.workflows"
    label = "workflows"
    default_auto_field = "django.db.models.BigAutoField"
