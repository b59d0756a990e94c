"""The queue, the decision page (claimed) and the supervisor board for people who zoom,
use forced colours, ask for less motion or do not tell colours apart, checked in a real
Chromium:

- 320 CSS px wide (WCAG 1.4.10: 400 % zoom of a 1280 px window; device_scale_factor
  does not reflow, a narrow viewport does): the page never scrolls sideways, and every
  control can be brought fully into view, tables scrolling inside their own region;
- forced colours (Windows high contrast), where box-shadow rings and colours vanish: the
  focused link, button, field, radio, checkbox, summary and scroll region still draw an
  outline, a checked radio or checkbox looks different from an unchecked one, and the
  current page in the navigation is still marked;
- prefers-reduced-motion: no animation or transition on any element lasts longer than
  0.01 s;
- no meaning by colour alone: every priority band cell says P1 to P4, every state and
  reason cell has words, an overdue time says "overdue", and every invalid field is
  marked aria-invalid with a text message tied to it.

Screenshots of each page under forced colours are saved next to the others."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Locator, Page, expect

from apps.cases.models import CapacityAlert, Case
from apps.cases.services import claim_case

from .harness import NARROW, VIEWPORT, save_screenshot, url

HOUR = timedelta(hours=1)
SCREENS = ["queue", "decision", "board"]

# Every control a keyboard can reach, and the scrollable table regions.
FOCUSABLE = (
    'a[href], button, input:not([type="hidden"]), select, textarea, summary, '
    '[tabindex]:not([tabindex="-1"])'
)


def overdue(case: Case) -> Case:
    """Filing stamps "now"; a breached case is one filed days ago and due an hour ago. A
    test-only write of facts (no service moves a case back in time)."""
    now = timezone.now()
    Case.objects.filter(pk=case.pk).update(
        created_at=now - 72 * HOUR, due_at=now - HOUR, original_due_at=now - HOUR
    )
    case.refresh_from_db()
    return case


def open_every_detail(page: Page) -> None:
    page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")


@pytest.fixture
def queue(page_for, worker, worker2, file_invoice_case) -> Page:
    """Wendy's queue: an overdue case, a case walter holds and an open one."""
    overdue(file_invoice_case())
    claim_case(case_id=file_invoice_case().pk, actor=worker2)
    file_invoice_case()
    page = page_for(worker)
    page.goto(url("cases:queue"))
    expect(page.get_by_role("table", name="Cases in your queues").get_by_role("row")).to_have_count(
        4
    )
    return page


@pytest.fixture
def decision(page_for, worker, claimed_case) -> Page:
    page = page_for(worker)
    page.goto(url("cases:detail", claimed_case.pk))
    expect(page.get_by_role("button", name="Submit decision")).to_be_visible()
    return page


@pytest.fixture
def board(page_for, supervisor, worker, file_invoice_case) -> Page:
    """Sam's board: a breached case, a case nobody eligible can take, a case wendy holds."""
    overdue(file_invoice_case())
    stranded = file_invoice_case()
    CapacityAlert.objects.create(
        case=stranded,
        queue=stranded.queue,
        explanation="Nobody on shift has the clearance this case needs.",
        raised_at=timezone.now() - timedelta(minutes=4),
    )
    claim_case(case_id=file_invoice_case().pk, actor=worker)
    page = page_for(supervisor)
    page.goto(url("cases:board"))
    expect(page.get_by_role("heading", name="No eligible worker: 1 case")).to_be_visible()
    return page


def screen(request: pytest.FixtureRequest, name: str) -> Page:
    page: Page = request.getfixturevalue(name)
    return page


# --- Reflow at 320 CSS px ------------------------------------------------------------------


