"""Lease expiry returns the case with its history and the worker's draft."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.audit.services import verify
from apps.cases.models import Case, State, Transfer
from apps.cases.selectors import case_page
from apps.cases.services import claim_case, expire_leases, save_draft
from apps.cases.services.leases import lease_duration

from .conftest import make_worker


def test_lease_expiry_returns_the_case_with_history_and_draft(file_case_with):
    wendy = make_worker("wendy")
    case = claim_case(case_id=file_case_with().pk, actor=wendy)
    save_draft(
        case_id=case.pk,
        actor=wendy,
        resolution="select_po",
        fields={"po_number": "po_781"},
        note="GRN matches PO 781",
    )
    due_before = (case.original_due_at, case.due_at)

    assert expire_leases(now=timezone.now() + lease_duration() + timedelta(seconds=1)) == 1

    case.refresh_from_db()
    assert (case.state, case.assignee, case.lease_token, case.lease_kind) == (
        State.OPEN,
        None,
        "",
        "",
    )
    assert case.release_count == 1
    assert (case.original_due_at, case.due_at) == due_before
    # History: the audit trail and the Transfer row say who held it and why it came back.
    actions = list(
        AuditEvent.objects.filter(stream=case.pk)
        .order_by("sequence")
        .values_list("action", flat=True)
    )
    assert actions == ["case.filed", "case.claimed", "case.lease_expired"]
    assert (
        AuditEvent.objects.get(stream=case.pk, action="case.lease_expired").after["previous_holder"]
        == "wendy"
    )
    assert list(verify([case.pk])) == []
    transfer = Transfer.objects.get(case=case)
    assert (transfer.kind, transfer.rule, transfer.from_user, transfer.actor) == (
        "release",
        "lease-sweep",
        wendy,
        None,
    )
    assert transfer.draft_policy == "kept"
    # The draft is still there: claiming again, the decision page shows it to her.
    claim_case(case_id=case.pk, actor=wendy)
    page = case_page(wendy, Case.objects.get(pk=case.pk))
    assert page.draft is not None
    assert (page.draft.fields, page.draft.note) == ({"po_number": "po_781"}, "GRN matches PO 781")
    assert [event.action for event in page.history][-2:] == [
        "case.lease_expired",
        "case.claimed",
    ]
