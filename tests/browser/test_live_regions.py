"""What assistive technology is told, and where focus is, when a page changes under the
user: after every HTMX swap focus stays where it was or lands on the changed region (never
on <body>), meaningful changes are said once through a polite live region ("1 new case",
"Draft saved", "Case changed by another reviewer") and a poll that changed nothing says
nothing. The queue's sort state is exposed with aria-sort, a caption and header scopes.

The queue polls every 20 s. The tests never wait for that: Playwright's clock runs the
page's timers forward, and a few use the "Refresh now" link as a keyboard user would.
"""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from playwright.sync_api import Page, expect

from apps.cases.models import Case, Decision
from apps.cases.services import claim_case, transfer_case

from .factories import decide_select_po
from .harness import assert_focus_visible, expect_focus_on_region, live_region, tab_to, url
from .keyboard import (
    expect_focus_not_on_body,
    press_on,
    said,
    tab_to_visibly,
    wait_for_htmx_requests,
    watch_htmx_and_announcer,
)

POLL = "00:21"  # a little more than the queue's 20 s poll


def open_queue_with_clock(page: Page) -> None:
    """The queue with the page's timers under the test's control (time still flows)."""
    page.clock.install()
    page.goto(url("cases:queue"))
    expect(page.get_by_role("table", name="Cases in your queues")).to_be_visible()
    watch_htmx_and_announcer(page)


def poll(page: Page, done: int) -> None:
    """Let the queue's own 20 s timer fire, and wait until its request has finished."""
    page.clock.fast_forward(POLL)
    wait_for_htmx_requests(page, done)


def mark_table(page: Page) -> None:
    """Tag the rendered table so a test can tell whether a poll replaced it."""
    page.evaluate("() => { document.getElementById('queue-table').dataset.before = 'yes'; }")


def table_replaced(page: Page) -> bool:
    return bool(
        page.evaluate("() => document.getElementById('queue-table').dataset.before !== 'yes'")
    )


# --- The queue poll ------------------------------------------------------------------------


def test_a_poll_announces_new_cases_and_keeps_focus_on_the_link_the_user_was_on(
    page_for, worker, file_invoice_case
):
    first = file_invoice_case()
    page = page_for(worker)
    open_queue_with_clock(page)
    link = page.get_by_role("link", name=first.case_ref)
    tab_to_visibly(page, link)

    arrived = file_invoice_case()
    poll(page, 1)

    expect(page.get_by_role("link", name=arrived.case_ref)).to_be_visible()
    expect(live_region(page)).to_have_text("1 new case")
    expect(link).to_be_focused()
    assert_focus_visible(page)
    assert said(page) == ["1 new case"]


def test_a_poll_that_changed_nothing_swaps_nothing_and_says_nothing(
    page_for, worker, worker2, file_invoice_case
):
    case = file_invoice_case()
    page = page_for(worker)
    open_queue_with_clock(page)
    link = page.get_by_role("link", name=case.case_ref)
    tab_to_visibly(page, link)
    mark_table(page)

    poll(page, 1)  # nothing happened meanwhile
    assert not table_replaced(page)
    expect(link).to_be_focused()

    # A change that is not an arrival (a colleague claims the case) updates the table
    # silently; only arrivals are news.
    claim_case(case_id=case.pk, actor=worker2)
    poll(page, 2)
    expect(page.get_by_role("cell", name="walter")).to_be_visible()
    assert table_replaced(page)
    expect(link).to_be_focused()

    arrived = [file_invoice_case(), file_invoice_case()]
    poll(page, 3)
    expect(live_region(page)).to_have_text("2 new cases")
    # Three polls, one announcement: the silent ones said nothing at all.
    assert said(page) == ["2 new cases"]
    for new_case in arrived:
        expect(page.get_by_role("link", name=new_case.case_ref)).to_be_visible()


