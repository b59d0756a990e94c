from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client


@pytest.fixture
def client_for() -> Callable[[User | None], Client]:
    """A separate browser per persona; None is the anonymous visitor."""

    def _client(user: User | None) -> Client:
        client = Client()
        if user is not None:
            client.force_login(user)
        return client

    return _client
