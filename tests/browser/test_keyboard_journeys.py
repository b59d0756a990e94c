"""The issue's keyboard journeys, each done with the keyboard alone (Tab, Shift+Tab, Enter,
Space, arrows, typing; no clicks), checking at every stop that the focus can be seen and,
after every reload or swap, that focus lands somewhere sensible rather than on <body>.

Logging in, choosing a resolution and submitting are in test_worker_journey.py (the
keyboard-only journey there); an auditor exporting a history is in
test_auditor_journey.py.
"""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from playwright.sync_api import Page, expect

from apps.cases.models import Case, Decision, State
from apps.cases.services import claim_case
from apps.routing.models import CapacityAdjustment, Queue

from .harness import assert_focus_visible, expect_focus_on_region, live_region, tab_to, url
from .keyboard import (
    expect_focus_within,
    position_of,
    press_on,
    tab_to_visibly,
    walk_tab_order,
)

RECORDED = "Decision recorded — resuming the workflow"


# --- 2. Find a case with the filters --------------------------------------------------------


def test_filters_find_a_case_and_focus_lands_on_the_result_count(
    page_for, worker, worker2, file_invoice_case
):
    wanted = file_invoice_case(summary="Delivery note missing", **{"class": "evidence_required"})
    claimed_same = file_invoice_case(
        summary="Delivery note missing too", **{"class": "evidence_required"}
    )
    claim_case(case_id=claimed_same.pk, actor=worker2)  # excluded by the state
    other_class = file_invoice_case(summary="Delivery note unclear")  # excluded by the class
    other_text = file_invoice_case(summary="Receipt unreadable", **{"class": "evidence_required"})
    page = page_for(worker)
    page.goto(url("cases:queue"))
    queue = page.get_by_role("table", name="Cases in your queues")
    expect(queue.get_by_role("row")).to_have_count(1 + 4)

    search = page.get_by_label("Search case or summary")
    tab_to_visibly(page, search)
    page.keyboard.type("delivery")
    # The filters come in the order they are read, one Tab apart.
    for label, option in [
        ("Queue", "Accounts payable"),
        ("State", "Open"),
        ("Exception class", "Evidence required"),
    ]:
        assert tab_to(page, page.get_by_label(label, exact=True)) == 1
        assert_focus_visible(page)
        page.keyboard.type(option)
        expect(page.get_by_label(label, exact=True).locator("option:checked")).to_have_text(option)
    press_on(page, page.get_by_role("button", name="Apply filters"), "Enter")

    query = "q=delivery&queue=accounts_payable&state=open&exception_class=evidence_required"
    expect(page).to_have_url(f"{url('cases:queue')}?{query}")
    # Focus lands on what the filter did, the count of the results, and it is said.
    count = page.get_by_text("1 case", exact=True)
    expect(count).to_be_focused()
    assert_focus_visible(page)
    expect(queue.get_by_role("row")).to_have_count(1 + 1)
    for excluded in (claimed_same, other_class, other_text):
        expect(queue.get_by_role("link", name=excluded.case_ref)).to_have_count(0)

    # From the count, the keyboard goes on into the results and opens the case.
    press_on(page, queue.get_by_role("link", name=wanted.case_ref), "Enter")
    expect(page.get_by_role("heading", level=1)).to_contain_text(wanted.case_ref)


def test_a_filter_that_matches_nothing_says_so_where_focus_lands(
    page_for, worker, file_invoice_case
):
    file_invoice_case()
    page = page_for(worker)
    page.goto(url("cases:queue"))

    tab_to_visibly(page, page.get_by_label("Search case or summary"))
    page.keyboard.type("no such case")
    page.keyboard.press("Enter")  # implicit submission from the search field

    expect(page.get_by_text("0 cases", exact=True)).to_be_focused()
    expect(page.get_by_text("No cases match these filters.")).to_be_visible()
    # "Clear filters" is the next thing backwards from the results, and brings them back.
    press_on(page, page.get_by_role("link", name="Clear filters"), "Enter")
    expect(page.get_by_text("1 case", exact=True)).to_be_focused()


