"""Configuration changes are audited like case transitions: saving a queue or a workflow
type in the Django admin writes a `config:<model>` event in the same transaction."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from apps.audit.models import AuditEvent
from apps.audit.services import verify
from apps.routing.models import Queue
from apps.workflows.models import WorkflowType


@pytest.fixture
def admin_user(reference_data: None) -> User:
    return User.objects.create_superuser("ada", "ada@example.com", "pw-ada-admin")


def test_saving_a_queue_in_the_admin_writes_a_chained_config_event(client, admin_user):
    queue = Queue.objects.get(name="triage")
    earlier = AuditEvent.objects.filter(stream="config:routing.queue").count()
    client.force_login(admin_user)
    url = reverse("admin:routing_queue_change", args=[queue.pk])
    assert client.get(url).status_code == 200

    response = client.post(
        url,
        {
            "name": "triage",
            "display_name": "Triage desk",
            "owning_team": "Operations",
            "description": queue.description,
            "service_target_minutes": "45",
            "assignment_model": "fifo_pull",
            "push_concurrency_cap": "3",
            "focus_period_minutes": "0",
            "continuity_release_minutes": "60",
            "push_bands": "[]",
        },
    )

    assert response.status_code == 302, response.content.decode()[:2000]
    queue.refresh_from_db()
    assert (queue.display_name, queue.service_target_minutes) == ("Triage desk", 45)
    events = list(AuditEvent.objects.filter(stream="config:routing.queue").order_by("sequence"))
    assert len(events) == earlier + 1
    change = events[-1]
    assert change.action == "config.changed"
    assert (change.actor_kind, change.actor_label) == ("user", "ada")
    assert change.before["id"] == change.after["id"] == queue.pk
    assert (change.before["display_name"], change.after["display_name"]) == (
        "Triage",
        "Triage desk",
    )
    assert (change.before["service_target_minutes"], change.after["service_target_minutes"]) == (
        60,
        45,
    )
    assert change.sequence == events[-2].sequence + 1
    assert change.previous_hash == events[-2].hash
    assert list(verify(["config:routing.queue"])) == []


def test_a_rejected_admin_form_writes_no_config_event(client, admin_user):
    queue = Queue.objects.get(name="triage")
    before = AuditEvent.objects.filter(stream="config:routing.queue").count()
    client.force_login(admin_user)

    response = client.post(
        reverse("admin:routing_queue_change", args=[queue.pk]),
        {"name": "", "display_name": "", "service_target_minutes": "soon"},
    )

    assert response.status_code == 200  # the form again, with errors
    assert AuditEvent.objects.filter(stream="config:routing.queue").count() == before
    queue.refresh_from_db()
    assert queue.display_name == "Triage"


def test_changing_a_callback_url_is_audited_without_the_signing_secret(client, admin_user):
    workflow_type = WorkflowType.objects.get(name="invoice_match")
    client.force_login(admin_user)

    response = client.post(
        reverse("admin:workflows_workflowtype_change", args=[workflow_type.pk]),
        {
            "name": "invoice_match",
            "display_name": workflow_type.display_name,
            "supported_versions": '["16", "17"]',
            "callback_url": "https://erp.example.com/hooks/exceptions",
            "signing_secret": workflow_type.signing_secret,
        },
    )

    assert response.status_code == 302, response.content.decode()[:2000]
    change = AuditEvent.objects.filter(stream="config:workflows.workflowtype").latest("sequence")
    assert change.action == "config.changed"
    assert change.after["callback_url"] == "https://erp.example.com/hooks/exceptions"
    assert change.before["callback_url"] == ""
    assert "signing_secret" not in change.before
    assert "signing_secret" not in change.after
    assert workflow_type.signing_secret not in str(change.after)
