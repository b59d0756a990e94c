"""The worker's whole path in a real browser, found only by what a screen reader would
announce (roles, labels, visible text; no CSS selectors): log in, find the case in the
queue, claim it, choose "Select the purchase order" with PO 781, submit, and see that the
decision is recorded and the workflow is being resumed. Once with pointer clicks, once
with the keyboard alone."""

from __future__ import annotations

from playwright.sync_api import Locator, Page, expect

from apps.cases.models import Case, Decision, OutboxEvent, State

from .harness import assert_focus_visible, log_in, tab_to, url

RECORDED = "Decision recorded — resuming the workflow"


def assert_decided_once(case: Case, worker) -> None:
    case.refresh_from_db()
    assert case.state == State.RESOLUTION_PENDING
    decision = Decision.objects.get(case=case)
    assert decision.actor == worker
    assert decision.resolution == "select_po"
    assert decision.fields == {"po_number": "po_781"}
    event = OutboxEvent.objects.get(case=case)
    assert event.type == "case.decided"


def test_worker_logs_in_claims_and_decides_by_accessible_names(page_for, worker, file_invoice_case):
    case = file_invoice_case()
    other = file_invoice_case()
    page = page_for(None)

    log_in(page, "wendy", "pw-wendy")
    expect(page.get_by_role("heading", name="Queue", level=1)).to_be_visible()
    queue = page.get_by_role("table", name="Cases in your queues")
    expect(queue.get_by_role("link", name=other.case_ref)).to_be_visible()
    queue.get_by_role("link", name=case.case_ref).click()

    expect(page.get_by_role("heading", level=1)).to_contain_text(case.case_ref)
    page.get_by_role("button", name="Claim this case").click()
    expect(page.get_by_text("You claimed this case.")).to_be_visible()

    page.get_by_role("radio", name="Select the purchase order").check()
    purchase_order = page.get_by_role("group", name="Purchase order")
    purchase_order.get_by_role("radio", name="po_781").check()
    page.get_by_role("button", name="Submit decision").click()

    expect(page.get_by_role("heading", name=RECORDED)).to_be_visible()
    expect(page.get_by_role("button", name="Submit decision")).to_have_count(0)
    assert_decided_once(case, worker)


def tab_to_visibly(page: Page, target: Locator) -> None:
    """Tab to `target` and check that where the focus is can be seen."""
    tab_to(page, target)
    assert_focus_visible(page)


def press_on(page: Page, target: Locator, key: str) -> None:
    tab_to_visibly(page, target)
    page.keyboard.press(key)


def test_worker_does_the_same_journey_with_the_keyboard_only(page_for, worker, file_invoice_case):
    case = file_invoice_case()
    file_invoice_case()
    page = page_for(None)
    page.goto(url("login"))

    # The first Tab from the top of the page reaches the skip link, visibly.
    assert tab_to(page, page.get_by_role("link", name="Skip to main content")) == 1
    assert_focus_visible(page)
    page.keyboard.press("Enter")
    expect(page.get_by_role("main")).to_be_focused()

    tab_to_visibly(page, page.get_by_label("Username"))
    page.keyboard.type("wendy")
    tab_to_visibly(page, page.get_by_label("Password"))
    page.keyboard.type("pw-wendy")
    page.keyboard.press("Enter")

    expect(page.get_by_role("heading", name="Queue", level=1)).to_be_visible()
    # On the queue too, the first Tab reaches the skip link; it jumps past the navigation.
    assert tab_to(page, page.get_by_role("link", name="Skip to main content")) == 1
    assert_focus_visible(page)
    page.keyboard.press("Enter")
    expect(page.get_by_role("main")).to_be_focused()
    queue = page.get_by_role("table", name="Cases in your queues")
    press_on(page, queue.get_by_role("link", name=case.case_ref), "Enter")

    expect(page.get_by_role("heading", level=1)).to_contain_text(case.case_ref)
    press_on(page, page.get_by_role("button", name="Claim this case"), "Enter")
    expect(page.get_by_text("You claimed this case.")).to_be_visible()

    resolution = page.get_by_role("radio", name="Select the purchase order")
    press_on(page, resolution, "Space")
    expect(resolution).to_be_checked()

    # Arrow keys move the choice inside a radio group, as screen reader users expect.
    purchase_order = page.get_by_role("group", name="Purchase order")
    po_781 = purchase_order.get_by_role("radio", name="po_781")
    po_799 = purchase_order.get_by_role("radio", name="po_799")
    press_on(page, po_781, "Space")
    expect(po_781).to_be_checked()
    page.keyboard.press("ArrowDown")
    expect(po_799).to_be_checked()
    page.keyboard.press("ArrowUp")
    expect(po_781).to_be_checked()
    expect(po_781).to_be_focused()

    submit = page.get_by_role("button", name="Submit decision")
    tab_to(page, submit)
    # Logical order both ways: one Shift+Tab back from the button is the note it sends.
    page.keyboard.press("Shift+Tab")
    expect(page.get_by_label("Reason or note")).to_be_focused()
    page.keyboard.type("PO 781 is the one the vendor quoted.")
    press_on(page, submit, "Enter")

    expect(page.get_by_role("heading", name=RECORDED)).to_be_visible()
    assert_decided_once(case, worker)
    assert Decision.objects.get(case=case).note == "PO 781 is the one the vendor quoted."