def test_paging_by_keyboard_lands_on_the_count_of_the_new_page(
    page_for, worker, file_invoice_case, settings
):
    settings.EXCEPTION_DESK = {**settings.EXCEPTION_DESK, "QUEUE_PAGE_SIZE": 1}
    file_invoice_case()
    file_invoice_case()
    page = page_for(worker)
    page.goto(url("cases:queue"))
    expect(page.get_by_text("Page 1 of 2")).to_be_visible()

    press_on(page, page.get_by_role("link", name="Next page"), "Enter")

    expect(page.get_by_text("Page 2 of 2")).to_be_visible()
    expect(page.get_by_text("2 cases", exact=True)).to_be_focused()
    assert_focus_visible(page)


# --- 3. Claim ------------------------------------------------------------------------------


def test_claiming_by_keyboard_lands_on_the_confirmation(page_for, worker, file_invoice_case):
    case = file_invoice_case()
    page = page_for(worker)
    page.goto(url("cases:detail", case.pk))

    press_on(page, page.get_by_role("button", name="Claim this case"), "Enter")

    message = page.get_by_text("You claimed this case.")
    expect(message).to_be_visible()
    expect_focus_within(page, page.locator("#messages"))
    assert_focus_visible(page)
    expect(live_region(page)).to_contain_text("You claimed this case.")
    # The keyboard goes on from the message, in the page, not from the header again.
    assert tab_to(page, page.get_by_role("link", name="Back to the queue")) == 1
    tab_to_visibly(page, page.get_by_role("button", name="Keep working: extend my lease"))
    case.refresh_from_db()
    assert (case.state, case.assignee) == (State.CLAIMED, worker)


# --- 4. Read the evidence ----------------------------------------------------------------


def test_evidence_and_background_sections_open_with_enter_and_space(page_for, worker, claimed_case):
    page = page_for(worker)
    page.goto(url("cases:detail", claimed_case.pk))
    evidence = page.get_by_role("list", name="Evidence (version 1)")
    expect(evidence.get_by_role("listitem")).to_have_count(2)
    expect(evidence).to_contain_text("PO-781")

    sections = [
        ("Timeline (2 steps)", "Enter", page.get_by_text("find_purchase_orders")),
        ("Trace", "Space", page.get_by_text("trace_932")),
        ("Input snapshot", "Enter", page.get_by_text("snapshot_8421")),
        ("History", "Space", page.get_by_role("table", name="Every recorded change")),
    ]
    for name, key, content in sections:
        summary = page.locator("summary", has_text=name)
        expect(content).to_be_hidden()
        press_on(page, summary, key)
        expect(content).to_be_visible()
        expect(summary.locator("xpath=..")).to_have_attribute("open", "")

    # The history table scrolls on its own and is reachable next; Enter closes a section.
    history_region = page.get_by_role("region", name="Every recorded change")
    assert tab_to(page, history_region) == 1
    assert_focus_visible(page)
    press_on(page, page.locator("summary", has_text="Trace"), "Enter")
    expect(page.get_by_text("trace_932")).to_be_hidden()


# --- 5. Write a draft ------------------------------------------------------------------------


def test_a_draft_typed_by_keyboard_is_saved_and_said_while_focus_stays_in_the_note(
    page_for, worker, claimed_case
):
    page = page_for(worker)
    page.goto(url("cases:detail", claimed_case.pk))

    resolution = page.get_by_role("radio", name="Select the purchase order")
    press_on(page, resolution, "Space")
    expect(resolution).to_be_checked()
    note = page.get_by_label("Reason or note")
    tab_to_visibly(page, note)
    page.keyboard.type("Checking PO 781 with the buyer.")

    status = page.get_by_role("status").filter(has_text="Draft saved at")
    expect(status).to_be_visible()
    expect(note).to_be_focused()  # the autosave swap did not take the caret away
    expect(note).to_have_value("Checking PO 781 with the buyer.")
    # The status is its own polite live region: a screen reader hears "Draft saved".
    assert status.evaluate("element => element.getAttribute('role')") == "status"

    # Typing on after the save goes on where the caret was.
    page.keyboard.type(" Waiting.")
    expect(note).to_have_value("Checking PO 781 with the buyer. Waiting.")
    expect(status).to_contain_text("A draft is not a decision.")


# --- 7. Handle a conflict --------------------------------------------------------------------


