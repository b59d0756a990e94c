"""What every browser test checks, so that each new page gets the same treatment: the axe
scan, screenshots at two widths with a reflow check, logging in through the form, and the
keyboard helpers (Tab until a control has focus, is focus visible, what the live region
says)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from axe_playwright_python.sync_playwright import Axe
from django.urls import reverse
from playwright.sync_api import Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

ARTIFACTS = Path(os.environ.get("TEST_ARTIFACTS", Path(__file__).parents[2] / "test-artifacts"))
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
WIDE, NARROW = 1280, 320
VIEWPORT = {"width": WIDE, "height": 900}
# The longest tab sequence a journey may need before it counts as "unreachable".
MAX_TAB_PRESSES = 60

_axe = Axe()


def url(name: str, *args: Any) -> str:
    """A path on the live server (the context's base_url supplies the origin)."""
    return reverse(name, args=args)


def assert_no_axe_violations(page: Page, *, context: str | None = None) -> None:
    """Zero WCAG 2.0/2.1/2.2 A and AA violations on the page as it is now."""
    results = _axe.run(
        page,
        context=context,
        options={"runOnly": {"type": "tag", "values": WCAG_TAGS}, "resultTypes": ["violations"]},
    )
    assert results.violations_count == 0, results.generate_report()


def save_screenshot(page: Page, name: str, *, directory: Path = ARTIFACTS) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def capture_widths(page: Page, name: str, *, directory: Path = ARTIFACTS) -> None:
    """Full-page screenshots at 1280 px and 320 px (WCAG 1.4.10 reflow: 320 CSS px is
    400 % zoom of a 1280 px window), and the narrow page must not scroll sideways."""
    save_screenshot(page, f"{name}-{WIDE}", directory=directory)
    page.set_viewport_size({"width": NARROW, "height": VIEWPORT["height"]})
    try:
        overflow = page.evaluate(
            "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        save_screenshot(page, f"{name}-{NARROW}", directory=directory)
        assert overflow <= 0, f"{name} scrolls sideways by {overflow}px at {NARROW}px"
    finally:
        page.set_viewport_size(VIEWPORT)


def log_in(page: Page, username: str, password: str) -> None:
    """The login form, driven by its accessible names."""
    page.goto(url("login"))
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()


# --- Keyboard --------------------------------------------------------------------------


def is_focused(locator: Locator) -> bool:
    return bool(locator.evaluate("element => element === document.activeElement"))


def tab_to(
    page: Page, target: Locator, *, backwards: bool = False, limit: int = MAX_TAB_PRESSES
) -> int:
    """Press Tab (or Shift+Tab) until `target` has focus; returns the number of presses.
    Bounded, so an unreachable control or a keyboard trap fails instead of hanging."""
    expect(target).to_have_count(1)  # exists and is unambiguous, before counting presses
    key = "Shift+Tab" if backwards else "Tab"
    for presses in range(1, limit + 1):
        page.keyboard.press(key)
        if is_focused(target):
            return presses
    raise AssertionError(f"{target} not reached in {limit} presses of {key}")


def focus_indicator(page: Page) -> dict[str, str]:
    """The computed outline and box-shadow of whatever has focus now."""
    return page.evaluate(
        """() => {
            const style = getComputedStyle(document.activeElement);
            return {
                tag: document.activeElement.tagName,
                outlineStyle: style.outlineStyle,
                outlineWidth: style.outlineWidth,
                boxShadow: style.boxShadow,
            };
        }"""
    )


def assert_focus_visible(page: Page) -> None:
    """WCAG 2.4.7: the focused element draws an outline or a focus ring."""
    indicator = focus_indicator(page)
    has_outline = indicator["outlineStyle"] != "none" and indicator["outlineWidth"] != "0px"
    has_ring = indicator["boxShadow"] != "none"
    assert has_outline or has_ring, f"no visible focus indicator: {indicator}"


def expect_focus_on_region(page: Page, title: Locator, *, timeout: float = 5000) -> None:
    """Wait until focus is on the region that holds `title` (its heading), not on <body>.
    htmx moves focus in its settle step, just after the new content appears, so this
    waits rather than reading document.activeElement once."""
    handle = title.element_handle()
    try:
        page.wait_for_function(
            """heading => document.activeElement !== document.body
                && document.activeElement.contains(heading)""",
            arg=handle,
            timeout=timeout,
        )
    except PlaywrightTimeoutError as timeout_error:
        focused = page.evaluate("() => document.activeElement.outerHTML.slice(0, 200)")
        message = f"focus is not on the region of {title}; it is on {focused}"
        raise AssertionError(message) from timeout_error


def live_region(page: Page) -> Locator:
    """The page's polite live region (base.html). Found by id: the decision page has more
    than one role=status (the draft status too)."""
    return page.locator("#announcer")
