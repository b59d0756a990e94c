"""The decision page: what must happen next on top, evidence with source times and digests,
redaction above the reader's clearance (release case 3), and the side-effect guard
(release case 5) with reconciliation on the page."""

from __future__ import annotations

from django.urls import reverse

from apps.audit.models import AuditEvent
from apps.cases.models import Case, SideEffectState, State
from apps.cases.services import claim_case

RESTRICTED_EVIDENCE = [
    {
        "ref": "po_781",
        "source": "erp",
        "source_timestamp": "2026-08-31T14:19:59Z",
        "classification": "internal",
        "content": {"po_number": "PO-781", "vendor": "Acme"},
    },
    {
        "ref": "bank_account",
        "source": "treasury",
        "source_timestamp": "2026-08-30T09:05:00Z",
        "classification": "restricted",
        "content": {"iban": "DE89370400440532013000", "holder": "Acme GmbH"},
    },
]


def detail(client, case: Case) -> str:
    response = client.get(reverse("cases:detail", args=[case.pk]))
    assert response.status_code == 200
    return response.content.decode()


def test_page_puts_reason_due_priority_and_action_on_top_and_hides_the_resume_handle(
    worker, file_invoice_case, client_for
):
    case = file_invoice_case(
        resume_handle="sfn-task-token-DO-NOT-SHOW",
        proposed_action={"tool": "post_invoice", "po": "PO-781"},
    )

    page = detail(client_for(worker), case)

    top = page[page.index("What must happen next") : page.index("Evidence (version 1)")]
    assert "Evidence conflict" in top and "multiple_po_match" in top
    assert "PO 781 and PO 799 both match vendor and amount." in top
    assert case.due_at.strftime("%H:%M UTC") in top
    assert f"<strong>{case.priority_band}</strong>: medium severity" in top
    assert "Proposed action" in top and "post_invoice" in top
    assert "None attempted" in top  # side-effect state
    assert page.index("What must happen next") < page.index("<summary>Timeline")
    assert "sfn-task-token-DO-NOT-SHOW" not in page


def test_evidence_items_show_source_time_classification_and_digest(
    worker, file_invoice_case, client_for
):
    case = file_invoice_case()

    page = detail(client_for(worker), case)

    for item in case.evidence.all():
        assert item.digest in page
    assert page.count('<time datetime="2026-08-31T14:19:59+00:00">31 Aug 2026, 14:19:59 UTC') == 2
    assert "<dd>Internal</dd>" in page
    assert "PO-781" in page and "PO-799" in page


def test_restricted_evidence_is_redacted_for_a_worker_and_shown_to_a_supervisor(
    worker, supervisor, file_invoice_case, client_for
):
    case = file_invoice_case(evidence=RESTRICTED_EVIDENCE)
    restricted = case.evidence.get(ref="bank_account")

    worker_page = detail(client_for(worker), case)
    supervisor_page = detail(client_for(supervisor), case)

    assert "Redacted:</strong> requires restricted clearance." in worker_page
    assert "DE89370400440532013000" not in worker_page and "Acme GmbH" not in worker_page
    assert restricted.digest in worker_page  # the item's existence and integrity stay visible
    assert "PO-781" in worker_page  # what the clearance covers is shown
    assert "DE89370400440532013000" in supervisor_page
    assert "Redacted:" not in supervisor_page


def test_worker_without_clearance_cannot_claim_a_case_with_restricted_evidence(
    worker, file_invoice_case, client_for
):
    case = file_invoice_case(evidence=RESTRICTED_EVIDENCE)

    response = client_for(worker).post(reverse("cases:claim", args=[case.pk]))

    assert response.status_code == 403
    assert "clearance" in response.content.decode()
    case.refresh_from_db()
    assert case.state == State.OPEN and case.assignee is None