@pytest.mark.parametrize("name", SCREENS)
def test_at_320_px_the_page_never_scrolls_sideways_and_every_control_comes_into_view(request, name):
    page = screen(request, name)
    open_every_detail(page)
    page.set_viewport_size({"width": NARROW, "height": VIEWPORT["height"]})

    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= NARROW, f"the {name} page is {width}px wide at {NARROW}px"
    checked, out_of_reach = page.evaluate(
        """([selector, width]) => {
            const out = [];
            let checked = 0;
            for (const control of document.querySelectorAll(selector)) {
                if (!control.checkVisibility({ visibilityProperty: true })) continue;
                checked += 1;
                control.scrollIntoView({ block: "center", inline: "nearest" });
                const box = control.getBoundingClientRect();
                if (window.scrollX !== 0 || box.left < 0 || box.right > width + 0.5) {
                    out.push(`${control.outerHTML.slice(0, 80)}: ${box.left}..${box.right}`);
                }
            }
            return [checked, out];
        }""",
        [FOCUSABLE, NARROW],
    )
    assert checked >= 10, f"only {checked} controls found on the {name} page"
    assert out_of_reach == [], f"controls beyond {NARROW}px on the {name} page: {out_of_reach}"


# --- Forced colours ------------------------------------------------------------------------


def focus_indicator_of(page: Page, control: Locator) -> dict[str, Any]:
    """Focus `control` as the keyboard would (after a key press, so :focus-visible
    applies) and read the indicator it draws."""
    control.scroll_into_view_if_needed()
    return control.evaluate(
        """element => {
            element.focus();
            const style = getComputedStyle(element);
            return {
                element: element.outerHTML.slice(0, 80),
                focusVisible: element.matches(":focus-visible"),
                outlineStyle: style.outlineStyle,
                outlineWidth: parseFloat(style.outlineWidth),
                boxShadow: style.boxShadow,
            };
        }"""
    )


# One control of each kind on each page, found by what a screen reader would announce
# (a <summary> has no role of its own).
CONTROLS: dict[str, list[Callable[[Page], Locator]]] = {
    "queue": [
        lambda page: page.get_by_role("link", name="Refresh now"),
        lambda page: page.get_by_role("button", name="Next case"),
        lambda page: page.get_by_role("searchbox", name="Search case or summary"),
        lambda page: page.get_by_role("combobox", name="State"),
        lambda page: page.get_by_role("checkbox", name="Only cases I hold"),
        lambda page: page.get_by_role("region", name="Cases in your queues"),
    ],
    "decision": [
        lambda page: page.get_by_role("link", name="Back to the queue"),
        lambda page: page.get_by_role("button", name="Submit decision"),
        lambda page: page.get_by_role("radio", name="Select the purchase order"),
        lambda page: page.get_by_role("textbox", name="Reason or note"),
        lambda page: page.locator("summary", has_text="Timeline"),
    ],
    "board": [
        lambda page: page.get_by_role("link", name="Refresh now"),
        lambda page: page.get_by_role("button", name="Adjust capacity"),
        lambda page: page.get_by_role("textbox", name="Case id or reference").first,
        lambda page: page.get_by_role("combobox", name="Worker").first,
        lambda page: page.get_by_role("radio", name="P1", exact=True),
        lambda page: page.get_by_role("region", name="Workers of your queues"),
        lambda page: page.locator("summary", has_text="How these figures are counted"),
    ],
}


# On each page, a choice whose checked state must show without colour.
CHOICES: dict[str, Callable[[Page], Locator]] = {
    "queue": lambda page: page.get_by_role("checkbox", name="Only cases I hold"),
    "decision": lambda page: page.get_by_role("radio", name="Select the purchase order"),
    "board": lambda page: page.get_by_role("radio", name="P2", exact=True),
}


def controls_without_focus_outline(page: Page, name: str) -> list[dict[str, Any]]:
    page.keyboard.press("Tab")  # keyboard modality: programmatic focus is :focus-visible
    missing = []
    for find in CONTROLS[name]:
        indicator = focus_indicator_of(page, find(page))
        assert indicator["focusVisible"], indicator
        if indicator["outlineStyle"] == "none" or indicator["outlineWidth"] <= 0:
            missing.append(indicator)
    return missing


