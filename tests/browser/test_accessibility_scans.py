"""Zero axe violations (WCAG 2.0, 2.1 and 2.2, levels A and AA) on the login, queue,
decision and recovery pages in each state a worker or supervisor meets, checked in a real
Chromium. Each test first waits for the state it claims to scan, so a page that silently
rendered something else cannot pass. The queue and decision pages are also captured at
1280 px and 320 px and must not scroll sideways at 320 px."""

from __future__ import annotations

from playwright.sync_api import expect

from apps.cases.models import State
from apps.cases.services import claim_case, release_case

from .factories import RESTRICTED_EVIDENCE, decide_select_po
from .harness import assert_no_axe_violations, capture_widths, url


def test_login_page_has_no_violations(page_for):
    page = page_for(None)
    page.goto(url("login"))

    expect(page.get_by_role("heading", name="Log in", level=1)).to_be_visible()
    assert_no_axe_violations(page)


def test_login_page_with_errors_has_no_violations(page_for):
    page = page_for(None)
    page.goto(url("login"))
    page.get_by_label("Username").fill("nobody")
    page.get_by_label("Password").fill("wrong")
    page.get_by_role("button", name="Log in").click()

    expect(page.get_by_role("heading", name="There is a problem")).to_be_visible()
    assert_no_axe_violations(page)


def test_empty_queue_has_no_violations(page_for, worker):
    page = page_for(worker)
    page.goto(url("cases:queue"))

    expect(page.get_by_text("No cases match these filters.")).to_be_visible()
    assert_no_axe_violations(page)
    capture_widths(page, "queue-empty")


def test_queue_with_cases_has_no_violations(page_for, worker, worker2, file_invoice_case):
    cases = [file_invoice_case() for _ in range(3)]
    claim_case(case_id=cases[0].pk, actor=worker2)
    page = page_for(worker)
    page.goto(url("cases:queue"))

    table = page.get_by_role("table", name="Cases in your queues")
    expect(table.get_by_role("row")).to_have_count(1 + len(cases))
    expect(table.get_by_role("cell", name="walter")).to_be_visible()
    assert_no_axe_violations(page)
    capture_widths(page, "queue-full")


def test_open_unclaimed_decision_page_has_no_violations(page_for, worker, file_invoice_case):
    case = file_invoice_case()
    page = page_for(worker)
    page.goto(url("cases:detail", case.pk))

    expect(page.get_by_role("button", name="Claim this case")).to_be_visible()
    assert_no_axe_violations(page)
    capture_widths(page, "decision-open")


def test_claimed_decision_page_with_its_form_has_no_violations(page_for, worker, claimed_case):
    page = page_for(worker)
    page.goto(url("cases:detail", claimed_case.pk))

    expect(page.get_by_role("group", name="Choose a resolution")).to_be_visible()
    expect(page.get_by_role("button", name="Submit decision")).to_be_visible()
    assert_no_axe_violations(page)
    capture_widths(page, "decision-claimed")


def test_claimed_decision_page_with_every_detail_open_has_no_violations(
    page_for, worker, claimed_case
):
    page = page_for(worker)
    page.goto(url("cases:detail", claimed_case.pk))
    # Closed <details> hide their content from axe; open them all to scan what they hold.
    page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")

    expect(page.get_by_role("table", name="Every recorded change of this case")).to_be_visible()
    assert_no_axe_violations(page)


def test_decision_page_with_redacted_evidence_has_no_violations(
    page_for, worker, file_invoice_case
):
    case = file_invoice_case(evidence=RESTRICTED_EVIDENCE)
    page = page_for(worker)
    page.goto(url("cases:detail", case.pk))

    expect(page.get_by_text("requires restricted clearance.")).to_be_visible()
    expect(page.get_by_text("DE89370400440532013000")).to_have_count(0)
    assert_no_axe_violations(page)


def test_conflict_panel_after_a_stale_submit_has_no_violations(
    page_for, worker, claimed_case, workflow_adds_evidence
):
    page = page_for(worker)
    page.goto(url("cases:detail", claimed_case.pk))
    page.get_by_role("radio", name="Select the purchase order").check()
    page.get_by_role("radio", name="po_781").check()
    # The workflow adds evidence after the page was loaded: the version moves on, so the
    # submit below is stale and must be refused with the conflict panel (409).
    workflow_adds_evidence(claimed_case)

    with page.expect_response(lambda response: response.status == 409):
        page.get_by_role("button", name="Submit decision").click()

    expect(page.get_by_role("heading", name="The case changed since you loaded it")).to_be_visible()
    expect(page.get_by_role("link", name="Reload the case")).to_be_visible()
    assert_no_axe_violations(page)
    capture_widths(page, "decision-conflict")


def test_submitted_decision_page_has_no_violations(page_for, worker, claimed_case):
    decide_select_po(claimed_case, worker)
    page = page_for(worker)
    page.goto(url("cases:detail", claimed_case.pk))

    expect(
        page.get_by_role("heading", name="Decision recorded — resuming the workflow")
    ).to_be_visible()
    assert_no_axe_violations(page)
    capture_widths(page, "decision-submitted")


def test_recovery_page_with_a_failed_delivery_has_no_violations(
    page_for, supervisor, failed_delivery_case, worker
):
    case = failed_delivery_case(worker)
    assert case.state == State.RESOLUTION_PENDING
    page = page_for(supervisor)
    page.goto(url("cases:recovery"))

    expect(page.get_by_text("1 case waiting for recovery")).to_be_visible()
    expect(page.get_by_role("button", name=f"Retry delivery of {case.case_ref}")).to_be_visible()
    assert_no_axe_violations(page)
    capture_widths(page, "recovery-pending")


def test_conflict_panel_showing_another_reviewers_decision_has_no_violations(
    page_for, worker, worker2, claimed_case
):
    page = page_for(worker)
    page.goto(url("cases:detail", claimed_case.pk))
    page.get_by_role("radio", name="Select the purchase order").check()
    page.get_by_role("radio", name="po_781").check()
    # Behind the open page the lease passes to walter, who decides first.
    release_case(case_id=claimed_case.pk, actor=worker, lease_token=claimed_case.lease_token)
    decide_select_po(claim_case(case_id=claimed_case.pk, actor=worker2), worker2)

    with page.expect_response(lambda response: response.status == 409):
        page.get_by_role("button", name="Submit decision").click()

    expect(page.get_by_role("heading", name="Case changed by another reviewer")).to_be_visible()
    expect(page.get_by_text("The accepted decision:")).to_be_visible()
    assert_no_axe_violations(page)
