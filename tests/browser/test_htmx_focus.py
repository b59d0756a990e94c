"""After an HTMX swap that refuses a submit, focus moves to the changed region (never
left on <body>, where a keyboard or screen reader user would be lost) and the polite live
region says what happened."""

from __future__ import annotations

from playwright.sync_api import expect

from apps.cases.models import Decision

from .harness import expect_focus_on_region, live_region, url


def test_a_422_moves_focus_to_the_error_summary_and_announces_it(page_for, worker, claimed_case):
    page = page_for(worker)
    page.goto(url("cases:detail", claimed_case.pk))
    expect(page.get_by_role("button", name="Submit decision")).to_be_visible()
    expect(live_region(page)).to_have_text("")  # nothing said yet
    # The purchase order is required by the resolution's field schema; leave it out.
    page.get_by_role("radio", name="Select the purchase order").check()

    with page.expect_response(lambda response: response.status == 422):
        page.get_by_role("button", name="Submit decision").click()

    summary_title = page.get_by_role("heading", name="There is a problem")
    expect(summary_title).to_be_visible()
    expect_focus_on_region(page, summary_title)
    # The summary links each message to its field.
    expect(page.get_by_role("link", name="Purchase order is required.")).to_be_visible()
    expect(live_region(page)).to_have_text("There is a problem. Purchase order is required.")
    assert not Decision.objects.filter(case=claimed_case).exists()


def test_a_409_moves_focus_to_the_conflict_panel_and_announces_it(
    page_for, worker, claimed_case, workflow_adds_evidence
):
    page = page_for(worker)
    page.goto(url("cases:detail", claimed_case.pk))
    page.get_by_role("radio", name="Select the purchase order").check()
    page.get_by_role("radio", name="po_781").check()
    workflow_adds_evidence(claimed_case)

    with page.expect_response(lambda response: response.status == 409):
        page.get_by_role("button", name="Submit decision").click()

    title = "The case changed since you loaded it"
    expect(page.get_by_role("heading", name=title)).to_be_visible()
    expect_focus_on_region(page, page.get_by_role("heading", name=title))
    expect(live_region(page)).to_contain_text(f"{title}. ")
    expect(live_region(page)).to_contain_text("Your decision was not recorded.")
    assert not Decision.objects.filter(case=claimed_case).exists()