def test_a_conflict_is_handled_by_keyboard_reload_and_submit_again(
    page_for, worker, claimed_case, workflow_adds_evidence
):
    page = page_for(worker)
    page.goto(url("cases:detail", claimed_case.pk))
    press_on(page, page.get_by_role("radio", name="Select the purchase order"), "Space")
    press_on(page, page.get_by_role("radio", name="po_781"), "Space")
    workflow_adds_evidence(claimed_case)

    with page.expect_response(lambda response: response.status == 409):
        press_on(page, page.get_by_role("button", name="Submit decision"), "Enter")

    title = page.get_by_role("heading", name="The case changed since you loaded it")
    expect_focus_on_region(page, title)
    assert_focus_visible(page)
    expect(live_region(page)).to_contain_text("Your decision was not recorded.")
    # The way out is the very next stop.
    assert tab_to(page, page.get_by_role("link", name="Reload the case")) == 1
    assert_focus_visible(page)
    page.keyboard.press("Enter")

    expect(page.get_by_role("heading", name="Evidence (version 2)")).to_be_visible()
    resolution = page.get_by_role("radio", name="Select the purchase order")
    press_on(page, resolution, "Space")
    expect(resolution).to_be_checked()
    po_812 = page.get_by_role("group", name="Purchase order").get_by_role("radio", name="po_812")
    tab_to_visibly(
        page, page.get_by_role("group", name="Purchase order").get_by_role("radio").first
    )
    # Arrows choose inside the group: down to the last option, the evidence that arrived.
    for _ in range(3):
        if po_812.is_checked():
            break
        page.keyboard.press("ArrowDown")
    expect(po_812).to_be_checked()
    press_on(page, page.get_by_role("button", name="Submit decision"), "Enter")

    expect(page.get_by_role("heading", name=RECORDED)).to_be_visible()
    decision = Decision.objects.get(case=claimed_case)
    assert (decision.resolution, decision.fields) == ("select_po", {"po_number": "po_812"})


# --- 8. Release ----------------------------------------------------------------------------


def test_releasing_by_keyboard_confirms_the_case_is_back_in_the_queue(
    page_for, worker, claimed_case
):
    page = page_for(worker)
    page.goto(url("cases:detail", claimed_case.pk))

    press_on(page, page.get_by_role("button", name="Release back to the queue"), "Enter")

    message = page.get_by_text("You released this case; it is back in the queue.")
    expect(message).to_be_visible()
    expect_focus_within(page, page.locator("#messages"))
    assert_focus_visible(page)
    expect(page.locator(".case-facts")).to_contain_text("Open")
    tab_to_visibly(page, page.get_by_role("button", name="Claim this case"))
    claimed_case.refresh_from_db()
    assert (claimed_case.state, claimed_case.assignee) == (State.OPEN, None)


# --- 9. Next case --------------------------------------------------------------------------


def test_next_case_by_keyboard_opens_the_case_with_focus_in_the_main_region(
    page_for, worker, file_invoice_case
):
    Queue.objects.filter(name="accounts_payable").update(assignment_model="priority_push")
    file_invoice_case()
    urgent = file_invoice_case()
    Case.objects.filter(pk=urgent.pk).update(priority_band="P1")
    page = page_for(worker)
    page.goto(url("cases:queue"))

    press_on(page, page.get_by_role("button", name="Next case"), "Enter")

    expect(page.get_by_role("heading", level=1)).to_contain_text(urgent.case_ref)
    # Focus is in the main region, on the message that names the case handed out.
    expect_focus_within(page, page.get_by_role("main"))
    expect_focus_within(page, page.locator("#messages"))
    focused = page.evaluate("() => document.activeElement.textContent")
    assert f"Your next case is {urgent.case_ref} (P1)." in focused
    assert_focus_visible(page)
    urgent.refresh_from_db()
    assert (urgent.state, urgent.assignee) == (State.CLAIMED, worker)


# --- 10. A supervisor transfers a case and adjusts a worker's capacity ---------------------


