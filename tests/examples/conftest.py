"""The LangGraph example against the real desk: the live server, the example's own
receiver on 127.0.0.1:0 (registered as the workflow types' callback URL), and a person
deciding through the pages."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from apps.workflows.models import WorkflowType
from examples.langgraph_invoice.graph import Workflows, open_workflows
from examples.langgraph_invoice.receiver import RunningReceiver, build_app, serve_in_thread
from exception_desk_client import Desk
from tests.conftest import make_user
from tests.pages.conftest import hidden_value

FORM_FIELDS = ("expected_version", "lease_token", "evidence_digest", "resolution_id")


@pytest.fixture
def desk_url(live_server: Any) -> str:
    return str(live_server.url)


@pytest.fixture
def workflows(desk_url: str, api_source: tuple[Any, str], tmp_path: Any) -> Iterator[Workflows]:
    """Both graphs, their SQLite checkpoints and the ledger in this test's directory."""
    desk = Desk(desk_url, api_source[1], retries=2, backoff=0.05, timeout=10)
    opened = open_workflows(desk=desk, state_dir=tmp_path / "state")
    yield opened
    opened.close()


@pytest.fixture
def receiver(workflows: Workflows, tmp_path: Any) -> Iterator[RunningReceiver]:
    """The example's receiver in a thread, with the desk's real signing secrets."""
    types = {
        wt.name: wt
        for wt in WorkflowType.objects.filter(name__in=["invoice_match", "refund_approval"])
    }
    app = build_app(
        workflows, {name: wt.signing_secret for name, wt in types.items()}, tmp_path / "state"
    )
    running = serve_in_thread(app)
    for name, workflow_type in types.items():
        workflow_type.callback_url = running.url_for(name)
        workflow_type.save(update_fields=["callback_url"])
    yield running
    running.stop()


@pytest.fixture
def finance_worker(reference_data: None) -> User:
    return make_user(
        "fiona", role="worker", queues={"finance_approvals": ["view_queue", "work_queue"]}
    )


@pytest.fixture
def decide_through_pages() -> Callable[..., None]:
    """A person claims the case on its page and submits the decision form, the way the
    release suite does: read the hidden concurrency fields, post the chosen resolution."""

    def _decide(
        user: User,
        case_id: str,
        resolution: str,
        fields: dict[str, str] | None = None,
        *,
        note: str = "",
        confirm: bool = False,
    ) -> None:
        browser = Client()
        browser.force_login(user)
        claimed = browser.post(reverse("cases:claim", args=[case_id]))
        assert claimed.status_code == 302, claimed.content
        page = browser.get(reverse("cases:detail", args=[case_id])).content.decode()
        form = {name: hidden_value(page, name) for name in FORM_FIELDS}
        form.update(resolution=resolution, note=note)
        for name, value in (fields or {}).items():
            form[f"field-{resolution}-{name}"] = value
        if confirm:
            form["confirm"] = "1"
        decided = browser.post(reverse("cases:decide", args=[case_id]), form)
        assert decided.status_code == 302, decided.content.decode()[:2000]

    return _decide
