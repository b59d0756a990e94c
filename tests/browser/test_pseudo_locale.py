"""The queue and decision pages in a pseudo-locale: every translated text comes back
accented, bracketed and about 40 % longer (as German or Finnish often are), and the pages
must still fit at 1280 px and at 320 px: no sideways scrolling, no clipped text, no
control drawn over another. Screenshots go to test-artifacts/pseudo-*.png.

No catalogue is compiled (that would need GNU gettext on the machine): the translation
object Django keeps for "eo" (Esperanto, a language Django knows, standing in for the
pseudo-locale) is replaced, for the test, by one that makes up the pseudo text for any
message it is asked for. The live server runs in a thread of this process, so it uses
the same object; the browser asks for "eo" with Django's language cookie.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.utils.translation import trans_real
from playwright.sync_api import Page, expect

from apps.cases.models import Case
from apps.cases.services import claim_case
from apps.preferences import services as preferences

from .harness import NARROW, VIEWPORT, WIDE, save_screenshot, url

PSEUDO_LANGUAGE = "eo"
EXPANSION = 1.4
_PLAIN = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_ACCENTED = "àƀçđéƒĝĥîĵķļɱñöþǫŕšţûṽŵẋýžÀßÇĐÉƑĜĤÎĴĶĻṀÑÖÞǪŔŠŢÛṼŴẊÝŽ"
_ACCENTS = str.maketrans(_PLAIN, _ACCENTED)
_VOWELS = set("aeiouAEIOU")
# What must come through untouched: %-placeholders, {}-placeholders, HTML tags, entities.
_KEEP = re.compile(
    r"(%\([^)]*\)[-#0 +]*\d*(?:\.\d+)?[a-zA-Z]|%[-#0 +]*\d*(?:\.\d+)?[sdifr%]"
    r"|\{[^{}]*\}|<[^>]*>|&#?\w+;)"
)


def pseudo(message: str) -> str:
    """ "Queue" -> "[Ǫûûéûûéé]": accented, vowels doubled, bracketed, at least 40 % longer;
    placeholders and markup stay as they are, so formatting and HTML still work."""
    if not message:
        return message
    parts = _KEEP.split(message)
    text_length = sum(len(part) for part in parts[::2])
    out = []
    for index, part in enumerate(parts):
        if index % 2:
            out.append(part)
        else:
            out.append("".join(ch.translate(_ACCENTS) * (2 if ch in _VOWELS else 1) for ch in part))
    grown = "".join(out)
    grown_text = sum(len(part) for part in out[::2]) + 2  # the brackets
    missing = math.ceil(text_length * EXPANSION) - grown_text
    padding = " " + "~" * missing if missing > 0 else ""
    return f"[{grown}{padding}]"


def _message_of(message: str) -> str:
    # pgettext asks for "context\x04message"; the context is not shown.
    return message.rsplit(trans_real.CONTEXT_SEPARATOR, 1)[-1]


class PseudoTranslation(trans_real.DjangoTranslation):
    """Django's "eo" translation object, answering every message with its pseudo text."""

    def __init__(self) -> None:
        super().__init__(PSEUDO_LANGUAGE)

    def gettext(self, message: str) -> str:
        return pseudo(_message_of(message))

    def ngettext(self, singular: str, plural: str, number: int) -> str:
        return pseudo(_message_of(singular if number == 1 else plural))


@pytest.fixture
def pseudo_locale(settings: Any, live_server: Any) -> Iterator[Callable[[Page], None]]:
    """Turn the pseudo-locale on for the live server; returns a function that makes a
    page's context ask for it."""
    settings.LANGUAGES = [*django_settings.LANGUAGES, (PSEUDO_LANGUAGE, "Pseudo")]
    # Changing LANGUAGES empties Django's translation cache, so this goes in afterwards;
    # the settings fixture's restore empties it again, which removes it.
    trans_real._translations[PSEUDO_LANGUAGE] = PseudoTranslation()

    def use(page: Page) -> None:
        page.context.add_cookies(
            [
                {
                    "name": django_settings.LANGUAGE_COOKIE_NAME,
                    "value": PSEUDO_LANGUAGE,
                    "url": live_server.url,
                }
            ]
        )

    yield use


# --- What the page must not do ----------------------------------------------------------

