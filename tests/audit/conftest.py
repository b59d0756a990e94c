from __future__ import annotations

from typing import Any

import pytest

from tests.delivery.helpers import ensure_roles


@pytest.fixture(autouse=True)
def _roles(db: Any) -> None:
    # A transactional test's flush removes the role groups the personas need.
    ensure_roles()
