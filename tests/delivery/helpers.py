"""Shared by the delivery, concurrency and audit tests: role groups, a decision in one call."""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import quote

from django.conf import settings
from django.contrib.auth.models import Group

from apps.cases.models import Case, OutboxEvent
from apps.cases.services import claim_case, decide_case
from apps.cases.services.decisions import DecisionResult

# Created by a data migration; a transactional test's flush empties every table, so a test
# that runs after one must put them back before the personas are made.
ROLES = ["worker", "supervisor", "auditor", "quality_reviewer", "admin"]


def ensure_roles() -> None:
    for name in ROLES:
        Group.objects.get_or_create(name=name)


def decide(case: Case, actor: Any, *, resolution_id: str | None = None) -> DecisionResult:
    """Select PO 781 on a case the actor holds, the way the decision form submits it."""
    case.refresh_from_db()
    return decide_case(
        case_id=case.pk,
        actor=actor,
        expected_version=case.version,
        lease_token=case.lease_token,
        resolution="select_po",
        fields={"po_number": "po_781"},
        note="PO 781 carries the matching goods receipt.",
        resolution_id=resolution_id or str(uuid.uuid4()),
        evidence_digest=case.evidence_digest,
    )


def claim_and_decide(case: Case, actor: Any) -> tuple[Case, OutboxEvent]:
    claim_case(case_id=case.pk, actor=actor)
    decide(case, actor)
    case.refresh_from_db()
    return case, OutboxEvent.objects.get(case=case, type="case.decided")


def database_url_for_other_processes() -> str:
    """The database pytest-django created (test_<name>), as a URL a worker or a
    `manage.py` subprocess can connect to. Only committed rows are visible there, so callers
    run in transactional tests."""
    db = settings.DATABASES["default"]
    assert db["ENGINE"] == "django.db.backends.postgresql", "needs the PostgreSQL test database"
    credentials = quote(db.get("USER") or "postgres", safe="")
    if db.get("PASSWORD"):
        credentials += ":" + quote(db["PASSWORD"], safe="")
    host = db.get("HOST") or "127.0.0.1"
    port = db.get("PORT") or 5432
    return f"postgres://{credentials}@{host}:{port}/{db['NAME']}"
