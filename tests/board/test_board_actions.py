"""Actions on the supervisor board change state through the services: a transfer to a
queue or a worker (Transfer row, audit event, age and due date kept), a priority override
with an expiry (and its removal), a capacity adjustment with a reason and an expiry.
Invalid input comes back with an error summary and the field's own error; nothing changes."""

from __future__ import annotations

import re
from datetime import timedelta

from django.urls import reverse
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.cases.models import Case, Transfer
from apps.routing.models import CapacityAdjustment, WorkerProfile

BOARD = "/board/"


def local(moment) -> str:
    return timezone.localtime(moment).strftime("%Y-%m-%dT%H:%M")


def later(**delta) -> str:
    return local(timezone.now() + timedelta(**delta))


def case_events(case: Case, action: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(stream=case.pk, action=action))


def test_transferring_a_case_to_another_queue_keeps_its_age_and_due_date(
    supervisor, file_invoice_case, client_for
):
    case = file_invoice_case()

    client = client_for(supervisor)
    response = client.post(
        reverse("cases:board_transfer"),
        {
            "case": case.case_ref,
            "to_queue": "finance_approvals",
            "reason": "needs an approver",
            "note": "PO 781 looks right",
        },
    )

    assert response.status_code == 302 and response["Location"] == BOARD
    moved = Case.objects.get(pk=case.pk)
    assert moved.queue.name == "finance_approvals"
    assert (moved.created_at, moved.original_due_at, moved.due_at) == (
        case.created_at,
        case.original_due_at,
        case.due_at,
    )
    transfer = Transfer.objects.get(case=case, kind="transfer")
    assert (transfer.from_queue.name, transfer.to_queue.name) == (
        "accounts_payable",
        "finance_approvals",
    )
    assert (transfer.actor, transfer.reason, transfer.note) == (
        supervisor,
        "needs an approver",
        "PO 781 looks right",
    )
    assert case_events(case, "case.transferred")[0].reason == "needs an approver"
    board = client.get(BOARD).content.decode()
    assert f"{case.case_ref} moved to Finance approvals." in board


def test_transferring_a_case_to_a_worker_gives_them_the_lease(
    supervisor, worker, file_invoice_case, client_for
):
    case = file_invoice_case()

    response = client_for(supervisor).post(
        reverse("cases:board_transfer"),
        {"case": case.pk, "to_user": str(worker.pk), "reason": "knows this vendor"},
    )

    assert response.status_code == 302
    moved = Case.objects.get(pk=case.pk)
    assert (moved.state, moved.assignee, moved.lease_kind) == ("claimed", worker, "push")
    assert Transfer.objects.get(case=case, kind="transfer").to_user == worker


def test_a_transfer_without_reason_or_target_shows_the_errors_and_changes_nothing(
    supervisor, file_invoice_case, client_for
):
    case = file_invoice_case()

    response = client_for(supervisor).post(
        reverse("cases:board_transfer"), {"case": case.pk, "reason": ""}
    )

    page = response.content.decode()
    assert response.status_code == 422
    summary = re.search(
        r'<div class="error-summary" id="board-transfer-errors" tabindex="-1" autofocus'
        r' aria-labelledby="board-transfer-errors-title">(.*?)</div>',
        page,
        re.S,
    )
    assert summary, "the failed form's error summary takes focus"
    assert '<a href="#board-transfer-to_queue">Choose a queue, a worker, or both.' in (
        summary.group(1)
    )
    assert '<a href="#board-transfer-reason">Give a reason' in summary.group(1)
    assert 'id="board-transfer-reason-error"' in page
    assert 'aria-invalid="true" ' in page or 'aria-invalid="true">' in page
    assert 'id="board-priority-errors"' not in page
    assert not Transfer.objects.filter(case=case).exists()
    assert Case.objects.get(pk=case.pk).queue.name == "accounts_payable"


def test_an_unknown_case_reference_is_a_field_error_not_a_leak(
    supervisor, outsider, client_for, security_case
):
    hidden = security_case()
    from tests.conftest import make_user

    lead = make_user(
        "lena",
        role="supervisor",
        queues={"accounts_payable": ["view_queue", "work_queue", "supervise_queue"]},
    )

    answers = [
        client_for(lead).post(
            reverse("cases:board_transfer"),
            {"case": reference, "to_queue": "accounts_payable", "reason": "x"},
        )
        for reference in ("no_such_case", hidden.pk)
    ]

    assert [answer.status_code for answer in answers] == [422, 422]
    message = "No single active case with this id or reference in the queues you can see."
    assert all(message in answer.content.decode() for answer in answers)


def test_a_service_refusal_comes_back_as_the_field_error(
    supervisor, worker, file_invoice_case, client_for
):
    """The worker is off shift, so the service refuses them as a receiver."""
    case = file_invoice_case()
    WorkerProfile.objects.filter(user=worker).update(on_shift=False)

    response = client_for(supervisor).post(
        reverse("cases:board_transfer"),
        {"case": case.pk, "to_user": str(worker.pk), "reason": "knows this vendor"},
    )

    page = response.content.decode()
    assert response.status_code == 422
    assert 'id="board-transfer-to_user-error"' in page
    assert "wendy is not eligible" in page
    assert Case.objects.get(pk=case.pk).assignee is None


