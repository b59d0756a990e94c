from django.apps import AppConfig


class PreferencesConfig(AppConfig):
    name = "apps.preferences"
    label = "preferences"
    default_auto_field = "django.db.models.BigAutoField"