# Every visible element whose content does not fit its box. Overflow that scrolls (the
# tables' own scroll regions) is the design; hidden or clipped overflow cuts text off,
# and visible overflow outside a scroll region runs over whatever is next to it.
CLIPPED_TEXT = """
() => {
  const problems = [];
  const SKIPPED = ["INPUT", "SELECT", "TEXTAREA", "SCRIPT", "STYLE", "OPTION"];
  const scrolls = (style) => ["auto", "scroll"].includes(style.overflowX);
  const inScroller = (element) => {
    for (let up = element.parentElement; up; up = up.parentElement) {
      if (scrolls(getComputedStyle(up))) return true;
    }
    return false;
  };
  const describe = (element) => {
    const id = element.id ? "#" + element.id : "";
    const cls = element.className && typeof element.className === "string"
      ? "." + element.className.trim().split(/\\s+/).join(".") : "";
    return element.tagName.toLowerCase() + id + cls + " “" +
      element.textContent.trim().replace(/\\s+/g, " ").slice(0, 60) + "”";
  };
  for (const element of document.body.querySelectorAll("*")) {
    if (SKIPPED.includes(element.tagName)) continue;
    if (!element.textContent.trim()) continue;
    if (!element.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) continue;
    const style = getComputedStyle(element);
    if (style.display === "inline" || style.display === "contents") continue;
    const box = element.getBoundingClientRect();
    if (box.width <= 1 || box.height <= 1) continue;  // visually hidden, for screen readers
    if (scrolls(style)) continue;
    const hides = (value) => ["hidden", "clip"].includes(value);
    const wide = element.scrollWidth > element.clientWidth + 1;
    const tall = element.scrollHeight > element.clientHeight + 1;
    if ((hides(style.overflowX) && wide) || (hides(style.overflowY) && tall)) {
      problems.push("clipped: " + describe(element));
    } else if (wide && !hides(style.overflowX) && !inScroller(element)) {
      problems.push("runs out of its box by " + (element.scrollWidth - element.clientWidth) +
        "px: " + describe(element));
    }
  }
  return problems;
}
"""

# Pairs of controls (links, buttons, fields, labels, summaries) whose drawn boxes overlap.
# Each line box of a wrapped link counts on its own, and what a scroll region hides is
# cut off first, so only what a user sees is compared.
OVERLAPPING_CONTROLS = """
() => {
  const selector = "a[href], button, input:not([type=hidden]), select, textarea, summary, " +
    "label, [tabindex]:not([tabindex='-1'])";
  const controls = [...document.body.querySelectorAll(selector)].filter((element) =>
    element.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true }) &&
    !element.classList.contains("skip-link"));
  const clipOf = (element) => {
    let clip = { left: -Infinity, top: -Infinity, right: Infinity, bottom: Infinity };
    for (let up = element.parentElement; up; up = up.parentElement) {
      const style = getComputedStyle(up);
      if (style.overflowX !== "visible" || style.overflowY !== "visible") {
        const box = up.getBoundingClientRect();
        clip = {
          left: Math.max(clip.left, box.left), top: Math.max(clip.top, box.top),
          right: Math.min(clip.right, box.right), bottom: Math.min(clip.bottom, box.bottom),
        };
      }
    }
    return clip;
  };
  const boxes = controls.map((element) => {
    const clip = clipOf(element);
    const rects = [...element.getClientRects()].map((r) => ({
      left: Math.max(r.left, clip.left), top: Math.max(r.top, clip.top),
      right: Math.min(r.right, clip.right), bottom: Math.min(r.bottom, clip.bottom),
    })).filter((r) => r.right - r.left > 1 && r.bottom - r.top > 1);
    return { element, rects };
  });
  const name = (element) => element.tagName.toLowerCase() + (element.id ? "#" + element.id : "") +
    " “" + (element.textContent || element.getAttribute("name") || "").trim()
      .replace(/\\s+/g, " ").slice(0, 40) + "”";
  const problems = [];
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i], b = boxes[j];
      if (a.element.contains(b.element) || b.element.contains(a.element)) continue;
      if (a.element.tagName === "LABEL" && a.element.control === b.element) continue;
      if (b.element.tagName === "LABEL" && b.element.control === a.element) continue;
      const hit = a.rects.some((p) => b.rects.some((q) =>
        Math.min(p.right, q.right) - Math.max(p.left, q.left) > 1 &&
        Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top) > 1));
      if (hit) problems.push(name(a.element) + " overlaps " + name(b.element));
    }
  }
  return problems;
}
"""


def assert_fits(page: Page, name: str) -> None:
    """At 1280 px and at 320 px: the page does not scroll sideways, no text is clipped or
    runs out of its box, and no two controls overlap. Screenshots either way."""
    try:
        for width in (WIDE, NARROW):
            page.set_viewport_size({"width": width, "height": VIEWPORT["height"]})
            save_screenshot(page, f"pseudo-{name}-{width}")
            sideways = page.evaluate(
                "() => document.documentElement.scrollWidth - window.innerWidth"
            )
            clipped = page.evaluate(CLIPPED_TEXT)
            overlapping = page.evaluate(OVERLAPPING_CONTROLS)
            assert sideways <= 0, f"{name} at {width}px scrolls sideways by {sideways}px"
            assert not clipped, f"{name} at {width}px:\n" + "\n".join(clipped)
            assert not overlapping, f"{name} at {width}px:\n" + "\n".join(overlapping)
    finally:
        page.set_viewport_size(VIEWPORT)