def test_refresh_now_by_keyboard_keeps_focus_on_the_link_and_announces_arrivals(
    page_for, worker, file_invoice_case
):
    file_invoice_case()
    page = page_for(worker)
    page.goto(url("cases:queue"))
    watch_htmx_and_announcer(page)
    refresh = page.get_by_role("link", name="Refresh now")

    arrived = file_invoice_case()
    press_on(page, refresh, "Enter")

    expect(page.get_by_role("link", name=arrived.case_ref)).to_be_visible()
    expect(live_region(page)).to_have_text("1 new case")
    expect(refresh).to_be_focused()
    assert_focus_visible(page)

    # Pressed again with nothing new: focus stays, nothing more is said.
    page.keyboard.press("Enter")
    wait_for_htmx_requests(page, 2)
    expect(refresh).to_be_focused()
    assert said(page) == ["1 new case"]


def test_when_a_poll_removes_the_focused_row_focus_moves_to_the_count_not_body(
    page_for, worker, worker2, file_invoice_case
):
    staying = file_invoice_case()
    leaving = claim_case(case_id=file_invoice_case().pk, actor=worker2)
    page = page_for(worker)
    open_queue_with_clock(page)
    tab_to_visibly(page, page.get_by_role("link", name=leaving.case_ref))

    decide_select_po(leaving, worker2)  # decided: it leaves the active list
    poll(page, 1)

    expect(page.get_by_role("link", name=leaving.case_ref)).to_have_count(0)
    expect_focus_not_on_body(page)
    expect(page.get_by_text("1 case", exact=True)).to_be_focused()
    assert_focus_visible(page)
    # And the keyboard goes on from there into the refreshed list.
    tab_to_visibly(page, page.get_by_role("link", name=staying.case_ref))


# --- The decision page ---------------------------------------------------------------------


def test_draft_saved_is_said_politely_while_focus_stays_in_the_note(page_for, worker, claimed_case):
    page = page_for(worker)
    page.goto(url("cases:detail", claimed_case.pk))
    note = page.get_by_label("Reason or note")
    tab_to_visibly(page, note)

    with page.expect_response(lambda response: "/draft" in response.url):
        page.keyboard.type("PO 781 looks right")

    status = page.locator("#draft-status")
    expect(status).to_have_text(
        f"Draft saved at {timezone.localtime().strftime('%H:%M')} UTC. A draft is not a decision."
    )
    # Said by the polite region around it, not by taking focus.
    region = status.locator("xpath=ancestor::*[@role='status'][1]")
    expect(region).to_have_count(1)
    expect(region).not_to_have_attribute("aria-live", "assertive")
    expect(note).to_be_focused()
    assert claimed_case.drafts.get(user=worker).note == "PO 781 looks right"


def test_case_changed_by_another_reviewer_moves_focus_to_the_conflict_and_says_so(
    page_for, supervisor, worker, worker2, claimed_case
):
    page = page_for(worker)
    page.goto(url("cases:detail", claimed_case.pk))
    press_on(page, page.get_by_role("radio", name="Select the purchase order"), "Space")
    press_on(page, page.get_by_role("radio", name="po_781"), "Space")
    page.keyboard.press("ArrowDown")
    expect(page.get_by_role("radio", name="po_799")).to_be_checked()
    # Meanwhile a supervisor hands the case to a colleague, who decides it.
    moved = transfer_case(
        case_id=claimed_case.pk,
        actor=supervisor,
        to_user=worker2,
        reason="Walter knows this vendor",
        note="",
    )
    decide_select_po(moved, worker2)

    with page.expect_response(lambda response: response.status == 409):
        press_on(page, page.get_by_role("button", name="Submit decision"), "Enter")

    title = page.get_by_role("heading", name="Case changed by another reviewer")
    expect_focus_on_region(page, title)
    assert_focus_visible(page)
    expect(live_region(page)).to_contain_text("Case changed by another reviewer. ")
    expect(live_region(page)).to_contain_text("Your decision was not recorded.")
    # What won is shown, and the reload is the way on.
    expect(page.get_by_text("walter", exact=True)).to_be_visible()
    tab_to_visibly(page, page.get_by_role("link", name="Reload the case"))
    decision = Decision.objects.get(case=claimed_case)
    assert (decision.actor, decision.fields) == (worker2, {"po_number": "po_781"})


def test_extending_the_lease_keeps_focus_on_the_button_and_says_until_when(
    page_for, worker, claimed_case
):
    page = page_for(worker)
    page.goto(url("cases:detail", claimed_case.pk))
    before = claimed_case.lease_expires_at
    button = page.get_by_role("button", name="Keep working: extend my lease")

    with page.expect_response(lambda response: "/renew" in response.url):
        press_on(page, button, "Enter")

    expect(live_region(page)).to_contain_text("Lease extended until ")
    expect(button).to_be_focused()
    claimed_case.refresh_from_db()
    assert claimed_case.lease_expires_at > before


