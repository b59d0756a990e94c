from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from apps.workflows.models import WorkflowType
from tests.delivery.helpers import ensure_roles
from tests.delivery.receiver import WebhookReceiver, running_receiver


@pytest.fixture(autouse=True)
def _roles(db: Any) -> None:
    # These tests are transactional: the flush after an earlier one removed the role groups.
    ensure_roles()


@pytest.fixture
def webhook_receiver(reference_data: None) -> Iterator[WebhookReceiver]:
    with running_receiver() as receiver:
        workflow_type = WorkflowType.objects.get(name="invoice_match")
        workflow_type.callback_url = receiver.url
        workflow_type.save(update_fields=["callback_url"])
        receiver.secret = workflow_type.signing_secret
        yield receiver
