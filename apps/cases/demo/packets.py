"""Review packets for the demo: realistic scenarios per workflow type and exception class.

The seed builds its fixed catalogue from these; the simulator draws random ones.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

# --- review packets -------------------------------------------------------------------------
# Each scenario returns the workflow-specific part of a packet; ``packet()`` adds the ids.
# ``rng`` makes the simulator's packets vary; the seed passes fixed parameters.

Evidence = tuple[str, str, str, dict[str, Any]]  # ref, source, classification, content

VENDORS = [
    ("Acme Industrial GmbH", "acme-eu", "eu", "EUR"),
    ("Globex Logistics Inc.", "globex-us", "us", "USD"),
    ("Initech Office Supply Ltd", "initech-uk", "uk", "GBP"),
    ("Umbrella Facilities AG", "umbrella-de", "eu", "EUR"),
    ("Hooli Cloud Services", "hooli-us", "us", "USD"),
    ("Stark Components Pte", "stark-apac", "apac", "SGD"),
]


@dataclass
class Scenario:
    workflow_type: str
    exception_class: str
    reason_code: str
    summary: str
    reason_note: str
    evidence: list[Evidence]
    timeline: list[dict[str, Any]]
    attributes: dict[str, Any]
    proposed_action: dict[str, Any] | None = None
    side_effect_state: str = "none_attempted"
    case_ref: str = ""


def _tl(*steps: tuple[str, str, str]) -> list[dict[str, Any]]:
    """Timeline entries: (kind, name, summary). Times are filled in by ``packet()``."""
    return [{"kind": kind, "name": name, "summary": summary} for kind, name, summary in steps]


def inv_po_conflict(n: int, vendor: int, amount: str) -> Scenario:
    name, tenant, region, currency = VENDORS[vendor % len(VENDORS)]
    po_a, po_b = f"PO-{7100 + n}", f"PO-{7160 + n}"
    return Scenario(
        "invoice_match",
        "evidence_conflict",
        "multiple_po_match",
        f"Invoice INV-{48200 + n} from {name} matches two open purchase orders",
        f"{po_a} and {po_b} both match vendor and amount {amount} {currency}.",
        [
            ("invoice", "ap-inbox", "internal", _invoice(n, name, amount, currency)),
            ("po_a", "erp", "internal", _po(po_a, name, amount, currency)),
            ("po_b", "erp", "internal", _po(po_b, name, amount, currency)),
        ],
        _tl(
            ("tool_call", "extract_invoice", "invoice fields extracted"),
            ("tool_call", "find_purchase_orders", f"vendor={name}"),
            ("tool_result", "find_purchase_orders", "2 candidates"),
            ("validation", "unique_po_match", "failed: 2 matches"),
        ),
        _attrs(tenant, region, amount, currency, "ap-bot"),
        case_ref=f"invoice_{48200 + n}",
    )


def inv_amount_mismatch(n: int, vendor: int, amount: str, po_amount: str) -> Scenario:
    name, tenant, region, currency = VENDORS[vendor % len(VENDORS)]
    po = f"PO-{7300 + n}"
    return Scenario(
        "invoice_match",
        "evidence_conflict",
        "amount_mismatch",
        f"Invoice INV-{48200 + n} total differs from {po} ({amount} vs {po_amount} {currency})",
        "Difference is above the 2% tolerance of the matching policy.",
        [
            ("invoice", "ap-inbox", "internal", _invoice(n, name, amount, currency)),
            ("po", "erp", "internal", _po(po, name, po_amount, currency)),
        ],
        _tl(
            ("tool_call", "extract_invoice", "invoice fields extracted"),
            ("tool_call", "find_purchase_orders", f"vendor={name}"),
            ("validation", "amount_within_tolerance", "failed"),
        ),
        _attrs(tenant, region, amount, currency, "ap-bot"),
        case_ref=f"invoice_{48200 + n}",
    )


def inv_missing_receipt(n: int, vendor: int, amount: str) -> Scenario:
    name, tenant, region, currency = VENDORS[vendor % len(VENDORS)]
    po = f"PO-{7400 + n}"
    return Scenario(
        "invoice_match",
        "evidence_required",
        "goods_receipt_missing",
        f"No goods receipt for invoice INV-{48200 + n} from {name}",
        f"Three-way match needs a goods receipt for {po}; none is booked in the ERP.",
        [
            ("invoice", "ap-inbox", "internal", _invoice(n, name, amount, currency)),
            ("po", "erp", "internal", _po(po, name, amount, currency)),
        ],
        _tl(
            ("tool_call", "find_goods_receipts", po),
            ("tool_result", "find_goods_receipts", "0 results"),
        ),
        _attrs(tenant, region, amount, currency, "ap-bot"),
        proposed_action={"action": "hold_payment", "invoice": f"INV-{48200 + n}"},
        case_ref=f"invoice_{48200 + n}",
    )


def inv_extraction_rejected(n: int, vendor: int, amount: str) -> Scenario:
    name, tenant, region, currency = VENDORS[vendor % len(VENDORS)]
    return Scenario(
        "invoice_match",
        "output_rejected",
        "vat_number_invalid",
        f"Extracted VAT number on INV-{48200 + n} failed the registry check",
        "The VIES registry does not know the extracted VAT number.",
        [
            (
                "extraction",
                "doc-ai",
                "internal",
                {"vat_number": f"DE81{n:07d}", "vendor": name, "confidence": 0.93},
            ),
            ("vat_check", "vies", "public", {"valid": False, "checked": f"DE81{n:07d}"}),
        ],
        _tl(
            ("tool_call", "extract_invoice", "fields extracted"),
            ("tool_call", "check_vat_number", "registry lookup"),
            ("validation", "vat_number_valid", "failed"),
        ),
        _attrs(tenant, region, amount, currency, "ap-bot"),
        proposed_action={"action": "post_invoice", "vat_number": f"DE81{n:07d}"},
        case_ref=f"invoice_{48200 + n}",
    )


def inv_low_confidence(n: int, vendor: int, amount: str) -> Scenario:
    name, tenant, region, currency = VENDORS[vendor % len(VENDORS)]
    return Scenario(
        "invoice_match",
        "quality_threshold_missed",
        "ocr_confidence_low",
        f"Line items of INV-{48200 + n} read with 0.71 confidence (threshold 0.85)",
        "Scanned invoice; two line totals were read with low confidence.",
        [
            (
                "extraction",
                "doc-ai",
                "internal",
                {"lines": 6, "min_confidence": 0.71, "threshold": 0.85, "vendor": name},
            ),
        ],
        _tl(("tool_call", "extract_invoice", "6 lines"), ("validation", "confidence", "0.71")),
        _attrs(tenant, region, amount, currency, "ap-bot"),
        proposed_action={"action": "post_invoice", "total": amount},
        case_ref=f"invoice_{48200 + n}",
    )


def inv_sanctions_hit(n: int, vendor: int, amount: str) -> Scenario:
    name, tenant, region, currency = VENDORS[vendor % len(VENDORS)]
    return Scenario(
        "invoice_match",
        "evidence_required",
        "screening_clearance_missing",
        f"Payee of INV-{48200 + n} matched a sanctions list entry; clearance needed",
        "Screening returned a possible match; payment needs a compliance clearance reference.",
        [
            ("invoice", "ap-inbox", "internal", _invoice(n, name, amount, currency)),
            (
                "screening",
                "sanctions-screening",
                "restricted",
                {"list": "EU consolidated", "score": 0.87, "entry": "entity 4471", "payee": name},
            ),
        ],
        _tl(("tool_call", "screen_payee", name), ("tool_result", "screen_payee", "1 hit")),
        _attrs(tenant, region, amount, currency, "ap-bot"),
        proposed_action={"action": "hold_payment", "invoice": f"INV-{48200 + n}"},
        case_ref=f"invoice_{48200 + n}",
    )


def inv_payment_timeout(n: int, vendor: int, amount: str) -> Scenario:
    name, tenant, region, currency = VENDORS[vendor % len(VENDORS)]
    return Scenario(
        "invoice_match",
        "execution_uncertain",
        "payment_post_timeout",
        f"Posting payment for INV-{48200 + n} timed out; ERP state unknown",
        "The ERP did not answer within 30 s; the payment may or may not be booked.",
        [
            (
                "request",
                "erp",
                "internal",
                {"idempotency_key": f"pay-{48200 + n}", "amount": amount, "currency": currency},
            ),
            ("error", "erp", "internal", {"error": "ReadTimeout", "after_seconds": 30}),
        ],
        _tl(
            ("tool_call", "post_payment", f"idempotency_key=pay-{48200 + n}"),
            ("tool_result", "post_payment", "timeout after 30 s"),
        ),
        _attrs(tenant, region, amount, currency, "ap-bot"),
        proposed_action={"action": "post_payment", "idempotency_key": f"pay-{48200 + n}"},
        side_effect_state="unknown",
        case_ref=f"invoice_{48200 + n}",
    )


def inv_erp_exhausted(n: int, vendor: int, amount: str) -> Scenario:
    name, tenant, region, currency = VENDORS[vendor % len(VENDORS)]
    return Scenario(
        "invoice_match",
        "recovery_exhausted",
        "erp_retries_exhausted",
        f"ERP rejected posting of INV-{48200 + n} five times (HTTP 503)",
        "Automatic retries are exhausted; the posting was never accepted.",
        [("errors", "erp", "internal", {"attempts": 5, "last_status": 503})],
        _tl(*[("tool_call", "post_invoice", f"attempt {i}: HTTP 503") for i in range(1, 6)]),
        _attrs(tenant, region, amount, currency, "ap-bot"),
        proposed_action={"action": "post_invoice", "invoice": f"INV-{48200 + n}"},
        side_effect_state="confirmed_rejected",
        case_ref=f"invoice_{48200 + n}",
    )


def refund_over_limit(n: int, vendor: int, amount: str, initiated_by: str = "") -> Scenario:
    _, tenant, region, currency = VENDORS[vendor % len(VENDORS)]
    order = f"ORD-{903100 + n}"
    return Scenario(
        "refund_approval",
        "policy_denied",
        "refund_over_agent_limit",
        f"Refund of {amount} {currency} for {order} exceeds the agent limit of 500.00",
        "Refund policy caps automatic refunds at 500.00; a human approval is required.",
        [
            ("order", "shop", "internal", {"order": order, "total": amount, "status": "delivered"}),
            ("request", "support-desk", "internal", {"reason": "damaged on arrival"}),
            ("policy", "policy-engine", "internal", {"rule": "refund.max_auto", "limit": "500.00"}),
        ],
        _tl(
            ("tool_call", "evaluate_refund_policy", order),
            ("tool_result", "evaluate_refund_policy", "denied: over limit"),
        ),
        _attrs(tenant, region, amount, currency, initiated_by or "refund-agent"),
        proposed_action={"action": "issue_refund", "order": order, "amount": amount},
        case_ref=f"order_{903100 + n}",
    )


def refund_outside_window(n: int, vendor: int, amount: str) -> Scenario:
    _, tenant, region, currency = VENDORS[vendor % len(VENDORS)]
    order = f"ORD-{903100 + n}"
    return Scenario(
        "refund_approval",
        "policy_denied",
        "outside_return_window",
        f"Refund for {order} requested 47 days after delivery (policy: 30 days)",
        "Customer reports a late-discovered defect.",
        [
            ("order", "shop", "internal", {"order": order, "delivered": "47 days ago"}),
            ("policy", "policy-engine", "internal", {"rule": "refund.window_days", "limit": 30}),
        ],
        _tl(("tool_call", "evaluate_refund_policy", order), ("tool_result", "policy", "denied")),
        _attrs(tenant, region, amount, currency, "refund-agent"),
        proposed_action={"action": "issue_refund", "order": order, "amount": amount},
        case_ref=f"order_{903100 + n}",
    )


def refund_no_proof(n: int, vendor: int, amount: str) -> Scenario:
    _, tenant, region, currency = VENDORS[vendor % len(VENDORS)]
    order = f"ORD-{903100 + n}"
    return Scenario(
        "refund_approval",
        "evidence_required",
        "proof_of_return_missing",
        f"No carrier scan confirms the return of {order}",
        "The return label was printed but never scanned by the carrier.",
        [
            ("order", "shop", "internal", {"order": order, "total": amount}),
            ("tracking", "carrier", "internal", {"label": f"1Z{n:08d}", "scans": 0}),
        ],
        _tl(("tool_call", "track_return", f"1Z{n:08d}"), ("tool_result", "track_return", "0")),
        _attrs(tenant, region, amount, currency, "refund-agent"),
        proposed_action={"action": "issue_refund", "order": order, "amount": amount},
        case_ref=f"order_{903100 + n}",
    )


def refund_account_mismatch(n: int, vendor: int, amount: str) -> Scenario:
    _, tenant, region, currency = VENDORS[vendor % len(VENDORS)]
    order = f"ORD-{903100 + n}"
    return Scenario(
        "refund_approval",
        "evidence_conflict",
        "payout_account_mismatch",
        f"Refund payout account for {order} differs from the account on file",
        "The customer asked for the refund to a new bank account.",
        [
            (
                "account_on_file",
                "billing",
                "confidential",
                {"iban": "DE89 **** **** **** 3000", "holder": "C. Weber"},
            ),
            (
                "requested_account",
                "support-desk",
                "confidential",
                {"iban": "LT12 **** **** **** 0427", "holder": "C. Weber"},
            ),
        ],
        _tl(("validation", "payout_account_matches", "failed")),
        _attrs(tenant, region, amount, currency, "refund-agent"),
        proposed_action={"action": "issue_refund", "order": order, "to": "requested_account"},
        case_ref=f"order_{903100 + n}",
    )


def refund_provider_timeout(n: int, vendor: int, amount: str) -> Scenario:
    _, tenant, region, currency = VENDORS[vendor % len(VENDORS)]
    order = f"ORD-{903100 + n}"
    return Scenario(
        "refund_approval",
        "execution_uncertain",
        "refund_call_timeout",
        f"Refund call to the payment provider for {order} timed out",
        "The provider may have issued the refund; a blind retry could refund twice.",
        [
            (
                "request",
                "payments",
                "internal",
                {"idempotency_key": f"rf-{903100 + n}", "amount": amount},
            ),
            ("error", "payments", "internal", {"error": "ReadTimeout", "after_seconds": 20}),
        ],
        _tl(("tool_call", "create_refund", f"rf-{903100 + n}"), ("tool_result", "", "timeout")),
        _attrs(tenant, region, amount, currency, "refund-agent"),
        proposed_action={"action": "create_refund", "idempotency_key": f"rf-{903100 + n}"},
        side_effect_state="unknown",
        case_ref=f"order_{903100 + n}",
    )


def support_unverified(n: int, vendor: int) -> Scenario:
    _, tenant, region, _currency = VENDORS[vendor % len(VENDORS)]
    return Scenario(
        "support_account_change",
        "policy_denied",
        "identity_not_verified",
        f"Email change on account ACC-{5500 + n} requested without verified identity",
        "The caller failed the second knowledge question.",
        [
            (
                "identity_check",
                "idv",
                "restricted",
                {"document": "passport", "match_score": 0.41, "liveness": "failed"},
            ),
            ("ticket", "helpdesk", "internal", {"ticket": f"T-{77100 + n}", "channel": "phone"}),
        ],
        _tl(
            ("tool_call", "verify_identity", f"ACC-{5500 + n}"),
            ("tool_result", "verify", "failed"),
        ),
        _attrs(tenant, region, None, None, "support-copilot"),
        proposed_action={"action": "change_email", "account": f"ACC-{5500 + n}"},
        case_ref=f"account_{5500 + n}",
    )


def support_identity_conflict(n: int, vendor: int) -> Scenario:
    _, tenant, region, _currency = VENDORS[vendor % len(VENDORS)]
    return Scenario(
        "support_account_change",
        "evidence_conflict",
        "identity_signals_conflict",
        f"Phone number change on ACC-{5500 + n}: device and document signals disagree",
        "The document check passed but the request came from a new device in another country.",
        [
            ("identity_check", "idv", "restricted", {"document": "id card", "match_score": 0.94}),
            ("device", "risk-engine", "confidential", {"new_device": True, "country": "PT"}),
        ],
        _tl(("tool_call", "score_risk", f"ACC-{5500 + n}"), ("tool_result", "score", "0.68")),
        _attrs(tenant, region, None, None, "support-copilot"),
        proposed_action={"action": "change_phone", "account": f"ACC-{5500 + n}"},
        case_ref=f"account_{5500 + n}",
    )


def support_owner_confirmation(n: int, vendor: int) -> Scenario:
    _, tenant, region, _currency = VENDORS[vendor % len(VENDORS)]
    return Scenario(
        "support_account_change",
        "evidence_required",
        "owner_confirmation_missing",
        f"Admin role for a new user on ACC-{5500 + n} needs the account owner's confirmation",
        "The requester is not the account owner.",
        [("ticket", "helpdesk", "internal", {"ticket": f"T-{77100 + n}", "role": "admin"})],
        _tl(("tool_call", "lookup_owner", f"ACC-{5500 + n}"), ("tool_result", "owner", "other")),
        _attrs(tenant, region, None, None, "support-copilot"),
        proposed_action={"action": "grant_role", "role": "admin"},
        case_ref=f"account_{5500 + n}",
    )


def support_reply_quality(n: int, vendor: int) -> Scenario:
    _, tenant, region, _currency = VENDORS[vendor % len(VENDORS)]
    return Scenario(
        "support_account_change",
        "quality_threshold_missed",
        "reply_quality_below_threshold",
        f"Drafted reply for ticket T-{77100 + n} scored 0.62 (threshold 0.80)",
        "The reply grader flagged missing next steps.",
        [
            (
                "draft_reply",
                "support-copilot",
                "internal",
                {"text": "Your request was processed.", "score": 0.62},
            ),
        ],
        _tl(("tool_call", "grade_reply", f"T-{77100 + n}"), ("tool_result", "grade", "0.62")),
        _attrs(tenant, region, None, None, "support-copilot"),
        proposed_action={"action": "send_reply", "ticket": f"T-{77100 + n}"},
        case_ref=f"ticket_{77100 + n}",
    )


def support_mfa_timeout(n: int, vendor: int) -> Scenario:
    _, tenant, region, _currency = VENDORS[vendor % len(VENDORS)]
    return Scenario(
        "support_account_change",
        "execution_uncertain",
        "mfa_reset_timeout",
        f"MFA reset for ACC-{5500 + n} timed out at the identity provider",
        "The reset may have been applied; the user may already have a new enrolment link.",
        [("request", "idp", "internal", {"idempotency_key": f"mfa-{5500 + n}"})],
        _tl(("tool_call", "reset_mfa", f"mfa-{5500 + n}"), ("tool_result", "", "timeout")),
        _attrs(tenant, region, None, None, "support-copilot"),
        proposed_action={"action": "reset_mfa", "idempotency_key": f"mfa-{5500 + n}"},
        side_effect_state="unknown",
        case_ref=f"account_{5500 + n}",
    )


def _invoice(n: int, vendor: str, amount: str, currency: str) -> dict[str, Any]:
    return {"invoice": f"INV-{48200 + n}", "vendor": vendor, "total": amount, "currency": currency}


def _po(number: str, vendor: str, amount: str, currency: str) -> dict[str, Any]:
    return {"po_number": number, "vendor": vendor, "amount": amount, "currency": currency}


def _attrs(
    tenant: str, region: str, amount: str | None, currency: str | None, initiated_by: str
) -> dict[str, Any]:
    attributes: dict[str, Any] = {"tenant": tenant, "region": region, "initiated_by": initiated_by}
    if amount is not None:
        attributes.update(amount=amount, currency=currency)
    return attributes


def packet(
    scenario: Scenario,
    *,
    instance_id: str,
    version: str,
    filed_at: datetime,
    tenant: str | None = None,
) -> dict[str, Any]:
    """The full review packet (evidence source_timestamp as datetimes, as file_case takes)."""
    attributes = dict(scenario.attributes)
    if tenant:
        attributes["tenant"] = tenant
    count, steps = len(scenario.evidence), len(scenario.timeline)
    timeline = [
        {**step, "at": (filed_at - timedelta(seconds=30 * (steps - i))).isoformat()}
        for i, step in enumerate(scenario.timeline)
    ]
    return {
        "workflow_type": scenario.workflow_type,
        "workflow_version": version,
        "workflow_instance_id": instance_id,
        "checkpoint_id": f"cp_{scenario.reason_code}",
        "resume_handle": f"rh_{instance_id}",
        "case_ref": scenario.case_ref,
        "summary": scenario.summary,
        "class": scenario.exception_class,
        "reason_code": scenario.reason_code,
        "reason_note": scenario.reason_note,
        "proposed_action": scenario.proposed_action,
        "side_effect_state": scenario.side_effect_state,
        "policy_version": f"{scenario.workflow_type}-policy-12",
        "policy_decision_ref": f"pd_{instance_id}",
        "trace_ref": f"trace_{instance_id}",
        "input_snapshot_ref": f"snapshot_{instance_id}",
        "timeline": timeline,
        "evidence": [
            {
                "ref": ref,
                "source": source,
                "source_timestamp": filed_at - timedelta(minutes=2 * (count - i)),
                "classification": classification,
                "content": content,
            }
            for i, (ref, source, classification, content) in enumerate(scenario.evidence)
        ],
        "attributes": attributes,
    }


# --- the simulator's random packets -----------------------------------------------------------

SCENARIOS: list[Callable[[random.Random, int], Scenario]] = [
    lambda r, n: inv_po_conflict(n, r.randrange(6), _amount(r, 300, 90000)),
    lambda r, n: inv_amount_mismatch(
        n, r.randrange(6), _amount(r, 500, 40000), _amount(r, 500, 40000)
    ),
    lambda r, n: inv_missing_receipt(n, r.randrange(6), _amount(r, 100, 30000)),
    lambda r, n: inv_extraction_rejected(n, r.randrange(6), _amount(r, 100, 20000)),
    lambda r, n: inv_low_confidence(n, r.randrange(6), _amount(r, 100, 9000)),
    lambda r, n: inv_payment_timeout(n, r.randrange(6), _amount(r, 500, 80000)),
    lambda r, n: refund_over_limit(n, r.randrange(6), _amount(r, 501, 4000)),
    lambda r, n: refund_outside_window(n, r.randrange(6), _amount(r, 20, 900)),
    lambda r, n: refund_no_proof(n, r.randrange(6), _amount(r, 20, 900)),
    lambda r, n: support_unverified(n, r.randrange(6)),
    lambda r, n: support_identity_conflict(n, r.randrange(6)),
    lambda r, n: support_reply_quality(n, r.randrange(6)),
]


def _amount(rng: random.Random, low: int, high: int) -> str:
    return f"{rng.randrange(low * 100, high * 100) / 100:.2f}"


def random_packet(rng: random.Random, *, instance_id: str, filed_at: datetime) -> dict[str, Any]:
    """A JSON-ready packet for the API (timestamps as ISO strings)."""
    number = rng.randrange(100, 9000)
    scenario = rng.choice(SCENARIOS)(rng, number)
    versions = {"invoice_match": ["16", "17", "17"], "refund_approval": ["3", "4"]}
    version = rng.choice(versions.get(scenario.workflow_type, ["1"]))
    if scenario.workflow_type == "invoice_match" and rng.random() < 0.05:
        version = "15"  # now and then an engine still on a retired version: quarantined
    body = packet(scenario, instance_id=instance_id, version=version, filed_at=filed_at)
    for item in body["evidence"]:
        item["source_timestamp"] = item["source_timestamp"].isoformat()
    return body
