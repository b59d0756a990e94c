from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from apps.workflows.models import WorkflowType

from .helpers import ensure_roles
from .receiver import WebhookReceiver, running_receiver


@pytest.fixture(autouse=True)
def _roles(db: Any) -> None:
    ensure_roles()


@pytest.fixture
def webhook_receiver(reference_data: None) -> Iterator[WebhookReceiver]:
    """A live endpoint registered as invoice_match's callback URL, checking signatures
    with invoice_match's signing secret."""
    with running_receiver() as receiver:
        workflow_type = WorkflowType.objects.get(name="invoice_match")
        workflow_type.callback_url = receiver.url
        workflow_type.save(update_fields=["callback_url"])
        receiver.secret = workflow_type.signing_secret
        yield receiver
