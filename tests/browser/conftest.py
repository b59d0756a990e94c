"""The browser harness: Debian's Chromium driven by Playwright against pytest-django's
live server, with an axe-core scan (axe-playwright-python bundles axe offline).

One live server and one browser per session; each test gets a fresh context (cookies,
storage and focus history start empty). A later page gets the same checks
(helpers in harness.py) by:

    page = page_for(user)                      # a logged-in context, or page_for(None)
    page.goto(url("cases:queue"))
    assert_no_axe_violations(page)             # WCAG 2.0/2.1/2.2 A and AA, zero violations
    capture_widths(page, "queue-full")         # 1280 px and 320 px screenshots + reflow check

Keyboard journeys use `tab_to(page, locator)` and `assert_focus_visible(page)`; HTMX
swaps are checked with `expect_focus_on_region(page, heading)` and `live_region(page)`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connections
from django.test import Client
from django.utils.dateparse import parse_datetime
from playwright.sync_api import BrowserContext, Page

from apps.cases.models import Case, OutboxEvent
from apps.cases.services import append_evidence, claim_case
from apps.cases.services.delivery import _record_attempt

from .factories import decide_select_po
from .harness import VIEWPORT

# Sync Playwright keeps an asyncio loop registered on this thread, so Django would refuse
# ORM calls from the test body (fixtures and assertions read and write the database while
# the page is open). Nothing here runs Django inside that loop; the server has its own
# thread. Django reads the variable at every call, so setting it at import is enough. It
# stays set for the whole run on purpose: the loop stays registered until the session
# ends, and pytest-django runs the tests without a database after the live-server ones.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    # pytest-playwright's --browser-channel cannot find Debian's build; point at it
    # directly. Never `playwright install`: the suite uses the system's Chromium.
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ],
    }


@pytest.fixture(scope="session", autouse=True)
def _close_connections_opened_under_playwright(playwright: Any) -> Iterator[None]:
    """While Playwright's loop is registered on this thread, Django keeps the thread's
    database connection in context-local storage, apart from the plain thread-local one
    pytest-django closes before dropping the test database. Close it while the loop is
    still there (this fixture starts after `playwright`, so it ends before it), or the
    database cannot be dropped at the end of the run."""
    yield
    connections.close_all()


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict[str, Any], live_server: Any) -> dict[str, Any]:
    # base_url makes page.goto("/…") hit the live server; depending on live_server here
    # also gives every test that opens a page the transactional database it needs.
    return {
        **browser_context_args,
        "base_url": live_server.url,
        "viewport": VIEWPORT,
        "locale": "en-GB",
        "timezone_id": "UTC",
    }


@pytest.fixture
def page_for(
    new_context: Callable[..., BrowserContext], live_server: Any
) -> Callable[[User | None], Page]:
    """A page in a fresh context, logged in as `user` (None: anonymous). Logging in through
    the form is the journey tests' business; here the session cookie is set directly.
    pytest-playwright's new_context closes the contexts and keeps its --tracing and
    --screenshot options working."""

    def _page(user: User | None) -> Page:
        context = new_context()
        if user is not None:
            client = Client()
            client.force_login(user)
            session = client.cookies[settings.SESSION_COOKIE_NAME].value
            context.add_cookies(
                [{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}]
            )
        return context.new_page()

    return _page


@pytest.fixture
def failed_delivery_case(
    file_invoice_case: Callable[..., Case], settings: Any
) -> Callable[[User], Case]:
    """A case decided by `decider` whose webhook kept failing until the retry budget ran
    out: what the recovery queue lists. The attempts are recorded as a failing relay
    would record them; no receiver is needed for the page."""
    budget = 2
    settings.EXCEPTION_DESK = {**settings.EXCEPTION_DESK, "DELIVERY_MAX_ATTEMPTS": budget}

    def _make(decider: User) -> Case:
        case = claim_case(case_id=file_invoice_case().pk, actor=decider)
        decide_select_po(case, decider)
        event = OutboxEvent.objects.get(case=case, type="case.decided")
        outcome = ""
        for _ in range(budget + 1):
            outcome = _record_attempt(event.pk, 503, "HTTP 503", 5)
            if outcome == "failed":
                break
        assert outcome == "failed"
        case.refresh_from_db()
        return case

    return _make


@pytest.fixture
def workflow_adds_evidence(api_source: tuple[Any, str]) -> Callable[[Case], Case]:
    """The workflow appends evidence behind an open page: the case's version and evidence
    digest move on, so a form loaded before is stale and its submit gets a 409."""

    def _add(case: Case) -> Case:
        return append_evidence(
            source=api_source[0],
            case_id=case.pk,
            items=[
                {
                    "ref": "po_812",
                    "source": "erp",
                    "source_timestamp": parse_datetime("2026-08-31T15:00:00Z"),
                    "classification": "internal",
                    "content": {"po_number": "PO-812"},
                }
            ],
        )

    return _add