def open_every_detail(page: Page) -> None:
    # Closed <details> hide their content; their texts must fit too.
    page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")


# --- The pseudo text itself ---------------------------------------------------------------


def test_pseudo_text_is_forty_percent_longer_and_keeps_placeholders_and_markup():
    message = 'Retry delivery <span class="visually-hidden">of %(ref)s</span>'

    translated = pseudo(message)

    assert translated.startswith("[Ŕééţŕý đééļîîṽééŕý ") and translated.endswith("]")
    assert '<span class="visually-hidden">' in translated and "%(ref)s" in translated
    assert "</span>" in translated
    visible = re.sub(r"<[^>]*>|%\(ref\)s", "", translated)
    assert len(visible) >= 1.4 * len(re.sub(r"<[^>]*>|%\(ref\)s", "", message))
    assert pseudo("{count} new cases").count("{count}") == 1
    assert pseudo("%d%% done").startswith("[%d%%")


# --- The pages ------------------------------------------------------------------------------


@pytest.fixture
def busy_queue(
    settings: Any, worker: User, worker2: User, file_invoice_case: Callable[..., Case]
) -> list[Case]:
    """A queue page with everything on it: rows owned and unowned, a test case, a saved
    view with its delete button, and (two cases a page) the pagination links."""
    settings.EXCEPTION_DESK = {**settings.EXCEPTION_DESK, "QUEUE_PAGE_SIZE": 2}
    cases = [file_invoice_case() for _ in range(4)]
    claim_case(case_id=cases[0].pk, actor=worker2)
    preferences.save_view(user=worker, name="Mine, most urgent first", querystring="mine=1")
    return cases


def test_queue_page_in_the_pseudo_locale_fits_at_1280_and_320_px(
    page_for, pseudo_locale, worker, busy_queue
):
    page = page_for(worker)
    pseudo_locale(page)
    page.goto(url("cases:queue") + "?page=2")

    expect(page.locator("html")).to_have_attribute("lang", PSEUDO_LANGUAGE)
    expect(page.get_by_role("heading", level=1)).to_have_text(pseudo("Queue"))
    expect(page.get_by_role("link", name=pseudo("Previous page"))).to_be_visible()
    expect(page.get_by_role("table").get_by_role("row")).to_have_count(3)
    assert_fits(page, "queue")


def test_decision_page_in_the_pseudo_locale_fits_at_1280_and_320_px(
    page_for, pseudo_locale, worker, claimed_case
):
    page = page_for(worker)
    pseudo_locale(page)
    page.goto(url("cases:detail", claimed_case.pk))

    expect(page.get_by_role("button", name=pseudo("Submit decision"))).to_be_visible()
    expect(page.get_by_role("group", name=pseudo("Choose a resolution"))).to_be_visible()
    open_every_detail(page)
    assert_fits(page, "decision")


def test_supervisor_panel_in_the_pseudo_locale_fits_at_1280_and_320_px(
    page_for, pseudo_locale, supervisor, claimed_case
):
    page = page_for(supervisor)
    pseudo_locale(page)
    page.goto(url("cases:detail", claimed_case.pk))

    expect(page.get_by_role("heading", name=pseudo("Supervisor actions"))).to_be_visible()
    open_every_detail(page)
    expect(page.get_by_role("button", name=pseudo("Transfer the case"))).to_be_visible()
    assert_fits(page, "decision-supervisor")


def test_the_fit_checks_report_clipped_text_and_overlapping_buttons(page_for):
    """The checks above can fail: a clipped label and two buttons drawn on top of each
    other are both reported."""
    page = page_for(None)
    page.set_content(
        """<main><p style="width: 60px; overflow: hidden; white-space: nowrap">
        A label far too long for its box</p>
        <div style="position: relative; height: 40px">
          <button style="position: absolute; left: 0">First button</button>
          <button style="position: absolute; left: 20px">Second button</button>
        </div></main>"""
    )

    clipped = page.evaluate(CLIPPED_TEXT)
    overlapping = page.evaluate(OVERLAPPING_CONTROLS)

    assert clipped == ["clipped: p “A label far too long for its box”"]
    assert overlapping == ["button “First button” overlaps button “Second button”"]