def test_a_lease_taken_away_is_said_when_the_worker_next_acts(
    page_for, supervisor, worker, worker2, claimed_case
):
    """The lease is renewed on the worker's activity; when it is gone (a supervisor gave
    the case to a colleague meanwhile), the page says so instead of failing silently, and
    focus stays on the button the worker pressed."""
    page = page_for(worker)
    page.goto(url("cases:detail", claimed_case.pk))
    transfer_case(
        case_id=claimed_case.pk, actor=supervisor, to_user=worker2, reason="Rebalancing", note=""
    )
    button = page.get_by_role("button", name="Keep working: extend my lease")

    with page.expect_response(lambda response: response.status == 409):
        press_on(page, button, "Enter")

    expect(page.locator("#lease-expiry")).to_have_text(
        "You no longer hold this case's lease. Reload the case before you decide."
    )
    expect(live_region(page)).not_to_have_text("")
    expect(button).to_be_focused()


# --- Sort state ----------------------------------------------------------------------------


def sort_states(page: Page) -> dict[str, str | None]:
    return dict(
        page.evaluate(
            """() => Array.from(document.querySelectorAll("table.queue thead th"))
                .map(th => [th.textContent.replace(/[▲▼↕]/g, "").trim(),
                            th.getAttribute("aria-sort")])"""
        )
    )


def test_sorting_by_keyboard_moves_aria_sort_and_keeps_focus_on_the_header(
    page_for, worker, file_invoice_case
):
    later = file_invoice_case()
    sooner = file_invoice_case()
    Case.objects.filter(pk=sooner.pk).update(due_at=timezone.now() + timedelta(hours=1))
    Case.objects.filter(pk=later.pk).update(due_at=timezone.now() + timedelta(hours=30))
    page = page_for(worker)
    page.goto(url("cases:queue"))
    table = page.get_by_role("table", name="Cases in your queues")

    # The caption names the table and its order; every header has its scope.
    expect(page.locator("table.queue caption")).to_contain_text(
        "Cases in your queues, sorted by priority, ascending"
    )
    assert page.locator("table.queue th:not([scope])").count() == 0
    assert page.locator("table.queue thead th[scope='col']").count() == 7
    assert page.locator("table.queue tbody th[scope='row']").count() == 2
    states = sort_states(page)
    assert states.pop("Priority") == "ascending"
    assert set(states.values()) == {None}

    due = page.get_by_role("link", name="Due")
    press_on(page, due, "Enter")
    expect(page).to_have_url(f"{url('cases:queue')}?sort=due")
    # After the reload focus is back on the header the user pressed.
    expect(due).to_be_focused()
    assert_focus_visible(page)
    states = sort_states(page)
    assert states.pop("Due") == "ascending"
    assert set(states.values()) == {None}
    expect(table.get_by_role("row").nth(1)).to_contain_text(sooner.case_ref)

    page.keyboard.press("Enter")  # the sorted column's link toggles the direction
    expect(page).to_have_url(f"{url('cases:queue')}?sort=-due")
    expect(due).to_be_focused()
    assert sort_states(page)["Due"] == "descending"
    expect(page.locator("table.queue caption")).to_contain_text("sorted by due, descending")
    expect(table.get_by_role("row").nth(1)).to_contain_text(later.case_ref)
    assert tab_to(page, page.get_by_role("link", name="Age")) == 1


# --- The supervisor board poll ---------------------------------------------------------------


def test_refreshing_an_unchanged_board_keeps_focus_and_says_nothing(
    page_for, supervisor, file_invoice_case
):
    file_invoice_case()
    page = page_for(supervisor)
    page.goto(url("cases:board"))
    watch_htmx_and_announcer(page)
    refresh = page.get_by_role("link", name="Refresh now")

    with page.expect_response(lambda response: response.status == 204):
        press_on(page, refresh, "Enter")
    wait_for_htmx_requests(page, 1)

    expect(refresh).to_be_focused()
    assert said(page) == []
