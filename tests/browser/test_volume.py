"""The queue page at realistic volume: with 10,000 open cases it still answers quickly, is
paginated, says how many cases there are in the table's name (what a screen reader reads on
entering the table), filters and sorts by keyboard, and axe finds no violation.

The cases are copies of one case filed through the service, made with bulk_create (as
bench/queue_page.py does): the same packet and routing, new ids, refs and dedupe keys,
spread over two weeks of due times and ages so that sorting has work to do.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction
from playwright.sync_api import expect

from apps.cases.models import Case, EvidenceItem, State, new_case_id

from .harness import assert_focus_visible, assert_no_axe_violations, tab_to, url

OPEN_CASES = 10_000
BATCH = 2_500
# Server time for the first page, measured by the browser (request sent to last byte). The
# benchmark's target is a p95 of 300 ms under gunicorn, and here it takes about 120 ms; the
# live server shares two cores with the browser and other runs, hence the headroom.
PAGE_BUDGET_MS = 1_500


def copy_case(template: Case, number: int) -> tuple[Case, list[EvidenceItem]]:
    shift = timedelta(minutes=2 * number)
    copy = Case(
        **{
            field.attname: getattr(template, field.attname)
            for field in Case._meta.concrete_fields
            if field.attname not in {"id", "updated_at"}
        }
    )
    copy.id = new_case_id()
    copy.dedupe_key = f"volume|{number}"
    copy.workflow_instance_id = f"wf_volume_{number}"
    copy.case_ref = f"invoice_volume_{number}"
    copy.created_at = template.created_at - shift
    copy.due_at = copy.original_due_at = template.due_at + shift
    items = [
        EvidenceItem(
            case_id=copy.id,
            **{
                field.attname: getattr(item, field.attname)
                for field in EvidenceItem._meta.concrete_fields
                if field.attname not in {"id", "case_id"}
            },
        )
        for item in template.evidence.all()
    ]
    return copy, items


@pytest.fixture
def ten_thousand_open_cases(file_invoice_case: Callable[..., Case]) -> dict[str, Case]:
    """10,000 open cases in accounts_payable; returns the two the test looks for: the one
    due soonest (it leads the list sorted by due date) and one to search for."""
    template = file_invoice_case()
    made = 1
    while made < OPEN_CASES:
        cases, items = [], []
        for number in range(made, min(OPEN_CASES, made + BATCH)):
            case, evidence = copy_case(template, number)
            cases.append(case)
            items += evidence
        with transaction.atomic():
            Case.objects.bulk_create(cases)
            EvidenceItem.objects.bulk_create(items)
        made += len(cases)
    soonest = Case.objects.get(case_ref="invoice_volume_7777")
    Case.objects.filter(pk=soonest.pk).update(due_at=template.due_at - timedelta(hours=3))
    # A desk that grew to this size has current planner statistics; a bulk insert leaves
    # them saying the table is empty until autovacuum runs.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE cases_case, cases_evidenceitem")
    assert Case.objects.filter(state=State.OPEN).count() == OPEN_CASES
    return {"soonest": soonest, "searched": Case.objects.get(case_ref="invoice_volume_4242")}


def test_queue_with_ten_thousand_open_cases_is_fast_paginated_counted_and_usable(
    page_for, worker: User, ten_thousand_open_cases: dict[str, Case]
):
    page = page_for(worker)
    page.goto(url("cases:queue"))

    server_ms = page.evaluate(
        """() => {
            const navigation = performance.getEntriesByType("navigation")[0];
            return navigation.responseEnd - navigation.requestStart;
        }"""
    )
    assert server_ms < PAGE_BUDGET_MS, f"the first page took {server_ms:.0f} ms"

    # The count is on the page and in the table's accessible name.
    expect(page.locator("#queue-count")).to_have_text("10,000 cases")
    table = page.get_by_role("table", name=re.compile(r"Cases in your queues.*10,000 cases"))
    expect(table).to_be_visible()
    expect(page.get_by_role("region", name=re.compile(r"10,000 cases"))).to_be_visible()
    # One page of 25 rows (plus the header row), and the way to the next one.
    expect(table.get_by_role("row")).to_have_count(26)
    pages = page.get_by_role("navigation", name="Pages")
    expect(pages).to_contain_text("Page 1 of 400")
    assert_no_axe_violations(page)

    # Sort by due date with the keyboard: the case due soonest comes first.
    due = page.get_by_role("link", name="Due", exact=True)
    tab_to(page, due)
    assert_focus_visible(page)
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"\?sort=due$"))
    expect(page.get_by_role("columnheader", name="Due")).to_have_attribute("aria-sort", "ascending")
    table = page.get_by_role("table", name=re.compile(r"sorted by due, ascending"))
    expect(table.get_by_role("row").nth(1)).to_contain_text(
        ten_thousand_open_cases["soonest"].case_ref
    )

    # Filter by keyboard: a search finds the one case among 10,000, the sort is kept.
    searched = ten_thousand_open_cases["searched"].case_ref
    search = page.get_by_label("Search case or summary")
    tab_to(page, search)
    page.keyboard.type(searched)
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"q={searched}.*sort=due"))
    expect(page.locator("#queue-count")).to_have_text("1 case")
    table = page.get_by_role("table", name=re.compile(r"1 case$"))
    expect(table.get_by_role("row")).to_have_count(2)
    expect(table.get_by_role("link", name=searched)).to_be_visible()
    expect(page.get_by_role("navigation", name="Pages")).to_have_count(0)
    assert_no_axe_violations(page)

    # And back to the whole queue, page 2 of 400.
    page.goto(url("cases:queue"))
    page.get_by_role("link", name="Next page").click()
    expect(page.get_by_role("navigation", name="Pages")).to_contain_text("Page 2 of 400")
    expect(page.get_by_role("table").get_by_role("row")).to_have_count(26)
