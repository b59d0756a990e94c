"""`python manage.py verify_audit` as an operator runs it: exit 0 on an intact log, non-zero
naming the broken stream and event once a committed row was changed behind its back."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.db import connection

from apps.audit.models import AuditEvent
from apps.cases.services import ack_event
from tests.delivery.helpers import claim_and_decide, database_url_for_other_processes

pytestmark = pytest.mark.django_db(transaction=True)


def run_verify_audit() -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": database_url_for_other_processes(),
    }
    return subprocess.run(  # noqa: S603 (our own interpreter, fixed arguments)
        [sys.executable, "manage.py", "verify_audit"],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_manage_py_verify_audit_exits_non_zero_on_a_tampered_row(
    file_invoice_case, worker, api_source
):
    case, event = claim_and_decide(file_invoice_case(), worker)
    ack_event(source=api_source[0], event_id=event.pk)

    intact = run_verify_audit()
    assert intact.returncode == 0, intact.stderr
    assert "audit log intact" in intact.stdout

    decided = AuditEvent.objects.get(stream=case.pk, action="case.decided")
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE audit_auditevent DISABLE TRIGGER audit_event_no_update")
        try:
            cursor.execute(
                "UPDATE audit_auditevent SET reason = %s WHERE id = %s", ["rewritten", decided.pk]
            )
        finally:
            cursor.execute("ALTER TABLE audit_auditevent ENABLE TRIGGER audit_event_no_update")

    broken = run_verify_audit()

    assert broken.returncode != 0
    assert f"stream {case.pk} event {decided.sequence}" in broken.stderr