def test_overriding_a_priority_sets_band_reason_and_expiry_and_is_audited(
    supervisor, file_invoice_case, client_for
):
    case = file_invoice_case()
    until = timezone.now() + timedelta(hours=3)

    response = client_for(supervisor).post(
        reverse("cases:board_priority"),
        {"case": case.pk, "band": "P1", "reason": "CFO escalation", "expires_at": local(until)},
    )

    assert response.status_code == 302
    changed = Case.objects.get(pk=case.pk)
    assert (changed.priority_band, changed.priority_override_band) == ("P1", "P1")
    assert changed.priority_override_reason == "CFO escalation"
    assert changed.priority_override_by == supervisor
    assert abs(changed.priority_override_expires_at - until) < timedelta(minutes=1)
    assert case_events(case, "case.priority_overridden")[0].reason == "CFO escalation"


def test_removing_an_override_returns_the_policy_band(supervisor, file_invoice_case, client_for):
    case = file_invoice_case()
    client = client_for(supervisor)
    client.post(
        reverse("cases:board_priority"),
        {"case": case.pk, "band": "P1", "reason": "CFO escalation", "expires_at": later(hours=2)},
    )

    response = client.post(
        reverse("cases:board_priority"),
        {"case": case.pk, "band": "clear", "reason": "handled"},
    )

    assert response.status_code == 302
    changed = Case.objects.get(pk=case.pk)
    assert changed.priority_override_band == ""
    assert changed.priority_band == case.priority_band
    assert case_events(case, "case.priority_override_cleared")[0].reason == "handled"


def test_an_override_needs_an_expiry_within_seven_days(supervisor, file_invoice_case, client_for):
    case = file_invoice_case()
    client = client_for(supervisor)

    missing = client.post(
        reverse("cases:board_priority"), {"case": case.pk, "band": "P1", "reason": "x"}
    )
    too_late = client.post(
        reverse("cases:board_priority"),
        {"case": case.pk, "band": "P1", "reason": "x", "expires_at": later(days=9)},
    )

    assert missing.status_code == 422
    assert "An override needs an end: give a date and time." in missing.content.decode()
    assert too_late.status_code == 422
    assert 'id="board-priority-expires_at-error"' in too_late.content.decode()
    assert "An override lasts at most seven days." in too_late.content.decode()
    assert Case.objects.get(pk=case.pk).priority_override_band == ""


def test_adjusting_capacity_shows_on_the_board_and_is_audited(supervisor, worker, client_for):
    client = client_for(supervisor)
    response = client.post(
        reverse("cases:board_capacity"),
        {
            "worker": str(worker.pk),
            "capacity": "2",
            "reason": "training afternoon",
            "expires_at": later(hours=4),
        },
    )

    assert response.status_code == 302
    adjustment = CapacityAdjustment.objects.get(profile__user=worker)
    assert (adjustment.capacity, adjustment.reason, adjustment.actor) == (
        2,
        "training afternoon",
        supervisor,
    )
    event = AuditEvent.objects.get(stream=f"worker:{worker.username}")
    assert event.action == "worker.capacity_adjusted"
    board = client.get(BOARD).content.decode()
    assert "Capacity of wendy set to 2 units until" in board
    assert "0 of 2 units" in board


def test_a_capacity_adjustment_in_the_past_is_refused_with_its_field_error(
    supervisor, worker, client_for
):
    response = client_for(supervisor).post(
        reverse("cases:board_capacity"),
        {
            "worker": str(worker.pk),
            "capacity": "2",
            "reason": "training",
            "expires_at": later(hours=-1),
        },
    )

    page = response.content.decode()
    assert response.status_code == 422
    assert 'id="board-capacity-expires_at-error"' in page
    assert "The expiry must be in the future." in page
    assert 'id="board-capacity-errors" tabindex="-1" autofocus' in page
    assert not CapacityAdjustment.objects.exists()


def test_every_board_input_has_a_label_and_the_band_is_a_fieldset(supervisor, client_for):
    page = client_for(supervisor).get(BOARD).content.decode()

    actions = page[page.index('id="board-actions"') :]
    ids = re.findall(r'<(?:input|select|textarea)[^>]*\bid="([^"]+)"', actions)
    assert ids, "the board has action forms"
    for input_id in ids:
        assert f'<label for="{input_id}"' in actions, f"no label for {input_id}"
    assert "<legend>Priority" in actions
    assert "<legend>Send it to</legend>" in actions


def test_absence_recovery_takes_the_worker_off_shift_and_returns_their_cases(
    supervisor, worker, file_invoice_case, client_for
):
    from apps.cases.services import claim_case

    case = claim_case(case_id=file_invoice_case().pk, actor=worker)
    client = client_for(supervisor)

    response = client.post(reverse("cases:board_absence"), {"worker": str(worker.pk)}, follow=True)

    returned = Case.objects.get(pk=case.pk)
    assert (returned.state, returned.assignee) == ("open", None)
    absence = Transfer.objects.get(case=case, kind="absence")
    assert (absence.from_user, absence.actor) == (worker, supervisor)
    assert WorkerProfile.objects.get(user=worker).on_shift is False
    page = response.content.decode()
    assert "wendy is off shift; 1 case went back to its queue." in page
    assert f'id="worker-absent-{worker.pk}"' not in page  # already off shift


def test_absence_recovery_of_someone_outside_the_supervised_queues_is_refused(
    outsider, client_for, reference_data
):
    from tests.conftest import make_user

    lead = make_user(
        "lena",
        role="supervisor",
        queues={"accounts_payable": ["view_queue", "work_queue", "supervise_queue"]},
    )

    response = client_for(lead).post(reverse("cases:board_absence"), {"worker": str(outsider.pk)})

    # Not among the choices (the workers of the supervised queues): the form refuses.
    assert response.status_code == 422
    assert 'id="board-absence-worker-error"' in response.content.decode()
    assert WorkerProfile.objects.get(user=outsider).on_shift is True
