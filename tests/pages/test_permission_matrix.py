"""Every URL of the worker pages × every persona: the server enforces scope on each page and
each POST, not the buttons. Queue holder → ok; other queue → 404; view-only → 403 on
actions; anonymous → login; wrong method → 405. A denied request changes nothing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.urls import URLPattern, reverse

from apps.cases import urls as case_urls
from apps.cases.models import Case
from apps.cases.services import claim_case, request_information
from apps.preferences.models import SavedView

from .conftest import decision_payload

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


def _holder(ctx: Any, actor: User | None) -> User:
    """Who holds the lease in a scenario: the actor when they may work, else the worker."""
    if actor is not None and actor.pk in {ctx.worker.pk, ctx.supervisor.pk}:
        return actor
    return ctx.worker


def _claimed(ctx: Any, actor: User | None) -> Case:
    return claim_case(case_id=ctx.file_invoice_case().pk, actor=_holder(ctx, actor))


def _case_url(name: str, case: Case) -> str:
    return reverse(f"cases:{name}", args=[case.pk])


def prepare_queue(ctx: Any, actor: User | None) -> Prepared:
    return Prepared(reverse("cases:queue"), {})


def prepare_save_view(ctx: Any, actor: User | None) -> Prepared:
    return Prepared(reverse("cases:save_view"), {"name": "Mine", "querystring": "mine=1"})


def prepare_delete_view(ctx: Any, actor: User | None) -> Prepared:
    owner = actor or ctx.worker
    view = SavedView.objects.create(user=owner, name="Old", querystring="state=open")
    return Prepared(reverse("cases:delete_view", args=[view.pk]), {})


def prepare_detail(ctx: Any, actor: User | None) -> Prepared:
    case = ctx.file_invoice_case()
    return Prepared(_case_url("detail", case), {}, case)


def prepare_claim(ctx: Any, actor: User | None) -> Prepared:
    case = ctx.file_invoice_case()
    return Prepared(_case_url("claim", case), {}, case)


def prepare_release(ctx: Any, actor: User | None) -> Prepared:
    case = _claimed(ctx, actor)
    return Prepared(_case_url("release", case), {"lease_token": case.lease_token}, case)


def prepare_renew(ctx: Any, actor: User | None) -> Prepared:
    case = _claimed(ctx, actor)
    return Prepared(_case_url("renew", case), {"lease_token": case.lease_token}, case)


def prepare_draft(ctx: Any, actor: User | None) -> Prepared:
    case = ctx.file_invoice_case()
    data = {"resolution": "select_po", "field-select_po-po_number": "po_799", "note": "checking"}
    return Prepared(_case_url("draft", case), data, case)


def prepare_decide(ctx: Any, actor: User | None) -> Prepared:
    case = _claimed(ctx, actor)
    return Prepared(_case_url("decide", case), decision_payload(case), case)


def prepare_request_information(ctx: Any, actor: User | None) -> Prepared:
    case = _claimed(ctx, actor)
    data = {
        "expected_version": str(case.version),
        "lease_token": case.lease_token,
        "question": "Which PO did the buyer approve?",
        "asked_of": "buyer@acme.example",
    }
    return Prepared(_case_url("request_information", case), data, case)


def prepare_record_answer(ctx: Any, actor: User | None) -> Prepared:
    case = _claimed(ctx, actor)
    case = request_information(
        case_id=case.pk,
        actor=_holder(ctx, actor),
        expected_version=case.version,
        lease_token=case.lease_token,
        question="Which PO?",
        asked_of="buyer",
    )
    return Prepared(_case_url("record_answer", case), {"answer": "PO 781"}, case)


def prepare_reconcile(ctx: Any, actor: User | None) -> Prepared:
    case = ctx.file_invoice_case(side_effect_state="unknown")
    data = {
        "expected_version": str(case.version),
        "state": "confirmed_applied",
        "provider_record": "erp-posting-5521",
    }
    return Prepared(_case_url("reconcile", case), data, case)


def prepare_recovery(ctx: Any, actor: User | None) -> Prepared:
    return Prepared(reverse("cases:recovery"), {})


def prepare_retry_delivery(ctx: Any, actor: User | None) -> Prepared:
    case = ctx.failed_delivery_case(ctx.worker)
    return Prepared(_case_url("retry_delivery", case), {}, case)


def prepare_audit_history(ctx: Any, actor: User | None) -> Prepared:
    ctx.file_invoice_case()
    return Prepared(reverse("cases:audit_history"), {})


def prepare_audit_export(ctx: Any, actor: User | None) -> Prepared:
    ctx.file_invoice_case()
    return Prepared(reverse("cases:audit_export"), {})


def _expect(supervisor: int, worker: int, viewer: int, outsider: int) -> dict[str, int | str]:
    return {
        "supervisor": supervisor,
        "worker": worker,
        "viewer": viewer,
        "outsider": outsider,
        "anonymous": LOGIN,
    }


ROUTES = [
    Route("queue", "get", prepare_queue, _expect(200, 200, 200, 200)),
    Route("save_view", "post", prepare_save_view, _expect(302, 302, 302, 302)),
    Route("delete_view", "post", prepare_delete_view, _expect(302, 302, 302, 302)),
    Route("detail", "get", prepare_detail, _expect(200, 200, 200, 404)),
    Route("claim", "post", prepare_claim, _expect(302, 302, 403, 404)),
    Route("release", "post", prepare_release, _expect(302, 302, 403, 404)),
    Route("renew", "post", prepare_renew, _expect(302, 302, 403, 404)),
    Route("draft", "post", prepare_draft, _expect(302, 302, 403, 404)),
    Route("decide", "post", prepare_decide, _expect(302, 302, 403, 404)),
    Route("request_information", "post", prepare_request_information, _expect(302, 302, 403, 404)),
    Route("record_answer", "post", prepare_record_answer, _expect(302, 302, 403, 404)),
    Route("reconcile", "post", prepare_reconcile, _expect(302, 302, 403, 404)),
    # Recovery is a supervisor tool: anyone else logged in gets 403 (see views/recovery.py).
    Route("recovery", "get", prepare_recovery, _expect(200, 403, 403, 403)),
    Route("retry_delivery", "post", prepare_retry_delivery, _expect(302, 403, 403, 404)),
    # The auditor history is for the auditor, supervisor and admin roles (views/audit.py).
    Route("audit_history", "get", prepare_audit_history, _expect(200, 403, 200, 403)),
    Route("audit_export", "get", prepare_audit_export, _expect(200, 403, 200, 403)),
]


class Context:
    def __init__(self, request: pytest.FixtureRequest) -> None:
        self.request = request
        self.worker = request.getfixturevalue("worker")
        self.supervisor = request.getfixturevalue("supervisor")
        self.file_invoice_case = request.getfixturevalue("file_invoice_case")
        self.failed_delivery_case = request.getfixturevalue("failed_delivery_case")


def test_the_matrix_names_every_url_of_the_cases_app():
    # Issue 3's URLs (board, supervisor actions, next case, shift, notifications) have
    # their own matrix with more personas and outcomes: tests/board/test_permission_matrix.py.
    from tests.board.test_permission_matrix import ROUTE_NAMES as BOARD_ROUTE_NAMES

    named = {p.name for p in case_urls.urlpatterns if isinstance(p, URLPattern)}
    assert named == {route.name for route in ROUTES} | BOARD_ROUTE_NAMES


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize("route", ROUTES, ids=[route.name for route in ROUTES])
def test_each_persona_gets_the_answer_its_scope_allows(
    route: Route, persona: str, request: pytest.FixtureRequest, client_for: Any
):
    ctx = Context(request)
    for name in ("supervisor", "viewer", "outsider"):
        request.getfixturevalue(name)
    actor = None if persona == "anonymous" else request.getfixturevalue(persona)
    prepared = route.prepare(ctx, actor)
    version_before = (
        Case.objects.values_list("version", flat=True).get(pk=prepared.case.pk)
        if prepared.case
        else None
    )
    client = client_for(actor)

    response = getattr(client, route.method)(prepared.url, prepared.data)

    expected = route.expected[persona]
    if expected == LOGIN:
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login") + "?next=")
    else:
        assert response.status_code == expected, response.content[:400]
    if expected in {403, 404, LOGIN} and prepared.case is not None:
        after = Case.objects.values_list("version", flat=True).get(pk=prepared.case.pk)
        assert after == version_before, "a refused request changed the case"


@pytest.mark.parametrize("route", ROUTES, ids=[route.name for route in ROUTES])
def test_the_wrong_method_is_refused_with_405(
    route: Route, request: pytest.FixtureRequest, supervisor: User, client_for: Any
):
    ctx = Context(request)
    prepared = route.prepare(ctx, supervisor)
    wrong = "post" if route.method == "get" else "get"

    response = getattr(client_for(supervisor), wrong)(prepared.url)

    assert response.status_code == 405