def checked_looks_like_unchecked(page: Page, choice: Locator) -> bool:
    """Pictures of the choice before and after checking it, focus and pointer elsewhere."""
    choice.scroll_into_view_if_needed()
    page.locator("h1").click()
    page.mouse.move(0, 0)
    unchecked = choice.screenshot()
    choice.check()
    page.locator("h1").click()
    expect(choice).to_be_checked()
    return choice.screenshot() == unchecked


def navigation_marks(page: Page) -> tuple[list[Any], list[Any]]:
    """(weight, underline thickness) of the current page's link and of the others: both
    survive forced colours, a colour would not."""
    styles = (
        page.get_by_role("navigation", name="Main")
        .get_by_role("link")
        .evaluate_all(
            """links => links.map(link => [
                link.getAttribute("aria-current") === "page",
                getComputedStyle(link).fontWeight,
                getComputedStyle(link).textDecorationThickness,
            ])"""
        )
    )
    current = [tuple(style[1:]) for style in styles if style[0]]
    others = [tuple(style[1:]) for style in styles if not style[0]]
    return current, others


@pytest.mark.parametrize("name", SCREENS)
def test_under_forced_colours_focus_checked_choices_and_the_current_page_stay_visible(
    request, name
):
    page = screen(request, name)
    page.emulate_media(forced_colors="active")
    assert page.evaluate("() => matchMedia('(forced-colors: active)').matches")

    missing = controls_without_focus_outline(page, name)
    save_screenshot(page, f"{name}-forced-colours")
    assert missing == [], f"no outline under forced colours (box-shadow is dropped): {missing}"

    assert not checked_looks_like_unchecked(page, CHOICES[name](page)), (
        f"a checked choice on the {name} page looks unchecked under forced colours"
    )

    current, others = navigation_marks(page)
    assert len(current) == 1, (current, others)
    assert current[0] not in others, f"the current page is not marked: {current} {others}"


# --- Reduced motion ------------------------------------------------------------------------


@pytest.mark.parametrize("name", SCREENS)
def test_with_reduced_motion_nothing_animates_or_transitions_longer_than_a_hundredth_second(
    request, name
):
    page = screen(request, name)
    page.emulate_media(reduced_motion="reduce")
    assert page.evaluate("() => matchMedia('(prefers-reduced-motion: reduce)').matches")
    open_every_detail(page)

    moving = page.evaluate(
        """() => {
            const seconds = value => value.split(",").map(part => {
                part = part.trim();
                return part.endsWith("ms") ? parseFloat(part) / 1000 : parseFloat(part);
            });
            const longest = value => Math.max(...seconds(value));
            const out = [];
            for (const element of document.querySelectorAll("*")) {
                for (const pseudo of [null, "::before", "::after"]) {
                    const style = getComputedStyle(element, pseudo);
                    const animation = style.animationName !== "none"
                        ? longest(style.animationDuration) : 0;
                    const transition = longest(style.transitionDuration);
                    if (animation > 0.01 || transition > 0.01) {
                        out.push(`${element.tagName}${pseudo || ""}: ${animation}s/${transition}s`);
                    }
                }
            }
            const scrolling = getComputedStyle(document.documentElement).scrollBehavior;
            if (scrolling !== "auto") out.push(`html scroll-behavior: ${scrolling}`);
            return out;
        }"""
    )
    assert moving == [], f"motion on the {name} page despite prefers-reduced-motion: {moving}"


# --- No meaning by colour alone ------------------------------------------------------------

BAND = re.compile(r"^P[1-4]\b")


def cell_texts(page: Page, selector: str) -> list[str]:
    return page.locator(selector).evaluate_all(
        "cells => cells.map(cell => cell.innerText.replace(/\\s+/g, ' ').trim())"
    )


