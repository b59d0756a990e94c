"""The demo webhook receiver stands in for a workflow engine in `make run`; production
(DEBUG off, DEMO_RECEIVER unset) does not route it. Its signature checks are exercised
over HTTP in tests/smoke/test_embedded_default.py."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from django.test import RequestFactory
from django.urls import Resolver404, resolve
from standardwebhooks.webhooks import Webhook

from apps.workflows.models import WorkflowType
from apps.workflows.views import demo_webhook_receiver


def signed(secret: str, body: str, event_id: str = "evt_test") -> dict[str, str]:
    now = datetime.now(tz=UTC)
    return {
        "HTTP_WEBHOOK_ID": event_id,
        "HTTP_WEBHOOK_TIMESTAMP": str(int(now.timestamp())),
        "HTTP_WEBHOOK_SIGNATURE": Webhook(secret).sign(event_id, now, body),
    }


def test_receiver_is_not_routed_when_debug_is_off():
    with pytest.raises(Resolver404):
        resolve("/demo/webhooks/invoice_match/")


@pytest.mark.django_db
def test_receiver_answers_204_to_a_signed_event_and_400_to_a_tampered_one():
    endpoint = WorkflowType.objects.create(
        name="invoice_match", display_name="Invoice matching", supported_versions=["17"]
    )
    body = json.dumps({"id": "evt_test", "type": "case.decided", "data": {"case_id": "exc_1"}})
    factory = RequestFactory()
    headers = signed(endpoint.signing_secret, body)
    request = factory.post("/", data=body, content_type="application/json", **headers)
    assert demo_webhook_receiver(request, workflow_type="invoice_match").status_code == 204
    tampered = body.replace("exc_1", "exc_2")
    request = factory.post("/", data=tampered, content_type="application/json", **headers)
    assert demo_webhook_receiver(request, workflow_type="invoice_match").status_code == 400
    other_secret = WorkflowType.objects.create(name="refund_approval", display_name="Refunds")
    request = factory.post(
        "/", data=body, content_type="application/json", **signed(other_secret.signing_secret, body)
    )
    assert demo_webhook_receiver(request, workflow_type="invoice_match").status_code == 400
