from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from apps.workflows.models import WorkflowType
from tests.delivery.receiver import WebhookReceiver, running_receiver


@pytest.fixture
def api(api_source: tuple[Any, str]) -> APIClient:
    """The workflow engine: an API client holding the source's key."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_source[1]}")
    return client


@pytest.fixture
def browser_of() -> Callable[[Any], Client]:
    def _client(user: Any) -> Client:
        client = Client()
        client.force_login(user)
        return client

    return _client


@pytest.fixture
def workflow_endpoint(reference_data: None) -> Iterator[WebhookReceiver]:
    """The invoice workflow's real webhook endpoint on 127.0.0.1, checking signatures."""
    with running_receiver() as receiver:
        workflow_type = WorkflowType.objects.get(name="invoice_match")
        workflow_type.callback_url = receiver.url
        workflow_type.save(update_fields=["callback_url"])
        receiver.secret = workflow_type.signing_secret
        yield receiver