def test_queue_says_band_state_owner_and_overdue_in_words(queue):
    rows = queue.get_by_role("table", name="Cases in your queues").locator("tbody tr")
    expect(rows).to_have_count(3)

    bands = cell_texts(queue, "table.queue tbody tr td:nth-child(1)")
    states = cell_texts(queue, "table.queue tbody tr td:nth-child(7)")
    owners = cell_texts(queue, "table.queue tbody tr td:nth-child(6)")
    late = cell_texts(queue, "table.queue .overdue")

    assert len(bands) == 3 and all(BAND.match(band) for band in bands), bands
    assert sorted(states) == ["Claimed", "Open", "Open"], states
    assert sorted(owners) == ["Unassigned", "Unassigned", "walter"], owners
    assert len(late) == 1 and late[0].startswith("(overdue by "), late


def test_decision_page_says_band_and_state_in_words(decision):
    facts = decision.locator(".case-facts")
    expect(facts.get_by_role("definition").filter(has_text="Claimed")).to_have_count(1)
    priority = decision.locator("dt", has_text="Priority").locator("xpath=following-sibling::dd")
    expect(priority).to_have_text(re.compile(r"^P[1-4]: "))


def test_board_says_band_reason_shift_and_alert_in_words(board):
    bands = cell_texts(board, "table.board-attention tbody tr td:nth-child(3)")
    reasons = cell_texts(board, "table.board-attention tbody tr td:nth-child(6)")
    shifts = cell_texts(board, "table.board-workers tbody tr td:nth-child(2)")
    queue_row = cell_texts(board, "#queue-row-accounts_payable td")

    assert bands and all(BAND.match(band) for band in bands), bands
    assert sorted(reasons) == ["Breached", "No eligible worker"], reasons
    assert shifts and all(shift in {"On shift", "Off shift"} for shift in shifts), shifts
    assert "1 breached" in queue_row and "1 alert" in queue_row, queue_row


def invalid_fields_without_words(page: Page) -> list[str]:
    """Each field marked invalid must have an error message in words tied to it, and each
    field drawn as invalid (the red bar) must be marked for assistive technology too."""
    return page.evaluate(
        """() => {
            const out = [];
            for (const field of document.querySelectorAll("[aria-invalid=true]")) {
                const ids = (field.getAttribute("aria-describedby") || "").split(/\\s+/);
                const words = ids.map(id => document.getElementById(id))
                    .filter(node => node && node.classList.contains("field-error"))
                    .map(node => node.textContent.trim()).join(" ");
                if (!words.replace(/^Error:\\s*/, "")) out.push(field.outerHTML.slice(0, 80));
            }
            for (const box of document.querySelectorAll(".field-invalid")) {
                const marked = box.matches("fieldset[aria-describedby]")
                    || box.querySelector("[aria-invalid=true], fieldset[aria-describedby]");
                const message = box.querySelector(".field-error");
                if (!marked || !message || !message.textContent.trim()) {
                    out.push(box.outerHTML.slice(0, 80));
                }
            }
            return out;
        }"""
    )


def test_decision_form_errors_are_words_tied_to_their_fields(decision):
    decision.get_by_role("radio", name="Select the purchase order").check()

    with decision.expect_response(lambda response: response.status == 422):
        decision.get_by_role("button", name="Submit decision").click()

    expect(decision.get_by_role("heading", name="There is a problem")).to_be_visible()
    expect(decision.locator(".field-invalid")).not_to_have_count(0)
    assert invalid_fields_without_words(decision) == []


def test_board_form_errors_are_words_tied_to_their_fields(board):
    with board.expect_response(lambda response: response.status == 422):
        board.get_by_role("button", name="Adjust capacity").click()

    expect(board.locator("#board-capacity-errors")).to_be_visible()
    expect(board.locator("[aria-invalid=true]")).not_to_have_count(0)
    assert invalid_fields_without_words(board) == []
