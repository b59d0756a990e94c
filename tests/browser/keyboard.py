"""Keyboard helpers for the journeys and live-region tests: Tab to a control and check the
focus can be seen, walk a page's whole tab order (no trap, every stop visible), and wait
for htmx requests the page makes by itself (the queue poll) without sleeping."""

from __future__ import annotations

from dataclasses import dataclass

from playwright.sync_api import Locator, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from .harness import assert_focus_visible, tab_to

# A page's whole tab order is longer than one journey step (MAX_TAB_PRESSES in harness.py);
# the decision page with every control has about 60 stops.
MAX_TAB_STOPS = 200


def tab_to_visibly(page: Page, target: Locator, *, backwards: bool = False) -> int:
    """Tab (or Shift+Tab) to `target`, then check that where the focus is can be seen."""
    presses = tab_to(page, target, backwards=backwards)
    assert_focus_visible(page)
    return presses


def press_on(page: Page, target: Locator, key: str) -> None:
    """Tab to `target`, visibly, and press `key` on it."""
    tab_to_visibly(page, target)
    page.keyboard.press(key)


def expect_focus_not_on_body(page: Page) -> None:
    """Focus is somewhere a keyboard user can continue from, not lost on <body>."""
    page.wait_for_function(
        "() => document.activeElement && document.activeElement !== document.body",
        timeout=5000,
    )


def expect_focus_within(page: Page, region: Locator, *, timeout: float = 5000) -> None:
    """Focus is on `region` or inside it. Waits: htmx moves focus in its settle step and
    app.js on DOMContentLoaded, just after the content appears."""
    try:
        page.wait_for_function(
            """region => document.activeElement !== document.body
                && region.contains(document.activeElement)""",
            arg=region.element_handle(),
            timeout=timeout,
        )
    except PlaywrightTimeoutError as timeout_error:
        focused = page.evaluate("() => document.activeElement.outerHTML.slice(0, 200)")
        raise AssertionError(f"focus is not within {region}; it is on {focused}") from timeout_error


@dataclass(frozen=True)
class Stop:
    """One place the Tab key stopped: enough to name it in a failure message."""

    key: str  # identity of the element within the page (its index in the document)
    description: str


def _focused_stop(page: Page) -> Stop | None:
    found = page.evaluate(
        """() => {
            const element = document.activeElement;
            if (!element || element === document.body || element === document.documentElement) {
                return null;
            }
            const index = Array.prototype.indexOf.call(document.querySelectorAll("*"), element);
            const name = (element.getAttribute("aria-label") || element.textContent
                || element.value || "").replace(/\\s+/g, " ").trim().slice(0, 60);
            const id = element.id ? "#" + element.id : "";
            const tag = element.tagName.toLowerCase();
            return {key: String(index), description: `${tag}${id} "${name}"`};
        }"""
    )
    return Stop(**found) if found else None


def walk_tab_order(page: Page, *, limit: int = MAX_TAB_STOPS) -> list[Stop]:
    """Press Tab from the top of the page until focus comes back round to the first stop,
    checking at every stop that the focus is visible. Returns the stops in order.

    A keyboard trap fails it: the walk must wrap around within `limit` presses, and no
    control may be met again after focus left it (focus stuck cycling inside a widget).
    Consecutive stops on one control (the day, month and year of a date input) are one."""
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.evaluate("() => window.scrollTo(0, 0)")
    stops: list[Stop] = []
    seen: set[str] = set()
    for _ in range(limit):
        page.keyboard.press("Tab")
        stop = _focused_stop(page)
        if stop is None:
            # Past the last control focus leaves the document; the next Tab starts over.
            continue
        if stops and stop.key == stops[0].key:
            return stops
        if stops and stop.key == stops[-1].key:
            # Still the same control: Tab steps through the parts of a date-time input.
            continue
        assert stop.key not in seen, (
            f"keyboard trap: Tab came back to {stop.description} after "
            f"{[s.description for s in stops[-5:]]}"
        )
        assert_focus_visible(page)
        seen.add(stop.key)
        stops.append(stop)
    raise AssertionError(f"Tab did not come round to the start in {limit} presses: {stops[-5:]}")


def position_of(stops: list[Stop], fragment: str) -> int:
    """The index of the first stop whose description contains `fragment`."""
    for index, stop in enumerate(stops):
        if fragment in stop.description:
            return index
    raise AssertionError(f"no tab stop matches {fragment!r}: {[s.description for s in stops]}")


# --- What the page does by itself: polls and announcements ---------------------------------


def watch_htmx_and_announcer(page: Page) -> None:
    """From now on, count finished htmx requests (window.__htmxDone) and record every text
    the polite live region takes (window.__said), so a test can wait for a poll without
    sleeping and then compare everything that was said."""
    page.evaluate(
        """() => {
            window.__htmxDone = 0;
            window.__said = [];
            document.addEventListener("htmx:afterRequest", () => { window.__htmxDone += 1; });
            const announcer = document.getElementById("announcer");
            new MutationObserver(() => {
                const text = announcer.textContent.trim();
                if (text) window.__said.push(text);
            }).observe(announcer, {childList: true, characterData: true, subtree: true});
        }"""
    )


def wait_for_htmx_requests(page: Page, count: int, *, timeout: float = 10000) -> None:
    """Wait until `count` htmx requests have finished since watch_htmx_and_announcer."""
    page.wait_for_function(f"() => window.__htmxDone >= {count}", timeout=timeout)


def said(page: Page) -> list[str]:
    """Everything the live region said since watch_htmx_and_announcer, in order."""
    return list(page.evaluate("() => window.__said"))
