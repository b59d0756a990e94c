"""Issue 4's keyboard journey "an auditor exports a history", with the keyboard alone: from
the queue the auditor Tabs to the History link, filters by a case, and exports the filtered
events as CSV; and the history page has no axe violations."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from playwright.sync_api import expect

from apps.audit.models import AuditEvent
from apps.cases.services import claim_case

from .harness import assert_focus_visible, assert_no_axe_violations, url
from .keyboard import press_on, tab_to_visibly


def test_an_auditor_filters_the_history_by_case_and_exports_it_by_keyboard(
    page_for, viewer, worker, file_invoice_case, tmp_path: Path
):
    case = claim_case(case_id=file_invoice_case(case_ref="invoice_audit").pk, actor=worker)
    other = file_invoice_case(case_ref="invoice_untouched")
    page = page_for(viewer)
    page.goto(url("cases:queue"))

    press_on(page, page.get_by_role("link", name="History", exact=True), "Enter")
    expect(page.get_by_role("heading", level=1)).to_have_text("History")
    events = page.get_by_role("table", name="Audit events, newest first")
    expect(events.get_by_role("link", name=other.pk)).not_to_have_count(0)

    tab_to_visibly(page, page.get_by_label("Case or stream"))
    page.keyboard.type(case.pk)
    page.keyboard.press("Enter")

    expect(page).to_have_url(
        f"{url('cases:audit_history')}?stream={case.pk}&action_type=&actor=&date_from=&date_to="
    )
    wanted = list(AuditEvent.objects.filter(stream=case.pk).order_by("-created_at", "-id"))
    # Focus lands on what the filter found: the count, then the table below it.
    count = page.get_by_text(f"{len(wanted)} events", exact=True)
    expect(count).to_be_focused()
    assert_focus_visible(page)
    expect(events.locator("tbody tr")).to_have_count(len(wanted))
    expect(events.get_by_role("link", name=other.pk)).to_have_count(0)
    expect(events.get_by_role("cell", name="case.claimed")).to_have_count(1)

    with page.expect_download() as download_info:
        press_on(page, page.get_by_role("link", name="Export CSV"), "Enter")
    download = download_info.value
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)

    assert download.suggested_filename.endswith(".csv")
    rows = list(csv.DictReader(io.StringIO(saved.read_text(encoding="utf-8"))))
    assert [(row["stream"], int(row["sequence"]), row["hash"]) for row in rows] == [
        (event.stream, event.sequence, event.hash) for event in wanted
    ]
    exported = AuditEvent.objects.get(stream="config:audit.export")
    assert exported.actor_label == viewer.get_username()
    assert exported.after == {"filters": {"stream": case.pk}}


def test_history_page_has_no_axe_violations(page_for, viewer, worker, file_invoice_case):
    claim_case(case_id=file_invoice_case().pk, actor=worker)
    page = page_for(viewer)
    page.goto(url("cases:audit_history"))
    expect(page.get_by_role("table", name="Audit events, newest first")).to_be_visible()

    assert_no_axe_violations(page)

    page.goto(url("cases:audit_history") + "?date_from=2026-09-02&date_to=2026-09-01")
    expect(page.get_by_text("The end date is before the start date.")).to_be_visible()
    assert_no_axe_violations(page)
