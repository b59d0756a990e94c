"""Every URL issue 3 adds × every persona: the server enforces scope on each page and each
POST, not the buttons. Board and its actions: supervisors only (403 for anyone else logged
in). Supervisor actions on a case: other scope → 404, in scope without supervise_queue →
403. Worker actions: no work_queue → 403. Anonymous → login; wrong method → 405. A refused
request changes nothing (no audit event, transfer, adjustment or notification change).

tests/pages/test_permission_matrix.py covers the lifecycle issue's URLs and delegates the
names listed here to this matrix; together they cover every URL of apps/cases/urls.py."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.urls import URLPattern, reverse
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.cases import urls as case_urls
from apps.cases.models import Case, Notification, Transfer
from apps.cases.services import claim_case
from apps.routing.models import CapacityAdjustment

PERSONAS = ("supervisor", "worker", "viewer", "outsider", "anonymous")
LOGIN = "login"


@dataclass
class Prepared:
    url: str
    data: dict[str, str]
    case: Case | None = None


@dataclass
class Route:
    name: str
    method: str
    prepare: Callable[[Any, User | None], Prepared]
    expected: dict[str, int | str]


def _expiry() -> str:
    return timezone.localtime(timezone.now() + timedelta(hours=4)).strftime("%Y-%m-%dT%H:%M")


def _case_url(name: str, case: Case) -> str:
    return reverse(f"cases:{name}", args=[case.pk])


def prepare_board(ctx: Any, actor: User | None) -> Prepared:
    ctx.file_invoice_case()
    return Prepared(reverse("cases:board"), {})


def prepare_board_transfer(ctx: Any, actor: User | None) -> Prepared:
    case = ctx.file_invoice_case()
    data = {"case": case.pk, "to_queue": "finance_approvals", "reason": "needs an approver"}
    return Prepared(reverse("cases:board_transfer"), data, case)


def prepare_board_priority(ctx: Any, actor: User | None) -> Prepared:
    case = ctx.file_invoice_case()
    data = {"case": case.pk, "band": "P1", "reason": "CFO asked", "expires_at": _expiry()}
    return Prepared(reverse("cases:board_priority"), data, case)


def prepare_board_capacity(ctx: Any, actor: User | None) -> Prepared:
    data = {
        "worker": str(ctx.worker.pk),
        "capacity": "2",
        "reason": "training afternoon",
        "expires_at": _expiry(),
    }
    return Prepared(reverse("cases:board_capacity"), data)


def prepare_board_absence(ctx: Any, actor: User | None) -> Prepared:
    case = claim_case(case_id=ctx.file_invoice_case().pk, actor=ctx.worker)
    return Prepared(reverse("cases:board_absence"), {"worker": str(ctx.worker.pk)}, case)


def prepare_transfer(ctx: Any, actor: User | None) -> Prepared:
    case = ctx.file_invoice_case()
    data = {"to_queue": "finance_approvals", "reason": "needs an approver"}
    return Prepared(_case_url("transfer", case), data, case)


def prepare_reroute(ctx: Any, actor: User | None) -> Prepared:
    case = ctx.file_invoice_case()
    data = {"to_queue": "finance_approvals", "reason": "a refund, not an invoice"}
    return Prepared(_case_url("reroute", case), data, case)


def prepare_override_priority(ctx: Any, actor: User | None) -> Prepared:
    case = ctx.file_invoice_case()
    data = {"band": "P1", "reason": "CFO asked", "expires_at": _expiry()}
    return Prepared(_case_url("override_priority", case), data, case)


def prepare_adjust_due(ctx: Any, actor: User | None) -> Prepared:
    case = ctx.file_invoice_case()
    later = timezone.localtime(case.due_at + timedelta(hours=6)).strftime("%Y-%m-%dT%H:%M")
    data = {"due_at": later, "reason": "vendor is closed until tomorrow"}
    return Prepared(_case_url("adjust_due", case), data, case)


def prepare_skip(ctx: Any, actor: User | None) -> Prepared:
    """The actor holds the case when they may work it (a skip passes on a held case)."""
    holder = actor if actor is not None and actor.pk in ctx.queue_workers else ctx.worker
    case = claim_case(case_id=ctx.file_invoice_case().pk, actor=holder)
    return Prepared(_case_url("skip", case), {"reason": "outside_expertise"}, case)


def prepare_next_case(ctx: Any, actor: User | None) -> Prepared:
    case = ctx.file_invoice_case()
    return Prepared(reverse("cases:next_case"), {}, case)


def prepare_shift_page(ctx: Any, actor: User | None) -> Prepared:
    return Prepared(reverse("cases:shift"), {})


def prepare_shift_toggle(ctx: Any, actor: User | None) -> Prepared:
    return Prepared(reverse("cases:shift"), {"on_shift": "off"})


def _notification_for(ctx: Any, actor: User | None) -> Notification:
    return Notification.objects.create(
        user=actor or ctx.worker,
        kind="escalation.reminder",
        message="invoice_8401 is due in 30 minutes",
        created_at=timezone.now(),
    )


def prepare_notifications(ctx: Any, actor: User | None) -> Prepared:
    _notification_for(ctx, actor)
    return Prepared(reverse("cases:notifications"), {})


def prepare_mark_all_read(ctx: Any, actor: User | None) -> Prepared:
    _notification_for(ctx, actor)
    return Prepared(reverse("cases:mark_all_read"), {})


def prepare_mark_read(ctx: Any, actor: User | None) -> Prepared:
    notification = _notification_for(ctx, actor)
    return Prepared(reverse("cases:mark_read", args=[notification.pk]), {})


def _expect(supervisor: int, worker: int, viewer: int, outsider: int) -> dict[str, int | str]:
    return {
        "supervisor": supervisor,
        "worker": worker,
        "viewer": viewer,
        "outsider": outsider,
        "anonymous": LOGIN,
    }


ROUTES = [
    # The board is a supervisor tool: anyone else logged in gets 403, not an empty board.
    Route("board", "get", prepare_board, _expect(200, 403, 403, 403)),
    Route("board_transfer", "post", prepare_board_transfer, _expect(302, 403, 403, 403)),
    Route("board_priority", "post", prepare_board_priority, _expect(302, 403, 403, 403)),
    Route("board_capacity", "post", prepare_board_capacity, _expect(302, 403, 403, 403)),
    Route("board_absence", "post", prepare_board_absence, _expect(302, 403, 403, 403)),
    # On a case: the worker and viewer see it but do not supervise (403); outsider 404.
    Route("transfer", "post", prepare_transfer, _expect(302, 403, 403, 404)),
    Route("reroute", "post", prepare_reroute, _expect(302, 403, 403, 404)),
    Route("override_priority", "post", prepare_override_priority, _expect(302, 403, 403, 404)),
    Route("adjust_due", "post", prepare_adjust_due, _expect(302, 403, 403, 404)),
    Route("skip", "post", prepare_skip, _expect(302, 302, 403, 404)),
    # Worker tools: the outsider works a queue (security review), the viewer none.
    Route("next_case", "post", prepare_next_case, _expect(302, 302, 403, 302)),
    Route("shift", "get", prepare_shift_page, _expect(200, 200, 403, 200)),
    Route("shift", "post", prepare_shift_toggle, _expect(302, 302, 403, 302)),
    # Everyone logged in has their own notifications.
    Route("notifications", "get", prepare_notifications, _expect(200, 200, 200, 200)),
    Route("mark_all_read", "post", prepare_mark_all_read, _expect(302, 302, 302, 302)),
    Route("mark_read", "post", prepare_mark_read, _expect(302, 302, 302, 302)),
]
ROUTE_NAMES = {route.name for route in ROUTES}
IDS = [f"{route.name}-{route.method}" for route in ROUTES]


class Context:
    def __init__(self, request: pytest.FixtureRequest) -> None:
        self.worker = request.getfixturevalue("worker")
        self.supervisor = request.getfixturevalue("supervisor")
        self.file_invoice_case = request.getfixturevalue("file_invoice_case")
        self.queue_workers = {self.worker.pk, self.supervisor.pk}


def footprint() -> tuple[int, int, int, int]:
    """What any accepted action leaves behind: audit events, transfers, capacity
    adjustments, read notifications."""
    return (
        AuditEvent.objects.count(),
        Transfer.objects.count(),
        CapacityAdjustment.objects.count(),
        Notification.objects.filter(read_at__isnull=False).count(),
    )


def test_this_matrix_and_the_pages_matrix_together_name_every_url_of_the_cases_app():
    from tests.pages.test_permission_matrix import ROUTES as PAGE_ROUTES

    named = {p.name for p in case_urls.urlpatterns if isinstance(p, URLPattern)}
    page_names = {route.name for route in PAGE_ROUTES}

    assert named - page_names == ROUTE_NAMES
    assert not ROUTE_NAMES & page_names


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize("route", ROUTES, ids=IDS)
def test_each_persona_gets_the_answer_its_scope_allows(
    route: Route, persona: str, request: pytest.FixtureRequest, client_for: Any
):
    ctx = Context(request)
    for name in ("viewer", "outsider"):
        request.getfixturevalue(name)
    actor = None if persona == "anonymous" else request.getfixturevalue(persona)
    prepared = route.prepare(ctx, actor)
    version_before = (
        Case.objects.values_list("version", flat=True).get(pk=prepared.case.pk)
        if prepared.case
        else None
    )
    before = footprint()
    client = client_for(actor)

    response = getattr(client, route.method)(prepared.url, prepared.data)

    expected = route.expected[persona]
    if expected == LOGIN:
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login") + "?next=")
    else:
        assert response.status_code == expected, response.content[:600]
    if expected in {403, 404, LOGIN}:
        assert footprint() == before, "a refused request left a trace"
        if prepared.case is not None:
            after = Case.objects.values_list("version", flat=True).get(pk=prepared.case.pk)
            assert after == version_before, "a refused request changed the case"
    elif route.method == "post" and route.name != "next_case":
        assert footprint() != before, "an accepted action changed nothing"


@pytest.mark.parametrize("route", ROUTES, ids=IDS)
def test_the_wrong_method_is_refused_with_405(
    route: Route, request: pytest.FixtureRequest, supervisor: User, client_for: Any
):
    ctx = Context(request)
    prepared = route.prepare(ctx, supervisor)
    # The shift page answers GET and POST; anything else is wrong for it.
    wrong = {"get": "post", "post": "get"}[route.method] if route.name != "shift" else "put"
    before = footprint()

    response = getattr(client_for(supervisor), wrong)(prepared.url)

    assert response.status_code == 405
    assert footprint() == before


def test_a_supervisor_of_one_queue_may_not_steer_a_case_they_only_see(
    security_case, client_for, reference_data
):
    """Visible but not supervised is 403 for every supervisor action, on the case and on
    the board: scope is per queue, not per role."""
    from guardian.shortcuts import assign_perm

    from apps.routing.models import Queue
    from tests.conftest import make_user

    lead = make_user(
        "lena",
        role="supervisor",
        queues={"accounts_payable": ["view_queue", "work_queue", "supervise_queue"]},
    )
    assign_perm("routing.view_queue", lead, Queue.objects.get(name="security_review"))
    case = security_case()
    client = client_for(lead)
    before = footprint()

    answers = [
        client.post(_case_url("transfer", case), {"to_queue": "triage", "reason": "x"}),
        client.post(_case_url("reroute", case), {"to_queue": "triage", "reason": "x"}),
        client.post(
            _case_url("override_priority", case),
            {"band": "P1", "reason": "x", "expires_at": _expiry()},
        ),
        client.post(_case_url("adjust_due", case), {"due_at": _expiry(), "reason": "x"}),
        client.post(
            reverse("cases:board_transfer"),
            {"case": case.pk, "to_queue": "accounts_payable", "reason": "x"},
        ),
        client.post(
            reverse("cases:board_priority"),
            {"case": case.pk, "band": "P1", "reason": "x", "expires_at": _expiry()},
        ),
    ]

    assert [answer.status_code for answer in answers] == [403] * 6
    assert footprint() == before


def test_someone_else_s_notification_cannot_be_marked_read(worker, worker2, client_for):
    theirs = Notification.objects.create(
        user=worker2, kind="escalation.reminder", message="yours", created_at=timezone.now()
    )

    response = client_for(worker).post(reverse("cases:mark_read", args=[theirs.pk]))

    assert response.status_code == 404
    theirs.refresh_from_db()
    assert theirs.read_at is None


def test_capacity_of_a_worker_outside_the_supervised_queues_cannot_be_adjusted(
    client_for, outsider, reference_data
):
    from tests.conftest import make_user

    lead = make_user(
        "lena",
        role="supervisor",
        queues={"accounts_payable": ["view_queue", "work_queue", "supervise_queue"]},
    )
    before = footprint()

    response = client_for(lead).post(
        reverse("cases:board_capacity"),
        {"worker": str(outsider.pk), "capacity": "1", "reason": "x", "expires_at": _expiry()},
    )

    # The outsider is not among the choices: the form refuses, nothing is adjusted.
    assert response.status_code == 422
    assert "Select a valid choice" in response.content.decode()
    assert footprint() == before
