"""The accessibility statement: one link away from every page (anonymous visitors too, so
a barrier at the login page can be reported), itself free of axe violations at 1280 and
320 px, reachable by keyboard, and in step with the browser suite's list of excluded axe
rules."""

from __future__ import annotations

from playwright.sync_api import expect

from .harness import (
    assert_focus_visible,
    assert_no_axe_violations,
    capture_widths,
    tab_to,
    url,
)
from .test_every_page_scans import EXCLUDED_AXE_RULES


def test_anonymous_visitor_reaches_the_statement_from_the_login_page_by_keyboard(page_for):
    page = page_for(None)
    page.goto(url("login"))

    link = page.get_by_role("contentinfo").get_by_role("link", name="Accessibility statement")
    tab_to(page, link)
    assert_focus_visible(page)
    page.keyboard.press("Enter")

    expect(page).to_have_url(url("accessibility"))
    expect(page.get_by_role("heading", name="Accessibility statement", level=1)).to_be_visible()
    expect(link).to_have_attribute("aria-current", "page")


def test_statement_has_no_violations_and_fits_320_px(page_for, worker):
    page = page_for(worker)
    page.goto(url("accessibility"))

    expect(page.get_by_role("heading", name="What you can do")).to_be_visible()
    expect(page.get_by_role("heading", name="How we test")).to_be_visible()
    expect(page.get_by_role("heading", name="Known limitations")).to_be_visible()
    expect(page.get_by_role("heading", name="Tell us about a barrier")).to_be_visible()
    assert_no_axe_violations(page)
    capture_widths(page, "accessibility-statement")


def test_statement_says_what_is_supported_and_how_it_is_tested(page_for):
    page = page_for(None)
    page.goto(url("accessibility"))

    main = page.get_by_role("main")
    for promise in (
        "WCAG) 2.2 at level AA",
        "keyboard alone",
        "screen reader",
        "Zoom to 400 %",
        "forced colours",
        "reduce motion",
        "without colour",
        "polite live region",
        "axe-core",
        "headless Chromium",
        "320 pixels",
        "pseudo-locale",
    ):
        expect(main).to_contain_text(promise)


def test_statement_mirrors_the_excluded_axe_rules_of_the_browser_suite(page_for):
    page = page_for(None)
    page.goto(url("accessibility"))

    excluded = page.locator("#excluded-rules")
    if EXCLUDED_AXE_RULES:
        for rule, reason in EXCLUDED_AXE_RULES.items():
            expect(excluded).to_contain_text(rule)
            expect(excluded).to_contain_text(reason)
    else:
        expect(excluded).to_contain_text("None: every WCAG 2.0, 2.1 and 2.2 level A and AA rule")


def test_statement_names_the_contact_a_deployment_configures(page_for, settings):
    settings.EXCEPTION_DESK = {
        **settings.EXCEPTION_DESK,
        "ACCESSIBILITY_CONTACT": "accessibility@desk.example",
    }
    page = page_for(None)
    page.goto(url("accessibility"))

    contact = page.get_by_role("link", name="accessibility@desk.example")
    expect(contact).to_have_attribute("href", "mailto:accessibility@desk.example")
