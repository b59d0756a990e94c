"""`make test`: PostgreSQL and Redis on localhost unless told otherwise."""

import os

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/exception_desk")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/15")

from .base import *  # noqa: E402, F403

DEBUG = False
SECRET_KEY = "test-only-not-secret"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
CELERY_TASK_ALWAYS_EAGER = False
# Tests drive relays explicitly (or through a real worker); no stray eager deliveries.
EXCEPTION_DESK["DELIVERY_TIMEOUT_SECONDS"] = 5.0  # noqa: F405
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # noqa: F405 - WhiteNoise warns when missing
