"""`make run`: a developer machine. Debug on, a fixed development secret."""

from .base import *  # noqa: F403
from .base import env_bool

DEBUG = env_bool("DEBUG", True)
SECRET_KEY = SECRET_KEY or "dev-only-not-secret-exception-desk"  # noqa: F405
EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
