"""The queue page: only the cases of the user's queues, stable columns, sorting, filters,
saved views per user, pagination with a count, and a poll that swaps only on change and
announces new arrivals."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone

from apps.cases.models import Case
from apps.cases.services import claim_case, file_case
from apps.preferences.models import SavedView
from apps.routing.models import WorkerProfile
from apps.workflows.models import ApiSource, WorkflowType
from tests.conftest import invoice_packet

from .conftest import HTMX, poll_values

QUEUE = "/"


def case_refs(page: str) -> list[str]:
    """The case references in the table, in row order."""
    return re.findall(r'id="case-link-[^"]+" href="[^"]+">([^<]+)</a>', page)


@pytest.fixture
def security_case(reference_data: None) -> Case:
    """A case in security_review: the outsider's queue, outside the worker's scope."""
    source = ApiSource.objects.create(name="support-bot")
    source.workflow_types.add(WorkflowType.objects.get(name="support_account_change"))
    packet = invoice_packet(
        workflow_type="support_account_change",
        workflow_version="1",
        case_ref="account_77",
        summary="Email change on a locked account",
        evidence=[],
        **{"class": "policy_denied"},
    )
    case, _ = file_case(source=source, packet=packet)
    assert case.queue.name == "security_review"
    return case


def test_queue_lists_only_cases_of_queues_the_user_may_view(
    worker, outsider, file_invoice_case, security_case, client_for
):
    mine = file_invoice_case(case_ref="invoice_in_scope")

    worker_page = client_for(worker).get(QUEUE).content.decode()
    outsider_page = client_for(outsider).get(QUEUE).content.decode()

    assert case_refs(worker_page) == [mine.case_ref]
    assert case_refs(outsider_page) == ["account_77"]
    assert "1 case" in worker_page


def test_queue_table_has_caption_stable_columns_and_row_headers(
    worker, file_invoice_case, client_for
):
    case = claim_case(case_id=file_invoice_case().pk, actor=worker)

    page = client_for(worker).get(QUEUE).content.decode()

    assert "<caption" in page
    headers = re.findall(r'<th scope="col"[^>]*>\s*(?:<a[^>]*>)?([^<]+)', page)
    assert [h.strip() for h in headers] == [
        "Priority",
        "Due",
        "Age",
        "Type",
        "Case",
        "Owner",
        "State",
    ]
    assert '<th scope="row" class="case-cell">' in page
    assert f'href="{reverse("cases:detail", args=[case.pk])}"' in page
    assert case.priority_band in page and "medium severity" in page
    assert "Invoice matching" in page and "Evidence conflict" in page  # type column
    assert "wendy" in page  # owner column
    assert "Claimed" in page  # state column
    assert re.search(r"\(in \d+ (hours|minutes)\)", page), "due time has a relative part"


def test_sorting_by_due_and_age_follows_the_link_and_marks_the_column(
    worker, file_invoice_case, client_for
):
    first = file_invoice_case(case_ref="first_filed")
    with time_machine.travel(timezone.now() + timedelta(minutes=5)):
        second = file_invoice_case(case_ref="second_filed", **{"class": "policy_denied"})
    client = client_for(worker)

    by_due = client.get(QUEUE, {"sort": "due"}).content.decode()
    by_due_desc = client.get(QUEUE, {"sort": "-due"}).content.decode()
    oldest_first = client.get(QUEUE, {"sort": "-age"}).content.decode()
    youngest_first = client.get(QUEUE, {"sort": "age"}).content.decode()

    # policy_denied has a 2 h target, evidence_conflict ~18 h: the later case is due first.
    assert case_refs(by_due) == [second.case_ref, first.case_ref]
    assert case_refs(by_due_desc) == [first.case_ref, second.case_ref]
    assert case_refs(oldest_first) == [first.case_ref, second.case_ref]
    assert case_refs(youngest_first) == [second.case_ref, first.case_ref]
    assert re.search(r'<th scope="col" aria-sort="ascending">\s*<a id="sort-due"', by_due)
    assert re.search(r'<th scope="col" aria-sort="descending">\s*<a id="sort-due"', by_due_desc)
    # The sorted column's link toggles the direction.
    assert 'id="sort-due" href="/?sort=-due"' in by_due


def test_default_order_is_priority_band_then_due(worker, file_invoice_case, client_for):
    low = file_invoice_case(case_ref="low_band", **{"class": "quality_threshold_missed"})
    high = file_invoice_case(case_ref="high_band", **{"class": "policy_denied"})
    assert high.priority_band < low.priority_band

    page = client_for(worker).get(QUEUE).content.decode()

    assert case_refs(page) == [high.case_ref, low.case_ref]
    assert re.search(r'<th scope="col" aria-sort="ascending">\s*<a id="sort-priority"', page)


def test_filters_by_state_class_text_and_mine(worker, worker2, file_invoice_case, client_for):
    conflict = file_invoice_case(case_ref="invoice_conflict_1")
    quality = file_invoice_case(
        case_ref="invoice_quality_2",
        summary="Low confidence extraction",
        **{"class": "quality_threshold_missed"},
    )
    held_by_me = claim_case(case_id=file_invoice_case(case_ref="invoice_mine_3").pk, actor=worker)
    claim_case(case_id=file_invoice_case(case_ref="invoice_theirs_4").pk, actor=worker2)
    client = client_for(worker)

    def refs(**params: str) -> set[str]:
        return set(case_refs(client.get(QUEUE, params).content.decode()))

    assert refs(exception_class="quality_threshold_missed") == {quality.case_ref}
    assert refs(state="claimed") == {held_by_me.case_ref, "invoice_theirs_4"}
    assert refs(mine="1") == {held_by_me.case_ref}
    assert refs(q="confidence") == {quality.case_ref}
    assert refs(q="CONFLICT_1") == {conflict.case_ref}


def test_unknown_filter_value_is_shown_as_an_error_and_ignored(
    worker, file_invoice_case, client_for
):
    file_invoice_case()

    response = client_for(worker).get(QUEUE, {"queue": "security_review"})

    page = response.content.decode()
    assert response.status_code == 200
    assert 'aria-invalid="true"' in page and "Select a valid choice" in page
    assert "1 case" in page


def test_saved_views_persist_per_user_and_reapply_the_filters(
    worker, worker2, file_invoice_case, client_for
):
    claim_case(case_id=file_invoice_case(case_ref="held_case").pk, actor=worker)
    file_invoice_case(case_ref="free_case")
    client = client_for(worker)

    response = client.post(
        reverse("cases:save_view"), {"name": "My work", "querystring": "mine=1&page=3&x=1"}
    )

    assert response.status_code == 302
    assert response["Location"] == "/?mine=1"
    assert list(SavedView.objects.values_list("user__username", "name", "querystring")) == [
        ("wendy", "My work", "mine=1")
    ]
    # A later visit (a new browser) still lists the view; following it applies the filter.
    later = client_for(worker).get(QUEUE).content.decode()
    assert '<a href="/?mine=1">My work</a>' in later
    assert case_refs(client.get("/?mine=1").content.decode()) == ["held_case"]
    # Another user does not see it.
    assert "My work" not in client_for(worker2).get(QUEUE).content.decode()


def test_saving_a_view_without_a_name_shows_the_error_at_the_field(worker, client_for):
    response = client_for(worker).post(
        reverse("cases:save_view"), {"name": "  ", "querystring": "mine=1"}
    )

    page = response.content.decode()
    assert response.status_code == 422
    assert 'aria-describedby="saved-view-name-error"' in page
    assert not SavedView.objects.exists()


def test_a_user_cannot_delete_another_users_saved_view(worker, worker2, client_for):
    theirs = SavedView.objects.create(user=worker2, name="Theirs", querystring="mine=1")

    response = client_for(worker).post(reverse("cases:delete_view", args=[theirs.pk]))

    assert response.status_code == 404
    assert SavedView.objects.filter(pk=theirs.pk).exists()


def test_pagination_shows_the_total_count_and_page_links(
    worker, file_invoice_case, client_for, settings
):
    settings.EXCEPTION_DESK = {**settings.EXCEPTION_DESK, "QUEUE_PAGE_SIZE": 2}
    for n in range(5):
        file_invoice_case(case_ref=f"paged_{n}")
    client = client_for(worker)

    first = client.get(QUEUE).content.decode()
    last = client.get(QUEUE, {"page": "3"}).content.decode()

    assert "5 cases" in first and "Page 1 of 3" in first
    assert len(case_refs(first)) == 2 and len(case_refs(last)) == 1
    assert 'rel="next" href="/?page=2"' in first
    assert 'rel="prev"' in last and 'rel="next"' not in last


def test_queue_page_queries_do_not_grow_with_the_number_of_cases(
    worker, worker2, file_invoice_case, client_for, django_assert_max_num_queries
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = client_for(worker)
    WorkerProfile.objects.filter(user=worker2).update(capacity=50)  # holds many of them

    def queries_for_a_page_of(count: int) -> int:
        for n in range(count):
            case = file_invoice_case(case_ref=f"bulk_{count}_{n}")
            if n % 2:
                claim_case(case_id=case.pk, actor=worker2)
        with CaptureQueriesContext(connection) as captured:
            response = client.get(QUEUE, {"state": "all"})
        assert response.status_code == 200
        return len(captured)

    client.get(QUEUE)  # warm the per-process caches (content types) first
    with_five = queries_for_a_page_of(5)
    with_twenty_five = queries_for_a_page_of(20)

    # No N+1: twenty more rows (owners, classes, types) cost no extra query.
    assert with_twenty_five == with_five
    # The fixed cost: session, user, the queues the user may see, filters' choices, count,
    # rows, saved views, and the navigation (board/recovery/history links, notification
    # badge, shift panel).
    with django_assert_max_num_queries(13):
        response = client.get(QUEUE, {"state": "all"})
    assert "25 cases" in response.content.decode()


def test_htmx_poll_answers_204_when_nothing_shown_changed(worker, file_invoice_case, client_for):
    file_invoice_case()
    client = client_for(worker)
    values = poll_values(client.get(QUEUE).content.decode())

    response = client.get(QUEUE, values, **HTMX)

    assert response.status_code == 204
    assert "HX-Trigger" not in response


def test_htmx_poll_swaps_the_region_and_announces_only_new_arrivals(
    worker, file_invoice_case, client_for
):
    file_invoice_case(case_ref="already_here")
    client = client_for(worker)
    values = poll_values(client.get(QUEUE).content.decode())
    file_invoice_case(case_ref="arrived_1")
    file_invoice_case(case_ref="arrived_2")

    response = client.get(QUEUE, values, **HTMX)

    body = response.content.decode()
    assert response.status_code == 200
    assert body.lstrip().startswith('<div id="queue-table"')
    assert "<html" not in body
    assert set(case_refs(body)) == {"already_here", "arrived_1", "arrived_2"}
    assert response["HX-Trigger"] == '{"announce": {"message": "2 new cases"}}'
    assert "HX-Request" in response["Vary"]

    # The next poll carries the new render time: the same arrivals are not announced again.
    claim_case(case_id=Case.objects.get(case_ref="already_here").pk, actor=worker)
    again = client.get(QUEUE, poll_values(body), **HTMX)
    assert again.status_code == 200
    assert "HX-Trigger" not in again


def test_queue_poll_for_an_expired_session_redirects_the_whole_page_to_login(client_for):
    response = client_for(None).get(QUEUE, HTTP_HX_REQUEST="true", HTTP_HX_CURRENT_URL="/")

    assert response["HX-Redirect"].startswith(reverse("login"))
