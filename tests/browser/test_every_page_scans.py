"""Zero axe violations (WCAG 2.0, 2.1 and 2.2, levels A and AA) on every page that
test_accessibility_scans.py does not reach, in the states a supervisor, a worker, an
auditor or an administrator meets them: the supervisor board with breaches, a capacity
alert, loaded workers and a live capacity adjustment, and each of its action forms
refused with field errors; the notifications list and the navigation badge; the queue
after "Next case", off shift, and with the hand-off note refused; the shift page; the
decision page with its form refused, an irreversible resolution awaiting confirmation, an
unknown side effect to reconcile, the supervisor panel and its refused forms, a case
waiting for information, and as seen by someone who may not decide; the recovery queue
after a retry and empty; the Django admin (login, index, the change list and change form
of every configuration model, object permissions, history, deletion, refused forms); and
the 403, 404 and 500 pages.

Each test first waits for the state it claims to scan, so a page that silently rendered
something else cannot pass. The main pages are also captured at 1280 px and 320 px and
must not scroll sideways at 320 px.

No axe rule is excluded anywhere: EXCLUDED_AXE_RULES stays empty. It and UNSCANNED_PAGES
are what the accessibility statement lists as exceptions, each with its reason."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import Page, expect

from apps.audit.models import AuditEvent
from apps.cases.models import CapacityAlert, Case
from apps.cases.services import (
    adjust_capacity,
    claim_case,
    notify,
    request_information,
)
from apps.routing.models import (
    BusinessCalendar,
    ExceptionClass,
    Queue,
    RoutingRule,
    Skill,
    TaskType,
    WorkerProfile,
    WorkerSkill,
)
from apps.routing.reference import ensure_demo_routing
from apps.workflows.models import ApiKey, ApiSource, WorkflowType

from .harness import assert_no_axe_violations, capture_widths, url

# Rules switched off for a page or a region, each with the reason the accessibility
# statement gives. Empty: every page passes every WCAG A and AA rule axe has.
EXCLUDED_AXE_RULES: dict[str, str] = {}

# Pages the suite does not scan, each with the reason the accessibility statement gives.
UNSCANNED_PAGES: dict[str, str] = {
    "/api/docs/": (
        "The API reference is Swagger UI, a third-party tool for developers (served from the "
        "desk itself, no CDN). axe finds upstream problems in it (colour contrast of its method "
        "badges, nested interactive controls, small targets) that a stylesheet cannot fix; the "
        "README and docs/integrating.md describe the same API in accessible text."
    ),
}

HOUR = timedelta(hours=1)


def age_case(case: Case, *, age: timedelta, due_in: timedelta, **fields: Any) -> Case:
    """Filing stamps "now"; the board counts breaches and ages from the case's times. A
    test-only write of facts (no service moves a case back in time)."""
    now = timezone.now()
    due_at = now + due_in
    Case.objects.filter(pk=case.pk).update(
        created_at=now - age, due_at=due_at, original_due_at=due_at, **fields
    )
    case.refresh_from_db()
    return case


def open_every_detail(page: Page) -> None:
    # Closed <details> hide their content from axe; open them all to scan what they hold.
    page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")


def scan_each(page: Page, states: list[tuple[str, Callable[[Page], None]]]) -> None:
    """Bring the page into each state in turn (each step waits for the state it names)
    and scan it there; every state is scanned before the test fails, and the failure
    names each state with its violations."""
    failures = []
    for name, reach in states:
        reach(page)
        try:
            assert_no_axe_violations(page)
        except AssertionError as violations:
            failures.append(f"{name}:\n{violations}")
    assert failures == [], "\n\n".join(failures)


# --- The supervisor board ----------------------------------------------------------------


@pytest.fixture
def busy_board(file_invoice_case, worker, worker2, supervisor) -> dict[str, Case]:
    """accounts_payable with a breached case, a near-breach case nobody eligible can take
    (an open capacity alert), a case wendy holds under a live capacity adjustment, and
    walter off shift."""
    breached = age_case(file_invoice_case(), age=72 * HOUR, due_in=-HOUR, priority_band="P3")
    stranded = age_case(
        file_invoice_case(), age=HOUR, due_in=timedelta(minutes=10), priority_band="P2"
    )
    held = claim_case(case_id=file_invoice_case().pk, actor=worker)
    CapacityAlert.objects.create(
        case=stranded,
        queue=stranded.queue,
        explanation="Nobody on shift has the clearance this case needs.",
        raised_at=timezone.now() - timedelta(minutes=4),
    )
    adjust_capacity(
        worker=worker,
        capacity=2,
        reason="Training afternoon",
        expires_at=timezone.now() + 2 * HOUR,
        actor=supervisor,
    )
    WorkerProfile.objects.filter(user=worker2).update(on_shift=False)
    return {"breached": breached, "stranded": stranded, "held": held}


def test_board_with_breaches_alerts_and_loaded_workers_has_no_violations(
    page_for, supervisor, worker, busy_board
):
    page = page_for(supervisor)
    page.goto(url("cases:board"))

    expect(page.get_by_role("heading", name="No eligible worker: 1 case")).to_be_visible()
    queues = page.get_by_role("table", name="Backlog of each queue")
    expect(queues.get_by_text("1 breached")).to_be_visible()
    attention = page.get_by_role("table", name="Cases needing attention, earliest due first")
    breached = attention.get_by_role("link", name=busy_board["breached"].case_ref, exact=True)
    expect(breached).to_be_visible()
    workers = page.get_by_role("table", name="Workers of your queues")
    expect(workers.get_by_role("link", name=busy_board["held"].case_ref)).to_be_visible()
    expect(workers.get_by_text("1 of 2 units")).to_be_visible()  # the live adjustment
    expect(workers.get_by_text("2 units until")).to_be_visible()
    expect(workers.get_by_text("Off shift")).to_be_visible()
    open_every_detail(page)
    assert_no_axe_violations(page)
    capture_widths(page, "board")


BOARD_FORMS = [
    ("Transfer the case", "board-transfer-errors"),
    ("Set the priority", "board-priority-errors"),
    ("Adjust capacity", "board-capacity-errors"),
    ("Take off shift and return their cases", "board-absence-errors"),
]


def test_each_board_action_form_refused_with_field_errors_has_no_violations(
    page_for, supervisor, worker
):
    def refuse(button: str, summary: str) -> Callable[[Page], None]:
        def reach(page: Page) -> None:
            page.goto(url("cases:board"))
            with page.expect_response(lambda response: response.status == 422):
                page.get_by_role("button", name=button).click()
            expect(page.locator(f"#{summary}")).to_be_focused()
            expect(page.locator("[aria-invalid=true]").first).to_be_visible()

        return reach

    scan_each(
        page_for(supervisor),
        [(button, refuse(button, summary)) for button, summary in BOARD_FORMS],
    )


# --- Notifications -------------------------------------------------------------------------


def test_notifications_with_unread_and_read_items_and_the_badge_have_no_violations(
    page_for, worker, file_invoice_case
):
    case = file_invoice_case()
    notify(user=worker, case=case, kind="escalation.reminder", message="Reminder: due soon")
    notify(user=worker, kind="escalation.supervisor_alert", message="Queue backlog is growing")
    read = notify(user=worker, case=case, kind="escalation.reminder", message="Old reminder")
    read.read_at = timezone.now()
    read.save(update_fields=["read_at"])
    page = page_for(worker)
    page.goto(url("cases:notifications"))

    table = page.get_by_role("table", name="Your notifications, newest first")
    expect(table.get_by_role("row")).to_have_count(4)
    # The visually hidden punctuation is its own box, so the names carry a space before it.
    mark_read = re.compile(r"^Mark as read\s?: Reminder: due soon$")
    expect(table.get_by_role("button", name=mark_read)).to_be_visible()
    badge = page.get_by_role("navigation", name="Main").get_by_role("link", name="Notifications")
    expect(badge).to_have_accessible_name(re.compile(r"^Notifications\s?, 2 unread$"))
    assert_no_axe_violations(page)
    capture_widths(page, "notifications")


def test_empty_notifications_page_has_no_violations(page_for, worker):
    page = page_for(worker)
    page.goto(url("cases:notifications"))

    expect(page.get_by_text("No notifications.")).to_be_visible()
    assert_no_axe_violations(page)


# --- Queue: Next case and the shift ---------------------------------------------------------


def test_queue_after_next_case_found_nothing_has_no_violations(page_for, worker, file_invoice_case):
    file_invoice_case()  # a pull queue: Next case hands nothing out from it
    page = page_for(worker)
    page.goto(url("cases:queue"))

    page.get_by_role("button", name="Next case").click()

    expect(page.get_by_text("No eligible case for you right now.")).to_be_visible()
    assert_no_axe_violations(page)
    capture_widths(page, "queue-next-case-message")


def test_queue_off_shift_has_no_violations(page_for, worker):
    WorkerProfile.objects.filter(user=worker).update(on_shift=False)
    page = page_for(worker)
    page.goto(url("cases:queue"))

    expect(page.get_by_text("You are off shift.")).to_be_visible()
    expect(page.get_by_role("button", name="Go on shift")).to_be_visible()
    assert_no_axe_violations(page)


def test_queue_with_the_hand_off_note_refused_has_no_violations(
    page_for, worker, file_invoice_case
):
    case = file_invoice_case()
    Case.objects.filter(pk=case.pk).update(workload_weight=2)  # complex work needs a note
    claim_case(case_id=case.pk, actor=worker)
    page = page_for(worker)
    page.goto(url("cases:queue"))

    with page.expect_response(lambda response: response.status == 422):
        page.get_by_role("button", name="Go off shift").click()

    expect(page.locator("#shift-errors")).to_be_focused()
    expect(page.get_by_label("Hand-off note for whoever takes over your cases")).to_have_attribute(
        "aria-invalid", "true"
    )
    assert_no_axe_violations(page)
    capture_widths(page, "queue-handoff-note-error")


def test_shift_page_with_held_cases_has_no_violations(page_for, worker, claimed_case):
    page = page_for(worker)
    page.goto(url("cases:shift"))

    expect(page.get_by_role("heading", name="Cases you hold")).to_be_visible()
    expect(page.get_by_role("link", name=claimed_case.case_ref)).to_be_visible()
    assert_no_axe_violations(page)


# --- Decision page: the supervisor panel and waiting cases ---------------------------------


def test_decision_page_with_the_supervisor_panel_has_no_violations(
    page_for, supervisor, claimed_case
):
    page = page_for(supervisor)
    page.goto(url("cases:detail", claimed_case.pk))

    expect(page.get_by_role("heading", name="Supervisor actions")).to_be_visible()
    open_every_detail(page)
    for form in ("Transfer the case", "Reroute the case", "Set the priority"):
        expect(page.get_by_role("button", name=form)).to_be_visible()
    expect(page.get_by_role("button", name="Change the due date")).to_be_visible()
    assert_no_axe_violations(page)
    capture_widths(page, "decision-supervisor-panel")


PANEL_FORMS = [
    ("Transfer to another queue or worker", "Transfer the case"),
    ("Reroute: the case was misclassified", "Reroute the case"),
    ("Override the priority", "Set the priority"),
    ("Adjust the due date", "Change the due date"),
]


def test_each_supervisor_panel_form_refused_with_field_errors_has_no_violations(
    page_for, supervisor, file_invoice_case
):
    case = file_invoice_case()

    def refuse(summary: str, button: str) -> Callable[[Page], None]:
        def reach(page: Page) -> None:
            page.goto(url("cases:detail", case.pk))
            page.get_by_text(summary, exact=True).click()
            with page.expect_response(lambda response: response.status == 422):
                page.get_by_role("button", name=button).click()
            expect(page.locator("#supervise-errors")).to_be_focused()
            # The refused form stays open with its fields marked.
            expect(page.locator("details[open] [aria-invalid=true]").first).to_be_visible()

        return reach

    scan_each(
        page_for(supervisor),
        [(button, refuse(summary, button)) for summary, button in PANEL_FORMS],
    )


def test_decision_form_refused_with_field_errors_has_no_violations(page_for, worker, claimed_case):
    page = page_for(worker)
    page.goto(url("cases:detail", claimed_case.pk))
    # The purchase order is required by the resolution's field schema; leave it out.
    page.get_by_role("radio", name="Select the purchase order").check()

    with page.expect_response(lambda response: response.status == 422):
        page.get_by_role("button", name="Submit decision").click()

    expect(page.get_by_role("heading", name="There is a problem")).to_be_visible()
    expect(page.get_by_role("link", name="Purchase order is required.")).to_be_visible()
    assert_no_axe_violations(page)


def test_confirmation_of_an_irreversible_resolution_has_no_violations(
    page_for, worker, claimed_case
):
    page = page_for(worker)
    page.goto(url("cases:detail", claimed_case.pk))
    page.get_by_role("radio", name="Close as invalid").check()
    page.get_by_role("textbox", name="Reason or note").fill("Duplicate of invoice 8399.")

    page.get_by_role("button", name="Submit decision").click()

    expect(page.get_by_role("heading", name="Confirm: Close as invalid")).to_be_visible()
    expect(page.get_by_role("button", name="Yes, Close as invalid")).to_be_visible()
    assert_no_axe_violations(page)
    capture_widths(page, "decision-confirm-irreversible")


def test_unknown_side_effect_warning_and_its_refused_reconciliation_have_no_violations(
    page_for, worker, file_invoice_case
):
    case = file_invoice_case(side_effect_state="unknown")
    page = page_for(worker)
    page.goto(url("cases:detail", case.pk))

    expect(
        page.get_by_role("heading", name="Warning: the external write may or may not have happened")
    ).to_be_visible()
    assert_no_axe_violations(page)

    with page.expect_response(lambda response: response.status == 422):
        page.get_by_role("button", name="Record the reconciliation").click()

    expect(page.locator("#reconcile-state-error")).to_be_visible()
    assert_no_axe_violations(page)


def test_decision_page_seen_by_an_auditor_and_by_a_colleague_has_no_violations(
    page_for, viewer, worker2, claimed_case
):
    for user in (viewer, worker2):  # may only look; may work, but wendy holds the case
        page = page_for(user)
        page.goto(url("cases:detail", claimed_case.pk))

        expect(page.get_by_text("Claimed by wendy; their lease runs until")).to_be_visible()
        expect(page.get_by_role("button", name="Submit decision")).to_have_count(0)
        assert_no_axe_violations(page)


def test_request_information_form_refused_with_field_errors_has_no_violations(
    page_for, worker, claimed_case
):
    page = page_for(worker)
    page.goto(url("cases:detail", claimed_case.pk))

    with page.expect_response(lambda response: response.status == 422):
        page.get_by_role("button", name="Ask and wait").click()

    expect(page.get_by_text("Say what information is needed.")).to_be_visible()
    expect(page.get_by_text("Say whom you are asking.")).to_be_visible()
    assert_no_axe_violations(page)


def test_waiting_case_with_the_answer_form_has_no_violations(page_for, worker, claimed_case):
    request_information(
        case_id=claimed_case.pk,
        actor=worker,
        expected_version=claimed_case.version,
        lease_token=claimed_case.lease_token,
        question="Which purchase order did the buyer approve?",
        asked_of="buyer@acme.example",
    )
    page = page_for(worker)
    page.goto(url("cases:detail", claimed_case.pk))

    expect(page.get_by_role("heading", name="Waiting for information")).to_be_visible()
    expect(page.get_by_role("definition").filter(has_text="Which purchase order")).to_be_visible()
    assert_no_axe_violations(page)
    capture_widths(page, "decision-waiting")

    with page.expect_response(lambda response: response.status == 422):
        page.get_by_role("button", name="Record the answer and reopen").click()

    expect(page.get_by_label("Answer")).to_have_attribute("aria-invalid", "true")
    assert_no_axe_violations(page)


# --- Recovery ------------------------------------------------------------------------------


def test_recovery_queue_after_a_retry_has_no_violations(
    page_for, supervisor, worker, failed_delivery_case
):
    case = failed_delivery_case(worker)
    page = page_for(supervisor)
    page.goto(url("cases:recovery"))

    page.get_by_role("button", name=f"Retry delivery of {case.case_ref}").click()

    expect(page.get_by_text("scheduled again with the same event id")).to_be_visible()
    assert_no_axe_violations(page)
    capture_widths(page, "recovery-after-retry")


def test_empty_recovery_queue_has_no_violations(page_for, supervisor):
    page = page_for(supervisor)
    page.goto(url("cases:recovery"))

    expect(page.get_by_text("Nothing to recover")).to_be_visible()
    assert_no_axe_violations(page)


# --- Error pages ----------------------------------------------------------------------------


def test_not_found_page_has_no_violations(page_for, worker):
    page = page_for(worker)

    response = page.goto(url("cases:detail", "exc_does_not_exist"))

    assert response is not None and response.status == 404
    expect(page.get_by_role("heading", name="Not found", level=1)).to_be_visible()
    assert_no_axe_violations(page)
    capture_widths(page, "error-404")


def test_forbidden_page_has_no_violations(page_for, worker):
    page = page_for(worker)

    response = page.goto(url("cases:board"))  # the board is for supervisors

    assert response is not None and response.status == 403
    expect(page.get_by_role("heading", name="You may not do this", level=1)).to_be_visible()
    expect(page.get_by_text("The board is for supervisors.")).to_be_visible()
    assert_no_axe_violations(page)
    capture_widths(page, "error-403")


def test_server_error_page_has_no_violations(page_for, live_server):
    # No URL of the product fails on purpose. The page Django's server_error view sends is
    # templates/500.html rendered without a request; it is served here at the live server's
    # origin (so its stylesheet loads) with the status a real failure has.
    body = render_to_string("500.html")
    page = page_for(None)
    address = f"{live_server.url}/__server-error__"
    page.route(
        address, lambda route: route.fulfill(status=500, body=body, content_type="text/html")
    )

    response = page.goto(address)

    assert response is not None and response.status == 500
    expect(page.get_by_role("heading", name="Something went wrong", level=1)).to_be_visible()
    stylesheet_loaded = page.evaluate(
        "() => getComputedStyle(document.querySelector('.site-header')).borderBottomStyle"
    )
    assert stylesheet_loaded == "solid"
    assert_no_axe_violations(page)
    capture_widths(page, "error-500")


# --- Django admin ------------------------------------------------------------------------------


@pytest.fixture
def administrator(reference_data) -> User:
    return User.objects.create_superuser("ada", "ada@example.com", "pw-ada")


def test_admin_login_page_has_no_violations(page_for, reference_data):
    page = page_for(None)
    page.goto(reverse("admin:login"))

    expect(page.get_by_label("Username")).to_be_visible()
    assert_no_axe_violations(page)


def test_admin_login_page_with_an_error_has_no_violations(page_for, reference_data):
    page = page_for(None)
    page.goto(reverse("admin:login"))
    page.get_by_label("Username").fill("nobody")
    page.get_by_label("Password").fill("wrong")
    page.get_by_role("button", name="Log in").click()

    expect(page.get_by_text("Please enter the correct username and password")).to_be_visible()
    assert_no_axe_violations(page)


def test_admin_index_has_no_violations(page_for, administrator):
    page = page_for(administrator)
    page.goto(reverse("admin:index"))

    expect(page.get_by_role("heading", name="Site administration")).to_be_visible()
    assert_no_axe_violations(page)
    capture_widths(page, "admin-index")


def _first_pk(model: Any) -> Any:
    return model.objects.order_by("pk").values_list("pk", flat=True).first()


def _admin_data(worker: User, supervisor: User, file_invoice_case: Any) -> None:
    """Rows for the lists and inlines that start empty: the demo's task types (with their
    required skills inline), a skill and a capacity adjustment on wendy's profile (both
    inline there), a case (with its evidence inline) and its audit events."""
    ensure_demo_routing()
    WorkerSkill.objects.create(
        profile=WorkerProfile.objects.get(user=worker),
        skill=Skill.objects.get(code="invoice_matching"),
        proficiency=3,
    )
    adjust_capacity(
        worker=worker,
        capacity=3,
        reason="Training afternoon",
        expires_at=timezone.now() + 2 * HOUR,
        actor=supervisor,
    )
    file_invoice_case()


# (app label, model, a function giving the pk of the object whose change form to open, or
# None for a list without forms). Add forms are the same template; the refused add form
# below scans one.
ADMIN_MODELS: list[tuple[str, str, Any]] = [
    ("routing", "queue", lambda: Queue.objects.get(name="accounts_payable").pk),
    ("routing", "exceptionclass", lambda: ExceptionClass.objects.get(code="evidence_conflict").pk),
    ("routing", "routingrule", lambda: _first_pk(RoutingRule)),
    (
        "routing",
        "tasktype",
        lambda: (
            TaskType.objects.get(
                workflow_type__name="invoice_match", exception_class__code="evidence_conflict"
            ).pk
        ),
    ),
    ("routing", "skill", lambda: _first_pk(Skill)),
    ("routing", "businesscalendar", lambda: _first_pk(BusinessCalendar)),
    ("routing", "workerprofile", lambda: WorkerProfile.objects.get(user__username="wendy").pk),
    ("routing", "capacityadjustment", None),
    ("workflows", "workflowtype", lambda: WorkflowType.objects.get(name="invoice_match").pk),
    ("workflows", "apisource", lambda: ApiSource.objects.get(name="erp-workflows").pk),
    ("workflows", "apikey", lambda: _first_pk(ApiKey)),
    ("cases", "case", lambda: _first_pk(Case)),
    ("audit", "auditevent", lambda: _first_pk(AuditEvent)),
    ("auth", "user", lambda: User.objects.get(username="wendy").pk),
    ("auth", "group", lambda: Group.objects.get(name="supervisor").pk),
]


def test_every_configuration_models_change_list_and_change_form_have_no_violations(
    page_for, administrator, worker, supervisor, file_invoice_case
):
    _admin_data(worker, supervisor, file_invoice_case)

    def change_list(app_label: str, model: str) -> Callable[[Page], None]:
        def reach(page: Page) -> None:
            page.goto(reverse(f"admin:{app_label}_{model}_changelist"))
            expect(page.locator("#result_list tbody tr").first).to_be_visible()

        return reach

    def change_form(app_label: str, model: str, pk: Callable[[], Any]) -> Callable[[Page], None]:
        def reach(page: Page) -> None:
            page.goto(reverse(f"admin:{app_label}_{model}_change", args=[pk()]))
            expect(page.locator("#content-main form")).to_be_visible()
            open_every_detail(page)

        return reach

    states: list[tuple[str, Callable[[Page], None]]] = []
    for app_label, model, form in ADMIN_MODELS:
        states.append((f"{app_label}.{model} change list", change_list(app_label, model)))
        if form is not None:
            states.append((f"{app_label}.{model} change form", change_form(app_label, model, form)))
    scan_each(page_for(administrator), states)


# Pages around a configuration object: who may work a queue (django-guardian's object
# permissions), an object's history, the confirmation before deleting it.
ADMIN_PAGES: list[tuple[str, Any]] = [
    ("app-index", lambda: reverse("admin:app_list", args=["routing"])),
    ("queue-permissions", lambda: reverse("admin:routing_queue_permissions", args=[_ap()])),
    (
        "queue-permissions-of-a-user",
        lambda: reverse(
            "admin:routing_queue_permissions_manage_user",
            args=[_ap(), User.objects.get(username="wendy").pk],
        ),
    ),
    (
        "queue-permissions-of-a-group",
        lambda: reverse(
            "admin:routing_queue_permissions_manage_group",
            args=[_ap(), Group.objects.get(name="worker").pk],
        ),
    ),
    ("skill-history", lambda: reverse("admin:routing_skill_history", args=[_first_pk(Skill)])),
    ("skill-delete", lambda: reverse("admin:routing_skill_delete", args=[_first_pk(Skill)])),
    ("password-change", lambda: reverse("admin:password_change")),
]


def _ap() -> int:
    return Queue.objects.get(name="accounts_payable").pk


def test_admin_pages_around_a_configuration_object_have_no_violations(
    page_for, administrator, worker
):
    def visit(address: Callable[[], str]) -> Callable[[Page], None]:
        def reach(page: Page) -> None:
            response = page.goto(address())
            assert response is not None and response.status == 200, page.url
            expect(page.locator("#content h1, #content h2").first).to_be_visible()

        return reach

    scan_each(page_for(administrator), [(name, visit(address)) for name, address in ADMIN_PAGES])


def test_admin_change_form_refused_with_field_errors_has_no_violations(page_for, administrator):
    page = page_for(administrator)
    page.goto(reverse("admin:routing_skill_add"))

    page.get_by_role("button", name="Save", exact=True).click()

    expect(page.get_by_text("Please correct the errors below.")).to_be_visible()
    expect(page.get_by_label("Code:")).to_have_attribute("aria-invalid", "true")
    assert_no_axe_violations(page)


def test_admin_inputs_django_leaves_unnamed_are_named_by_the_overrides(
    page_for, administrator, worker, supervisor, file_invoice_case
):
    """The template overrides under templates/admin/ name what Django 5.2 renders without
    a name: a change list's editable cells, tabular inline cells, the two inputs of a split
    date and time, the two-list selector's filter boxes, django-guardian's ticks."""
    _admin_data(worker, supervisor, file_invoice_case)
    page = page_for(administrator)

    page.goto(reverse("admin:routing_routingrule_changelist"))
    first_rule = RoutingRule.objects.order_by("position").first()
    expect(page.get_by_role("checkbox", name=f"Active: {first_rule}")).to_be_checked()

    page.goto(
        reverse(
            "admin:routing_exceptionclass_change",
            args=[ExceptionClass.objects.get(code="evidence_conflict").pk],
        )
    )
    steps = page.get_by_role("group", name="Escalation steps")
    expect(steps.get_by_role("spinbutton", name="Level").first).to_have_value("1")
    expect(steps.get_by_role("combobox", name="Action").first).to_be_visible()

    page.goto(reverse("admin:workflows_apikey_change", args=[_first_pk(ApiKey)]))
    expect(page.get_by_role("textbox", name="Revoked at: Date")).to_be_visible()
    expect(page.get_by_role("textbox", name="Revoked at: Time")).to_be_visible()

    page.goto(reverse("admin:workflows_apisource_change", args=[_first_pk(ApiSource)]))
    expect(
        page.get_by_role(
            "textbox",
            name="Type into this box to filter down the list of available workflow types.",
        )
    ).to_be_visible()

    page.goto(reverse("admin:routing_queue_permissions", args=[_ap()]))
    expect(page.get_by_role("img", name="Yes").first).to_be_visible()


# --- The API reference ----------------------------------------------------------------------


def test_api_reference_loads_nothing_from_outside_the_desk(page_for, worker, live_server):
    page = page_for(worker)
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto("/api/docs/")

    expect(page.get_by_role("heading", name="Exception Desk API")).to_be_visible()
    # No CDN: Swagger UI ships in drf-spectacular-sidecar and is served by the desk.
    assert [u for u in requested if not u.startswith(live_server.url)] == []