def test_a_supervisor_transfers_a_case_and_adjusts_capacity_by_keyboard(
    page_for, supervisor, worker, worker2, file_invoice_case
):
    case = file_invoice_case()
    page = page_for(supervisor)
    page.goto(url("cases:board"))

    transfer = page.get_by_role("region", name="Transfer a case")
    tab_to_visibly(page, transfer.get_by_label("Case id or reference"))
    page.keyboard.type(case.case_ref)
    assert tab_to(page, transfer.get_by_label("To queue")) == 1
    assert tab_to(page, transfer.get_by_label("To worker")) == 1
    page.keyboard.type("walter")
    expect(transfer.get_by_label("To worker").locator("option:checked")).to_have_text("walter")
    assert tab_to(page, transfer.get_by_label("Reason")) == 1
    page.keyboard.type("Walter knows this vendor")
    press_on(page, transfer.get_by_role("button", name="Transfer the case"), "Enter")

    expect(page.get_by_text(f"{case.case_ref} now lies with walter")).to_be_visible()
    expect_focus_within(page, page.locator("#messages"))
    case.refresh_from_db()
    assert (case.state, case.assignee) == (State.CLAIMED, worker2)

    # The workers table links each worker to the capacity form, preselected.
    press_on(page, page.get_by_role("link", name="Adjust capacity of wendy"), "Enter")
    capacity = page.get_by_role("region", name="Adjust a worker's capacity")
    expect(capacity.get_by_label("Worker").locator("option:checked")).to_have_text("wendy")
    # The link led to the form: the next Tab is its first field, not the page header.
    assert tab_to(page, capacity.get_by_label("Worker")) == 1
    assert tab_to(page, capacity.get_by_label("Capacity (workload units)")) == 1
    page.keyboard.type("2")
    assert tab_to(page, capacity.get_by_label("Reason")) == 1
    page.keyboard.type("Training this afternoon")
    press_on(page, capacity.get_by_role("button", name="Adjust capacity"), "Enter")

    expect(page.get_by_text("Capacity of wendy set to 2 units")).to_be_visible()
    expect_focus_within(page, page.locator("#messages"))
    adjustment = CapacityAdjustment.objects.get(profile__user=worker)
    assert (adjustment.capacity, adjustment.reason) == (2, "Training this afternoon")
    assert adjustment.expires_at > timezone.now() + timedelta(minutes=1)


# --- Irreversible resolutions confirm in context ---------------------------------------------


def choose_close_invalid(page: Page) -> None:
    first = page.get_by_role("radio", name="Select the purchase order")
    press_on(page, first, "Space")
    close = page.get_by_role("radio", name="Close as invalid")
    for _ in range(3):  # arrows move the choice within the group
        if close.is_checked():
            break
        page.keyboard.press("ArrowDown")
    expect(close).to_be_checked()
    expect(close).to_be_focused()
    tab_to_visibly(page, page.get_by_label("Reason or note"))
    page.keyboard.type("Duplicate of an invoice already paid.")


def test_an_irreversible_resolution_asks_in_context_and_escape_returns_focus(
    page_for, worker, claimed_case
):
    page = page_for(worker)
    page.goto(url("cases:detail", claimed_case.pk))
    choose_close_invalid(page)
    submit = page.get_by_role("button", name="Submit decision")

    press_on(page, submit, "Enter")
    title = page.get_by_role("heading", name="Confirm: Close as invalid")
    expect_focus_on_region(page, title)
    assert_focus_visible(page)
    expect(live_region(page)).to_contain_text("Confirm: Close as invalid. This cannot be undone.")

    # Escape: the confirmation goes, focus is back on the button that asked for it.
    page.keyboard.press("Escape")
    expect(title).to_have_count(0)
    expect(submit).to_be_focused()
    expect(live_region(page)).to_have_text("Not confirmed. Nothing was recorded.")
    assert not Decision.objects.filter(case=claimed_case).exists()

    # The "No" link does the same.
    page.keyboard.press("Enter")
    expect_focus_on_region(page, title)
    press_on(page, page.get_by_role("link", name="No, change my decision"), "Enter")
    expect(title).to_have_count(0)
    expect(submit).to_be_focused()
    expect(page.get_by_role("radio", name="Close as invalid")).to_be_checked()
    assert not Decision.objects.filter(case=claimed_case).exists()


def test_confirming_an_irreversible_resolution_by_keyboard_records_it(
    page_for, worker, claimed_case
):
    page = page_for(worker)
    page.goto(url("cases:detail", claimed_case.pk))
    choose_close_invalid(page)
    press_on(page, page.get_by_role("button", name="Submit decision"), "Enter")
    expect_focus_on_region(page, page.get_by_role("heading", name="Confirm: Close as invalid"))

    # The confirming button is the next stop after the confirmation itself.
    confirm = page.get_by_role("button", name="Yes, Close as invalid")
    assert tab_to(page, confirm) == 1
    assert_focus_visible(page)
    page.keyboard.press("Enter")

    expect(page.get_by_role("heading", name=RECORDED)).to_be_visible()
    decision = Decision.objects.get(case=claimed_case)
    assert (decision.resolution, decision.note) == (
        "close_invalid",
        "Duplicate of an invoice already paid.",
    )


