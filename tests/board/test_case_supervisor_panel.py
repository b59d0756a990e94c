"""The decision page's supervisor panel: shown to a supervisor of the case's queue only;
transfer, reroute, priority override and due-date adjustment go through the services and
come back with the page's error summary (focused) when the input is refused."""

from __future__ import annotations

import re
from datetime import timedelta

from django.urls import reverse
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.cases.models import Case, Transfer


def local(moment) -> str:
    return timezone.localtime(moment).strftime("%Y-%m-%dT%H:%M")


def detail(case: Case) -> str:
    return reverse("cases:detail", args=[case.pk])


def test_the_panel_shows_for_a_supervisor_and_not_for_a_worker_or_viewer(
    supervisor, worker, viewer, file_invoice_case, client_for
):
    case = file_invoice_case()

    pages = {
        persona.username: client_for(persona).get(detail(case)).content.decode()
        for persona in (supervisor, worker, viewer)
    }

    assert 'id="supervisor-panel"' in pages["sam"]
    assert 'id="supervisor-panel"' not in pages["wendy"]
    assert 'id="supervisor-panel"' not in pages["vera"]
    for action in ("transfer", "reroute", "override_priority", "adjust_due"):
        assert f'action="{reverse(f"cases:{action}", args=[case.pk])}"' in pages["sam"]


def test_the_panel_is_not_offered_on_a_decided_case(supervisor, failed_delivery_case, client_for):
    case = failed_delivery_case(supervisor)

    page = client_for(supervisor).get(detail(case)).content.decode()

    assert 'id="supervisor-panel"' not in page


def test_every_panel_input_has_a_label(supervisor, file_invoice_case, client_for):
    page = client_for(supervisor).get(detail(file_invoice_case())).content.decode()

    panel = page[page.index('id="supervisor-panel"') : page.index('id="background-heading"')]
    ids = re.findall(r'<(?:input|select|textarea)[^>]*\bid="([^"]+)"', panel)
    assert len(ids) >= 10
    for input_id in ids:
        assert f'<label for="{input_id}"' in panel, f"no label for {input_id}"


def test_transfer_from_the_panel_moves_the_case_and_keeps_its_breach(
    supervisor, file_invoice_case, client_for, aged
):
    case = aged(
        file_invoice_case(),
        age=timedelta(hours=9),
        due_in=-timedelta(hours=1),
        breached_at=timezone.now() - timedelta(hours=1),
    )

    response = client_for(supervisor).post(
        reverse("cases:transfer", args=[case.pk]),
        {"to_queue": "finance_approvals", "reason": "approver needed"},
    )

    assert response.status_code == 302 and response["Location"] == detail(case)
    moved = Case.objects.get(pk=case.pk)
    assert moved.queue.name == "finance_approvals"
    assert (moved.breached_at, moved.original_due_at) == (case.breached_at, case.original_due_at)
    assert Transfer.objects.filter(case=case, kind="transfer").count() == 1


def test_reroute_counts_a_routing_defect(supervisor, file_invoice_case, client_for):
    case = file_invoice_case()

    response = client_for(supervisor).post(
        reverse("cases:reroute", args=[case.pk]),
        {"to_queue": "finance_approvals", "reason": "a refund, not an invoice"},
    )

    assert response.status_code == 302
    moved = Case.objects.get(pk=case.pk)
    assert (moved.queue.name, moved.reroute_count) == ("finance_approvals", 1)
    event = AuditEvent.objects.get(stream=case.pk, action="case.rerouted")
    assert event.after["routing_defect"] is True
    assert event.reason == "a refund, not an invoice"


def test_override_from_the_panel_is_shown_in_the_panel(supervisor, file_invoice_case, client_for):
    case = file_invoice_case()
    client = client_for(supervisor)

    response = client.post(
        reverse("cases:override_priority", args=[case.pk]),
        {
            "band": "P1",
            "reason": "regulator deadline",
            "expires_at": local(timezone.now() + timedelta(hours=5)),
        },
    )
    page = client.get(detail(case)).content.decode()

    assert response.status_code == 302
    assert Case.objects.get(pk=case.pk).priority_band == "P1"
    assert "P1 until" in page and "set by sam: regulator deadline" in page


def test_adjusting_the_due_date_keeps_the_original(supervisor, file_invoice_case, client_for):
    case = file_invoice_case()
    new_due = timezone.now() + timedelta(days=2)

    response = client_for(supervisor).post(
        reverse("cases:adjust_due", args=[case.pk]),
        {"due_at": local(new_due), "reason": "vendor closed until Monday"},
    )

    assert response.status_code == 302
    changed = Case.objects.get(pk=case.pk)
    assert abs(changed.due_at - new_due) < timedelta(minutes=1)
    assert changed.original_due_at == case.original_due_at
    event = AuditEvent.objects.get(stream=case.pk, action="case.due_adjusted")
    assert event.reason == "vendor closed until Monday"


def test_a_refused_due_date_re_renders_the_page_with_a_focused_error_summary(
    supervisor, file_invoice_case, client_for
):
    case = file_invoice_case()

    response = client_for(supervisor).post(
        reverse("cases:adjust_due", args=[case.pk]),
        {"due_at": local(timezone.now() - timedelta(hours=1)), "reason": ""},
    )

    page = response.content.decode()
    assert response.status_code == 422
    summary = re.search(
        r'<div class="error-summary" id="supervise-errors" tabindex="-1" autofocus'
        r' aria-labelledby="supervise-errors-title">(.*?)</div>',
        page,
        re.S,
    )
    assert summary, "the panel's error summary takes focus"
    assert '<a href="#supervise-due-reason">' in summary.group(1)
    assert 'id="supervise-due-details" open' in page
    assert 'id="supervise-due-reason-error"' in page
    assert Case.objects.get(pk=case.pk).due_at == case.due_at


def test_a_service_error_on_a_valid_form_is_shown_next_to_its_field(
    supervisor, file_invoice_case, client_for
):
    case = file_invoice_case()

    response = client_for(supervisor).post(
        reverse("cases:adjust_due", args=[case.pk]),
        {"due_at": local(timezone.now() - timedelta(hours=1)), "reason": "typo"},
    )

    page = response.content.decode()
    assert response.status_code == 422
    assert 'id="supervise-due-due_at-error"' in page
    assert "The new due date must be in the future." in page


def test_a_transfer_of_a_decided_case_is_a_conflict_said_once(
    supervisor, failed_delivery_case, client_for
):
    case = failed_delivery_case(supervisor)

    response = client_for(supervisor).post(
        reverse("cases:transfer", args=[case.pk]),
        {"to_queue": "finance_approvals", "reason": "late"},
    )

    page = response.content.decode()
    assert response.status_code == 409
    assert 'id="action-error"' in page and "cannot be transferred" in page
    assert Case.objects.get(pk=case.pk).queue.name == "accounts_payable"
