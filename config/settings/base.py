"""Settings shared by every environment, read from the environment.

DATABASE_URL  PostgreSQL (or any dj-database-url URL); unset -> embedded SQLite (WAL).
REDIS_URL     broker and cache; unset -> Celery's server-less filesystem broker, local cache.
CELERY_BROKER_URL overrides the broker only.
SECRET_KEY, DEBUG, ALLOWED_HOSTS as usual.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from celery.schedules import schedule

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(os.environ.get("EXCEPTION_DESK_VAR_DIR", BASE_DIR / "var"))


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


SECRET_KEY = os.environ.get("SECRET_KEY", "")
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "guardian",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "apps.audit",
    "apps.workflows",
    "apps.routing",
    "apps.cases",
    "apps.preferences",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database ---------------------------------------------------------------
# PostgreSQL is the system of record; SQLite is the embedded default for `make run`
# on a bare machine. IMMEDIATE transactions take the write lock up front so two
# writers queue on busy_timeout instead of failing with "database is locked".
SQLITE_OPTIONS = {
    "transaction_mode": "IMMEDIATE",
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA busy_timeout=20000;",
}
if os.environ.get("DATABASE_URL"):
    DATABASES = {"default": dj_database_url.parse(os.environ["DATABASE_URL"], conn_max_age=60)}
else:
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": VAR_DIR / "exception_desk.sqlite3",
            "OPTIONS": SQLITE_OPTIONS,
        }
    }
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"].setdefault("OPTIONS", {}).update(SQLITE_OPTIONS)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Cache, broker ------------------------------------------------------------
REDIS_URL = os.environ.get("REDIS_URL", "")
if REDIS_URL:
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or REDIS_URL or "filesystem://"
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {}
if CELERY_BROKER_URL.startswith("filesystem://"):
    _broker_dir = VAR_DIR / "broker"
    for sub in ("queue", "processed", "control"):
        (_broker_dir / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),
    }
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = 60
CELERY_TASK_SOFT_TIME_LIMIT = 50
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
# The sweeps are the safety net: an outbox row whose enqueue was lost, a lease whose
# holder closed the tab, a wait that timed out. Each is idempotent and safe to overlap.
CELERY_BEAT_SCHEDULE = {
    "expire-leases": {"task": "cases.expire_leases", "schedule": schedule(30.0)},
    "relay-due-events": {"task": "cases.relay_due_events", "schedule": schedule(15.0)},
    "expire-waits": {"task": "cases.expire_waits", "schedule": schedule(60.0)},
    "refresh-priorities": {"task": "cases.refresh_priorities", "schedule": schedule(60.0)},
    "escalate-due-cases": {"task": "cases.escalate_due_cases", "schedule": schedule(60.0)},
    "expire-overrides": {"task": "cases.expire_overrides", "schedule": schedule(60.0)},
    "lapse-capacity-adjustments": {
        "task": "cases.lapse_capacity_adjustments",
        "schedule": schedule(60.0),
    },
    "end-shifts": {"task": "cases.end_shifts", "schedule": schedule(60.0)},
    "assign-pushed-cases": {"task": "cases.assign_pushed_cases", "schedule": schedule(30.0)},
    "check-capacity-alerts": {"task": "cases.check_capacity_alerts", "schedule": schedule(60.0)},
}

# --- Auth ---------------------------------------------------------------------
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "guardian.backends.ObjectPermissionBackend",
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "cases:queue"
LOGOUT_REDIRECT_URL = "login"
ANONYMOUS_USER_NAME = None  # guardian: no anonymous user row

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# --- I18N ---------------------------------------------------------------------
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Static -------------------------------------------------------------------
STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# --- REST API -----------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["apps.workflows.authentication.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["apps.workflows.authentication.IsApiSource"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "EXCEPTION_HANDLER": "apps.cases.api.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Exception Desk API",
    "DESCRIPTION": "File exception cases, append evidence, learn decisions.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # No CDN at run time: Swagger UI's files ship in drf-spectacular-sidecar.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- Exception Desk -----------------------------------------------------------
EXCEPTION_DESK = {
    "LEASE_SECONDS": int(os.environ.get("LEASE_SECONDS", "900")),
    "MAX_BODY_BYTES": int(os.environ.get("MAX_BODY_BYTES", str(1024 * 1024))),
    "MAX_EVIDENCE_ITEM_BYTES": int(os.environ.get("MAX_EVIDENCE_ITEM_BYTES", str(256 * 1024))),
    "MAX_EVIDENCE_ITEMS": int(os.environ.get("MAX_EVIDENCE_ITEMS", "50")),
    "DELIVERY_MAX_ATTEMPTS": int(os.environ.get("DELIVERY_MAX_ATTEMPTS", "8")),
    "DELIVERY_BASE_DELAY_SECONDS": float(os.environ.get("DELIVERY_BASE_DELAY_SECONDS", "10")),
    "DELIVERY_MAX_DELAY_SECONDS": float(os.environ.get("DELIVERY_MAX_DELAY_SECONDS", "3600")),
    "DELIVERY_TIMEOUT_SECONDS": float(os.environ.get("DELIVERY_TIMEOUT_SECONDS", "10")),
    "QUEUE_PAGE_SIZE": 25,
    # Absolute base for links in e-mails, e.g. https://desk.example.com (empty: relative).
    "SITE_URL": os.environ.get("SITE_URL", "").rstrip("/"),
}
# Serve /demo/webhooks/<type>/ (a signature-checking receiver for the living demo).
DEMO_RECEIVER = env_bool("DEMO_RECEIVER", False)
DATA_UPLOAD_MAX_MEMORY_SIZE = EXCEPTION_DESK["MAX_BODY_BYTES"]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "INFO"},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