# --- Tab order: logical, visible at every stop, no trap ------------------------------------


def test_the_queue_page_tab_order_is_logical_visible_and_free_of_traps(
    page_for, worker, file_invoice_case
):
    case = file_invoice_case()
    page = page_for(worker)
    page.goto(url("cases:queue"))
    expect(page.get_by_role("link", name=case.case_ref)).to_be_visible()

    stops = walk_tab_order(page)

    assert stops[0].description.startswith('a "Skip to main content"')
    order = [
        'a "Queue"',
        'button#next-case-button "Next case"',
        'input#id_q ""',
        'button "Apply filters"',
        'a#sort-priority "Priority',
        f'a#case-link-{case.pk} "{case.case_ref}"',
        'a#queue-refresh "Refresh now"',
    ]
    positions = [position_of(stops, fragment) for fragment in order]
    assert positions == sorted(positions), [stops[i].description for i in positions]


def test_the_decision_page_tab_order_is_logical_visible_and_free_of_traps(
    page_for, worker, claimed_case
):
    page = page_for(worker)
    page.goto(url("cases:detail", claimed_case.pk))
    expect(page.get_by_role("button", name="Submit decision")).to_be_visible()

    stops = walk_tab_order(page)

    order = [
        'a "Skip to main content"',
        'a "← Back to the queue"',
        'button "Keep working: extend my lease"',
        'button "Release back to the queue"',
        "input#resolution-select_po",
        "textarea#decision-note",
        'button#decide-submit "Submit decision"',
        'button "Save draft"',
        "textarea#request-question",
        'summary "Timeline (2 steps)"',
        'summary "History',
    ]
    positions = [position_of(stops, fragment) for fragment in order]
    assert positions == sorted(positions), [stops[i].description for i in positions]


def test_the_board_tab_order_is_logical_visible_and_free_of_traps(
    page_for, supervisor, worker, file_invoice_case
):
    file_invoice_case()
    page = page_for(supervisor)
    page.goto(url("cases:board"))
    expect(page.get_by_role("heading", name="Supervisor board")).to_be_visible()

    stops = walk_tab_order(page)

    order = [
        'a "Skip to main content"',
        'a#board-refresh "Refresh now"',
        "input#board-transfer-case",
        'button "Transfer the case"',
        "input#board-capacity-capacity",
        'button "Adjust capacity"',
        'button "Take off shift and return their cases"',
    ]
    positions = [position_of(stops, fragment) for fragment in order]
    assert positions == sorted(positions), [stops[i].description for i in positions]


# --- Keyboard shortcuts: there are none -------------------------------------------------------


def test_typing_letters_never_triggers_a_shortcut(page_for, worker, claimed_case):
    """The desk has no keyboard shortcuts (static/js/app.js binds no character keys), so
    typing can never fire one. Checked where a worker types, and on a focused link."""
    page = page_for(worker)
    page.goto(url("cases:queue"))
    page.evaluate("() => { window.__samePage = true; }")
    letters = "jknpqrsdgx?/.hc"

    search = page.get_by_label("Search case or summary")
    tab_to_visibly(page, search)
    page.keyboard.type(letters)
    expect(search).to_have_value(letters)
    tab_to_visibly(page, page.get_by_role("link", name=claimed_case.case_ref))
    page.keyboard.type(letters)
    assert page.evaluate("() => window.__samePage === true")
    expect(page).to_have_url(url("cases:queue"))

    page.goto(url("cases:detail", claimed_case.pk))
    page.evaluate("() => { window.__samePage = true; }")
    note = page.get_by_label("Reason or note")
    tab_to_visibly(page, note)
    page.keyboard.type(letters)
    expect(note).to_have_value(letters)
    expect(page.get_by_role("radio", name="Select the purchase order")).not_to_be_checked()
    assert page.evaluate("() => window.__samePage === true")
    expect(page).to_have_url(url("cases:detail", claimed_case.pk))
