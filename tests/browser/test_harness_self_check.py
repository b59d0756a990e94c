"""The harness's own checks can fail: each is pointed at a page that breaks the rule it
guards. Without these, a scan or focus check that silently passed everything would make
every other browser test meaningless."""

from __future__ import annotations

import pytest

from .harness import (
    assert_focus_visible,
    assert_no_axe_violations,
    capture_widths,
    expect_focus_on_region,
    tab_to,
)

PAGE = """<!doctype html><html lang="en"><head><title>Self check</title></head>
<body><main><h1>Self check</h1>{body}</main></body></html>"""


def test_axe_scan_reports_an_unlabelled_field(page_for):
    page = page_for(None)
    page.set_content(PAGE.format(body='<input type="text" name="q">'))

    with pytest.raises(AssertionError, match="label"):
        assert_no_axe_violations(page)


def test_reflow_check_reports_a_page_that_scrolls_sideways_at_320px(page_for, tmp_path):
    page = page_for(None)
    page.set_content(PAGE.format(body='<p style="width: 40rem">A fixed-width paragraph.</p>'))

    with pytest.raises(AssertionError, match="scrolls sideways"):
        capture_widths(page, "overflow", directory=tmp_path)


def test_focus_check_reports_a_control_without_a_focus_indicator(page_for):
    page = page_for(None)
    page.set_content(
        PAGE.format(body='<button style="outline: none; box-shadow: none">Go</button>')
    )
    page.keyboard.press("Tab")

    with pytest.raises(AssertionError, match="no visible focus indicator"):
        assert_focus_visible(page)


def test_tab_to_reports_a_control_the_keyboard_cannot_reach(page_for):
    page = page_for(None)
    page.set_content(PAGE.format(body='<a href="#x">First</a><button tabindex="-1">Go</button>'))

    with pytest.raises(AssertionError, match="not reached in 5 presses"):
        tab_to(page, page.get_by_role("button", name="Go"), limit=5)


def test_focus_region_check_reports_focus_left_on_body(page_for):
    page = page_for(None)
    page.set_content(
        PAGE.format(body='<div tabindex="-1"><h2>There is a problem</h2><p>Fix it.</p></div>')
    )

    with pytest.raises(AssertionError, match="it is on <body"):
        expect_focus_on_region(
            page, page.get_by_role("heading", name="There is a problem"), timeout=500
        )
