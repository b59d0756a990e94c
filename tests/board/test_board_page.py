"""The supervisor board shows, per supervised queue, the backlog by band, the oldest age,
breaches and near-breaches, unowned work, open "no eligible worker" alerts and priority
inversion; per worker, the shift, the leases held and load against effective capacity with
the live adjustment. Only the queues the user supervises; a bounded number of queries; a
poll that swaps only on change and announces only what got worse."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.cases.models import CapacityAlert, Case
from apps.cases.services import claim_case
from apps.routing.models import CapacityAdjustment, Queue, WorkerProfile
from tests.conftest import make_user

from .conftest import HTMX, announced, poll_values, table_rows

BOARD = "/board/"


def setup_backlog(file_invoice_case, aged):
    """accounts_payable, as the board should count it:
    a P1 due in 2 days (weakly urgent) filed 2 h ago, b P2 due in 10 min (near),
    c P3 due 1 h ago filed 3 days ago (breached, oldest), d P4 breached earlier but due
    later now, e P3 in the last 20 % of its 11 h target (near), f P2 held by a worker."""
    h = timedelta(hours=1)
    cases = {
        "a": aged(file_invoice_case(case_ref="ap_a"), age=2 * h, due_in=48 * h, priority_band="P1"),
        "b": aged(
            file_invoice_case(case_ref="ap_b"),
            age=h,
            due_in=timedelta(minutes=10),
            priority_band="P2",
        ),
        "c": aged(file_invoice_case(case_ref="ap_c"), age=72 * h, due_in=-h, priority_band="P3"),
        "d": aged(
            file_invoice_case(case_ref="ap_d"),
            age=24 * h,
            due_in=5 * h,
            priority_band="P4",
            breached_at=timezone.now() - 2 * h,
        ),
        "e": aged(file_invoice_case(case_ref="ap_e"), age=10 * h, due_in=h, priority_band="P3"),
        "f": aged(
            file_invoice_case(case_ref="ap_f"),
            age=timedelta(minutes=5),
            due_in=8 * h,
            priority_band="P2",
            workload_weight=3,
        ),
    }
    return cases


@pytest.fixture
def backlog(file_invoice_case, aged, worker, worker2, supervisor, security_case):
    cases = setup_backlog(file_invoice_case, aged)
    claim_case(case_id=cases["f"].pk, actor=worker)
    now = timezone.now()
    queue = Queue.objects.get(name="accounts_payable")
    CapacityAlert.objects.create(
        case=cases["b"],
        queue=queue,
        explanation="No eligible worker on shift: walter needs skill refunds ≥ 3",
        raised_at=now - timedelta(minutes=4),
    )
    CapacityAlert.objects.create(
        case=cases["c"],
        queue=queue,
        explanation="cleared long ago",
        raised_at=now - timedelta(hours=5),
        cleared_at=now - timedelta(hours=4),
    )
    profile = WorkerProfile.objects.get(user=worker)
    CapacityAdjustment.objects.create(
        profile=profile,
        capacity=4,
        reason="training afternoon",
        actor=supervisor,
        created_at=now - timedelta(minutes=30),
        expires_at=now + timedelta(hours=2),
    )
    CapacityAdjustment.objects.create(
        profile=profile,
        capacity=9,
        reason="yesterday's rush",
        actor=supervisor,
        created_at=now - timedelta(days=1),
        expires_at=now - timedelta(hours=12),
    )
    WorkerProfile.objects.filter(user=worker2).update(on_shift=False, capacity=6)
    WorkerProfile.objects.filter(user=worker).update(capacity=10)
    security_case(case_ref="account_77")
    return cases


def test_the_queue_row_counts_bands_age_breaches_near_breaches_unowned_and_alerts(
    backlog, supervisor, client_for
):
    page = client_for(supervisor).get(BOARD).content.decode()

    row = table_rows(page)["queue-row-accounts_payable"]
    assert row[0] == "Accounts payable"
    assert row[1:5] == ["1", "2", "2", "1"]  # P1..P4
    assert row[5] == "6"  # active
    assert row[6] == "3 days"  # oldest: c
    assert row[7] == "2 breached"  # c past due, d breached earlier (never erased)
    assert row[8] == "2"  # near breach: b within 30 min, e in the last 20 % of its target
    assert row[9] == "5"  # unowned: all but f
    assert row[10] == "1 alert"  # the cleared alert does not count
    assert row[11].startswith("Yes: 1 P1/P2 case due in more than 24 h while 2 older P3/P4")


def test_open_capacity_alerts_are_listed_with_their_explanation(backlog, supervisor, client_for):
    page = client_for(supervisor).get(BOARD).content.decode()

    assert "No eligible worker: 1 case" in page
    assert "walter needs skill refunds ≥ 3" in page
    assert "cleared long ago" not in page


def test_cases_needing_attention_say_why_in_words_earliest_due_first(
    backlog, supervisor, client_for
):
    page = client_for(supervisor).get(BOARD).content.decode()

    rows = {key: cells for key, cells in table_rows(page).items() if key.startswith("attention-")}
    refs = [cells[0].split()[0] for cells in rows.values()]
    assert refs == ["ap_c", "ap_b", "ap_e", "ap_d"]
    why = {cells[0].split()[0]: cells[5] for cells in rows.values()}
    assert why == {
        "ap_c": "Breached",
        "ap_b": "Near breach No eligible worker",
        "ap_e": "Near breach",
        "ap_d": "Breached",
    }
    assert f'href="/board/?case={backlog["c"].pk}#board-actions"' in page


def test_worker_rows_show_shift_leases_load_against_effective_capacity_and_adjustment(
    backlog, supervisor, worker, worker2, client_for
):
    page = client_for(supervisor).get(BOARD).content.decode()

    rows = table_rows(page)
    wendy = rows[f"worker-{worker.pk}"]
    assert wendy[0] == "wendy"
    assert wendy[1] == "On shift"
    assert wendy[2].startswith("ap_f P2, weight 3")
    assert wendy[3] == "3 of 4 units"  # the live adjustment, not the profile's 10
    assert wendy[4].startswith("4 units until") and "training afternoon (sam)" in wendy[4]
    assert "yesterday's rush" not in page  # lapsed
    walter = rows[f"worker-{worker2.pk}"]
    assert walter[1:5] == ["Off shift", "None", "0 of 6 units", "None"]


def test_the_board_load_matches_the_capacity_service(backlog, supervisor, worker, client_for):
    from apps.cases.services.capacity import active_load, effective_capacity

    page = client_for(supervisor).get(BOARD).content.decode()

    profile = WorkerProfile.objects.get(user=worker)
    expected = f"{active_load(worker)} of {effective_capacity(profile)} units"
    assert table_rows(page)[f"worker-{worker.pk}"][3] == expected


def test_a_supervisor_sees_only_the_queues_and_workers_of_the_queues_they_supervise(
    backlog, outsider, worker, client_for
):
    lead = make_user(
        "lena",
        role="supervisor",
        queues={"accounts_payable": ["view_queue", "work_queue", "supervise_queue"]},
    )

    page = client_for(lead).get(BOARD).content.decode()

    rows = table_rows(page)
    assert [key for key in rows if key.startswith("queue-row-")] == ["queue-row-accounts_payable"]
    assert f"worker-{worker.pk}" in rows
    assert f"worker-{outsider.pk}" not in rows
    assert "account_77" not in page


def test_an_empty_priority_inversion_says_no(file_invoice_case, aged, supervisor, client_for):
    aged(file_invoice_case(), age=timedelta(hours=1), due_in=timedelta(hours=3), priority_band="P3")

    page = client_for(supervisor).get(BOARD).content.decode()

    assert table_rows(page)["queue-row-accounts_payable"][11] == "No"
    assert "Priority inversion: the high bands (P1, P2) hold cases" in page


def test_board_tables_have_captions_and_row_headers(backlog, supervisor, client_for):
    page = client_for(supervisor).get(BOARD).content.decode()

    assert page.count("<caption") == 3
    assert '<th scope="row">Accounts payable</th>' in page
    assert 'aria-current="page">Board</a>' in page


def test_the_board_uses_a_bounded_number_of_queries_whatever_its_size(
    file_invoice_case, aged, supervisor, worker, worker2, client_for, django_assert_max_num_queries
):
    client = client_for(supervisor)
    for n in range(3):
        aged(file_invoice_case(), age=timedelta(hours=n + 1), due_in=-timedelta(minutes=5))
    client.get(BOARD)  # warm caches (content types, sessions)
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as small:
        assert client.get(BOARD).status_code == 200
    for n in range(25):
        case = aged(file_invoice_case(), age=timedelta(hours=n + 1), due_in=-timedelta(minutes=5))
        if n % 5 == 0:
            claim_case(case_id=case.pk, actor=[worker, worker2][n % 2])
    for n in range(6):
        extra = make_user(
            f"extra{n}", role="worker", queues={"accounts_payable": ["view_queue", "work_queue"]}
        )
        CapacityAdjustment.objects.create(
            profile=WorkerProfile.objects.get(user=extra),
            capacity=2,
            reason="half day",
            actor=supervisor,
            created_at=timezone.now(),
            expires_at=timezone.now() + timedelta(hours=3),
        )

    with django_assert_max_num_queries(len(small.captured_queries)):
        response = client.get(BOARD)

    assert response.status_code == 200
    assert "extra5" in response.content.decode()


def test_the_poll_answers_204_while_nothing_shown_changed(backlog, supervisor, client_for):
    client = client_for(supervisor)
    values = poll_values(client.get(BOARD).content.decode(), "board-region")

    response = client.get(BOARD, values, **HTMX)

    assert response.status_code == 204
    assert "HX-Trigger" not in response


def test_the_poll_swaps_the_region_and_announces_a_new_breach_once(
    backlog, supervisor, client_for, aged
):
    client = client_for(supervisor)
    values = poll_values(client.get(BOARD).content.decode(), "board-region")
    aged(backlog["a"], age=timedelta(hours=30), due_in=-timedelta(minutes=1))

    response = client.get(BOARD, values, **HTMX)

    body = response.content.decode()
    assert response.status_code == 200
    assert body.lstrip().startswith('<div id="board-region"')
    assert "<html" not in body and 'id="board-actions"' not in body
    assert announced(response) == "1 more case breached"
    assert table_rows(body)["queue-row-accounts_payable"][7] == "3 breached"
    again = client.get(BOARD, poll_values(body, "board-region"), **HTMX)
    assert again.status_code == 204


def test_a_change_that_is_no_worse_swaps_without_an_announcement(
    backlog, supervisor, client_for, file_invoice_case
):
    client = client_for(supervisor)
    values = poll_values(client.get(BOARD).content.decode(), "board-region")
    file_invoice_case(case_ref="fresh")

    response = client.get(BOARD, values, **HTMX)

    assert response.status_code == 200
    assert table_rows(response.content.decode())["queue-row-accounts_payable"][5] == "7"
    assert "HX-Trigger" not in response


def test_a_new_capacity_alert_is_announced(backlog, supervisor, client_for):
    client = client_for(supervisor)
    values = poll_values(client.get(BOARD).content.decode(), "board-region")
    CapacityAlert.objects.create(
        case=backlog["e"],
        queue=backlog["e"].queue,
        explanation="No eligible worker on shift: nobody has skill invoice_matching",
        raised_at=timezone.now(),
    )

    response = client.get(BOARD, values, **HTMX)

    assert announced(response) == "1 new capacity alert: nobody eligible is available"


def test_a_row_link_preselects_the_case_in_the_action_forms(backlog, supervisor, client_for):
    case = backlog["c"]

    page = client_for(supervisor).get(BOARD, {"case": case.pk}).content.decode()

    assert page.count(f'id="board-transfer-case" value="{case.pk}"') == 1
    assert page.count(f'id="board-priority-case" value="{case.pk}"') == 1


def test_resolved_and_closed_cases_are_not_backlog(file_invoice_case, aged, supervisor, client_for):
    case = aged(file_invoice_case(), age=timedelta(days=2), due_in=-timedelta(hours=1))
    Case.objects.filter(pk=case.pk).update(state="resolved")

    page = client_for(supervisor).get(BOARD).content.decode()

    row = table_rows(page)["queue-row-accounts_payable"]
    assert (row[5], row[7]) == ("0", "0")
    assert reverse("cases:detail", args=[case.pk]) not in page