def test_viewer_sees_the_case_but_no_work_controls(viewer, file_invoice_case, client_for):
    case = file_invoice_case()

    page = detail(client_for(viewer), case)

    assert "You may view this case but not work on it." in page
    assert reverse("cases:claim", args=[case.pk]) not in page
    assert 'id="decide-form"' not in page


def test_unknown_side_effect_hides_retry_until_reconciled_on_the_page(
    supervisor, file_invoice_case, client_for
):
    case = file_invoice_case(
        side_effect_state="unknown", reason_code="write_timeout", **{"class": "execution_uncertain"}
    )
    assert case.queue.name == "platform"
    case = claim_case(case_id=case.pk, actor=supervisor)
    client = client_for(supervisor)

    before = detail(client, case)

    assert "Warning: the external write may or may not have happened" in before
    assert 'id="resolution-retry_write"' not in before
    assert 'id="resolution-confirm_applied"' in before

    response = client.post(
        reverse("cases:reconcile", args=[case.pk]),
        {
            "expected_version": str(case.version),
            "state": "confirmed_rejected",
            "provider_record": "idem-key-7781",
        },
    )

    assert response.status_code == 302
    case.refresh_from_db()
    assert case.side_effect_state == SideEffectState.CONFIRMED_REJECTED
    assert case.side_effect_record["provider_record"] == "idem-key-7781"
    assert AuditEvent.objects.filter(stream=case.pk, action="case.side_effect_reconciled").exists()
    after = detail(client, case)
    assert 'id="resolution-retry_write"' in after
    assert "Warning: the external write" not in after
    assert "provider record idem-key-7781" in after


def test_reconcile_without_a_provider_record_is_refused_at_the_field(
    worker, file_invoice_case, client_for
):
    case = file_invoice_case(side_effect_state="unknown")

    response = client_for(worker).post(
        reverse("cases:reconcile", args=[case.pk]),
        {
            "expected_version": str(case.version),
            "state": "confirmed_applied",
            "provider_record": "",
        },
    )

    page = response.content.decode()
    assert response.status_code == 422
    assert 'id="reconcile-provider-record-error"' in page
    assert "Give the provider record or idempotency key you checked." in page
    assert 'aria-describedby="reconcile-provider-record-error"' in page
    case.refresh_from_db()
    assert case.side_effect_state == SideEffectState.UNKNOWN


def test_unknown_case_id_is_404_without_revealing_anything(worker, client_for):
    response = client_for(worker).get(reverse("cases:detail", args=["exc_does_not_exist"]))

    assert response.status_code == 404
    assert "outside your queues" in response.content.decode()


def test_timeline_trace_snapshot_and_history_sit_behind_details(claimed_case, worker, client_for):
    page = detail(client_for(worker), claimed_case)

    background = page[page.index('id="background-heading"') :]
    for summary in ("Timeline (2 steps)", "Trace", "Input snapshot", "History (2 events)"):
        assert f"<summary>{summary}</summary>" in background
    assert "find_purchase_orders" in background and "2 candidates" in background
    assert "trace_932" in background and "snapshot_8421" in background
    assert "<code>case.filed</code>" in background and "<code>case.claimed</code>" in background
    assert "trace_932" not in page[: page.index('id="background-heading"')]


def test_worker_without_clearance_is_told_why_instead_of_offered_a_claim(
    worker, file_invoice_case, client_for
):
    case = file_invoice_case(evidence=RESTRICTED_EVIDENCE)

    page = detail(client_for(worker), case)

    assert "Your data clearance does not cover this case&#x27;s evidence." in page
    assert reverse("cases:claim", args=[case.pk]) not in page


def test_the_initiator_of_a_request_is_not_offered_the_claim(worker, file_invoice_case, client_for):
    case = file_invoice_case(
        attributes={"tenant": "acme-eu", "amount": "10", "currency": "EUR", "initiated_by": "wendy"}
    )

    page = detail(client_for(worker), case)

    assert "Segregation of duties" in page
    assert reverse("cases:claim", args=[case.pk]) not in page
