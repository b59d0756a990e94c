"""What the demo desk holds: workflow types, sources, users for every role, and the seeded
cases with the state each one is walked to."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .packets import (
    Scenario,
    inv_amount_mismatch,
    inv_erp_exhausted,
    inv_extraction_rejected,
    inv_low_confidence,
    inv_missing_receipt,
    inv_payment_timeout,
    inv_po_conflict,
    inv_sanctions_hit,
    packet,
    refund_account_mismatch,
    refund_no_proof,
    refund_outside_window,
    refund_over_limit,
    refund_provider_timeout,
    support_identity_conflict,
    support_mfa_timeout,
    support_owner_confirmation,
    support_reply_quality,
    support_unverified,
)

# The one password of every demo user: printed by `make run`, never used in production.
DEMO_PASSWORD = "exception-desk-demo"  # noqa: S105
SIMULATOR_SOURCE = "demo-simulator"
ONBOARDING_TENANT = "wayne-onboarding"

ALL_PERMS = ("view_queue", "work_queue", "supervise_queue")
WORK = ("view_queue", "work_queue")
VIEW = ("view_queue",)
EVERY_QUEUE = "*"


# --- configuration ------------------------------------------------------------------------


@dataclass(frozen=True)
class DemoUser:
    username: str
    first_name: str
    last_name: str
    role: str
    clearance: str
    queues: dict[str, tuple[str, ...]]
    what: str
    superuser: bool = False
    amount_limit: str = "0"
    skills: tuple[tuple[str, int], ...] = ()


USERS: list[DemoUser] = [
    DemoUser(
        "ada",
        "Adaeze",
        "Okafor",
        role="admin",
        clearance="restricted",
        queues={},
        what="admin (superuser, Django admin)",
        superuser=True,
        amount_limit="1000000",
        skills=(
            ("invoice_matching", 5),
            ("refunds", 5),
            ("account_security", 5),
            ("platform_ops", 5),
        ),
    ),
    DemoUser(
        "sam",
        "Samir",
        "Haddad",
        role="supervisor",
        clearance="restricted",
        queues={EVERY_QUEUE: ALL_PERMS},
        what="supervisor of every queue",
        amount_limit="250000",
        skills=(
            ("invoice_matching", 4),
            ("refunds", 4),
            ("account_security", 4),
            ("platform_ops", 4),
        ),
    ),
    DemoUser(
        "wendy",
        "Wendy",
        "Lin",
        role="worker",
        clearance="confidential",
        queues={"accounts_payable": WORK, "finance_approvals": WORK},
        what="worker: accounts payable, finance approvals",
        amount_limit="25000",
        skills=(("invoice_matching", 4), ("refunds", 3)),
    ),
    DemoUser(
        "walter",
        "Walter",
        "Brandt",
        role="worker",
        clearance="restricted",
        queues={"security_review": WORK, "triage": WORK},
        what="worker: security review, triage",
        amount_limit="5000",
        skills=(("account_security", 4), ("invoice_matching", 2)),
    ),
    DemoUser(
        "pat",
        "Patricia",
        "Novak",
        role="worker",
        clearance="internal",
        queues={"platform": WORK},
        what="worker: platform",
        skills=(("platform_ops", 4),),
    ),
    DemoUser(
        "alice",
        "Alice",
        "Moreau",
        role="auditor",
        clearance="confidential",
        queues={EVERY_QUEUE: VIEW},
        what="auditor: reads every queue",
    ),
    DemoUser(
        "quinn",
        "Quinn",
        "Adebayo",
        role="quality_reviewer",
        clearance="internal",
        queues={EVERY_QUEUE: VIEW},
        what="quality reviewer: reads every queue",
    ),
]

WORKFLOW_TYPES: list[dict[str, Any]] = [
    {
        "name": "invoice_match",
        "display_name": "Invoice matching",
        "supported_versions": ["16", "17"],
        "webhook": True,
    },
    {
        # Pull-only: its engine cannot receive calls and reads GET /api/v1/decisions.
        "name": "refund_approval",
        "display_name": "Refund approval",
        "supported_versions": ["3", "4"],
        "webhook": False,
    },
    {
        "name": "support_account_change",
        "display_name": "Support account change",
        "supported_versions": ["1"],
        "webhook": True,
    },
]

SOURCES: list[tuple[str, list[str], bool]] = [
    ("ap-automation", ["invoice_match"], False),
    ("refunds-agent", ["refund_approval"], False),
    ("support-copilot", ["support_account_change"], False),
    (SIMULATOR_SOURCE, [t["name"] for t in WORKFLOW_TYPES], True),
]
SOURCE_OF_TYPE = {
    "invoice_match": "ap-automation",
    "refund_approval": "refunds-agent",
    "support_account_change": "support-copilot",
}

ONBOARDING_RULE = {
    "position": 5,
    "name": "Tenants in onboarding are triaged first",
    "tenant": ONBOARDING_TENANT,
    "queue": "triage",
}


def receiver_url(base_url: str, workflow_type: str) -> str:
    return f"{base_url.rstrip('/')}/demo/webhooks/{workflow_type}/"


# --- the seeded cases -----------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """Where a seeded case ends up, and who takes it there."""

    state: str  # open claimed waiting pending failed resolved quarantined closed
    actor: str = ""
    resolution: str = ""
    fields: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    question: str = ""
    asked_of: str = ""
    reason: str = ""
    draft: bool = False
    reconcile: str = ""  # provider record a worker checked (side effect -> confirmed_applied)


@dataclass(frozen=True)
class DemoCase:
    number: int
    scenario: Scenario
    plan: Plan
    age_minutes: int
    version: str = ""
    tenant: str = ""


OPEN = Plan("open")
QUARANTINED = Plan("quarantined")

H = 60  # minutes in an hour
D = 24 * H


def _claimed(actor: str, draft: bool = False) -> Plan:
    return Plan("claimed", actor=actor, draft=draft)


def _waiting(actor: str, question: str, asked_of: str) -> Plan:
    return Plan("waiting", actor=actor, question=question, asked_of=asked_of)


def _decided(state: str, actor: str, resolution: str, note: str = "", **fields: Any) -> Plan:
    return Plan(state, actor=actor, resolution=resolution, fields=fields, note=note)


def _closed(reason: str) -> Plan:
    return Plan("closed", reason=reason)


def demo_cases() -> list[DemoCase]:
    c: list[DemoCase] = []

    def add(scenario: Scenario, plan: Plan, age: int, version: str = "", tenant: str = "") -> None:
        c.append(DemoCase(len(c) + 1, scenario, plan, age, version, tenant))

    # accounts_payable (invoice_match v17/v16)
    add(inv_po_conflict(1, 0, "12400.00"), OPEN, 3 * H)
    add(inv_po_conflict(2, 1, "8310.50"), OPEN, 26 * H)  # overdue (target 18 h 40)
    add(inv_po_conflict(3, 3, "132000.00"), _claimed("wendy", draft=True), 50)
    add(
        inv_po_conflict(4, 2, "2150.00"),
        _decided("resolved", "wendy", "select_po", po_number="po_a"),
        3 * D,
    )
    add(
        inv_po_conflict(5, 4, "45990.00"),
        _decided("failed", "wendy", "select_po", po_number="po_b"),
        2 * D,
        version="16",
    )
    add(inv_amount_mismatch(6, 0, "10240.00", "9800.00"), OPEN, 9 * H)
    add(
        inv_amount_mismatch(7, 5, "5400.00", "5100.00"),
        _waiting("wendy", "Please confirm the agreed unit price for line 3.", "Acme buyer"),
        5 * H,
    )
    add(
        inv_amount_mismatch(8, 1, "77000.00", "70000.00"),
        _decided(
            "resolved", "sam", "close_invalid", "Duplicate of an invoice already paid in June."
        ),
        4 * D,
    )
    add(inv_missing_receipt(9, 2, "980.00"), OPEN, 40)
    add(inv_missing_receipt(10, 3, "15600.00"), OPEN, 11 * H)  # overdue (target 8 h)
    add(
        inv_missing_receipt(11, 0, "4300.00"),
        _waiting("wendy", "Was the delivery received at the Leipzig warehouse?", "Warehouse lead"),
        2 * H,
    )
    add(
        inv_missing_receipt(12, 4, "2999.99"),
        _decided("pending", "wendy", "provide_evidence", evidence_ref="GRN-55120"),
        6 * H,
    )
    add(inv_missing_receipt(13, 1, "640.00"), _closed("invoice withdrawn by the vendor"), 30 * H)
    add(inv_extraction_rejected(14, 0, "3120.00"), OPEN, 2 * H)
    add(inv_extraction_rejected(15, 3, "18450.00"), _claimed("wendy"), 7 * H)
    add(
        inv_extraction_rejected(16, 2, "510.00"),
        _decided("resolved", "wendy", "correct_and_resubmit", corrected_value="GB123456789"),
        5 * D,
    )
    add(inv_low_confidence(17, 5, "7720.00"), OPEN, 20 * H)
    add(inv_low_confidence(18, 1, "1290.00"), _decided("resolved", "wendy", "accept_output"), 2 * D)
    add(inv_sanctions_hit(19, 3, "56000.00"), OPEN, 4 * H)  # restricted: wendy sees it redacted
    add(
        inv_sanctions_hit(20, 1, "9100.00"),
        _decided("resolved", "sam", "provide_evidence", evidence_ref="COMPL-2291"),
        6 * D,
    )

    # finance_approvals (refund_approval v4/v3, pull-only: decisions wait in the feed)
    add(refund_over_limit(21, 0, "640.00"), OPEN, 30)
    add(refund_over_limit(22, 1, "1250.00"), OPEN, 3 * H)  # overdue (target 2 h)
    add(refund_over_limit(23, 4, "2200.00", initiated_by="wendy"), OPEN, 80)  # segregation
    add(refund_over_limit(24, 2, "830.00"), _claimed("wendy"), 45)
    add(
        refund_over_limit(25, 3, "990.00"),
        _decided(
            "pending",
            "wendy",
            "approve_exception",
            "Long-standing customer; goods arrived broken.",
            approved_amount="990.00",
        ),
        5 * H,
    )
    add(
        refund_over_limit(26, 5, "3100.00"),
        _decided("pending", "sam", "deny", "Second refund on this order this month."),
        9 * H,
        version="3",
    )
    add(refund_outside_window(27, 0, "149.00"), OPEN, 50)
    add(
        refund_outside_window(28, 1, "420.00"),
        _decided("resolved", "wendy", "deny", "Defect reported after the warranty window."),
        3 * D,
    )
    add(
        refund_no_proof(29, 4, "310.00"),
        _waiting("wendy", "Can the carrier confirm the parcel was handed in?", "Carrier support"),
        3 * H,
    )
    add(
        refund_no_proof(30, 2, "89.90"),
        _decided("pending", "wendy", "provide_evidence", evidence_ref="SCAN-88120"),
        20 * H,
    )
    add(refund_no_proof(31, 3, "240.00"), _closed("customer kept the item"), 2 * D)
    add(refund_account_mismatch(32, 0, "1780.00"), OPEN, 90)
    add(
        refund_account_mismatch(33, 3, "560.00"),
        _decided("resolved", "sam", "select_po", po_number="account_on_file"),
        4 * D,
    )

    # security_review (support_account_change v1): restricted identity evidence
    add(support_unverified(34, 1), OPEN, 25)
    add(support_unverified(35, 4), OPEN, 3 * H)
    add(support_unverified(36, 0), _claimed("walter"), 35)
    add(
        support_unverified(37, 2),
        _decided("resolved", "walter", "deny", "Caller could not be verified."),
        2 * D,
    )
    add(support_identity_conflict(38, 3), OPEN, 70)
    add(
        support_identity_conflict(39, 5),
        _waiting("walter", "Did the customer travel to Portugal this week?", "Account owner"),
        4 * H,
    )
    add(
        support_identity_conflict(40, 1),
        _decided("failed", "walter", "close_invalid", "The account owner did not ask for it."),
        30 * H,
    )
    add(support_owner_confirmation(41, 0), OPEN, 5 * H)
    add(
        support_owner_confirmation(42, 4),
        _decided("pending", "walter", "provide_evidence", evidence_ref="T-77142-owner-mail"),
        3 * H,
    )
    add(support_reply_quality(43, 2), OPEN, 6 * H)
    add(support_reply_quality(44, 3), _closed("ticket merged into T-77101"), 20 * H)

    # platform: uncertain writes and exhausted recovery (retry hidden while unknown)
    add(inv_payment_timeout(45, 0, "24800.00"), OPEN, 90)
    add(inv_payment_timeout(46, 2, "3300.00"), OPEN, 6 * H)  # overdue (target 4 h)
    add(
        inv_payment_timeout(47, 1, "61000.00"),
        Plan("open", actor="pat", reconcile="ERP doc 5100048812"),
        3 * H,
    )
    add(
        inv_payment_timeout(48, 4, "1800.00"),
        _decided("resolved", "pat", "confirm_applied", provider_record="ERP doc 5100047730"),
        3 * D,
    )
    add(inv_erp_exhausted(49, 3, "14200.00"), _claimed("pat"), 2 * H)
    add(inv_erp_exhausted(50, 5, "8800.00"), _decided("failed", "pat", "retry_now"), 26 * H)
    add(
        inv_erp_exhausted(51, 0, "970.00"),
        _decided("resolved", "pat", "compensate", "Vendor paid by manual transfer."),
        5 * D,
    )
    add(refund_provider_timeout(52, 1, "450.00"), OPEN, 100)
    add(
        refund_provider_timeout(53, 2, "1200.00"),
        _decided("pending", "pat", "confirm_applied", provider_record="re_3PqL9x2eZvKf"),
        8 * H,
    )
    add(support_mfa_timeout(54, 4), OPEN, 55)
    add(
        support_mfa_timeout(55, 0),
        _decided("failed", "pat", "close_invalid", "Account closed meanwhile."),
        2 * D,
    )

    # platform: quarantined checkpoints of retired invoice_match v15
    add(inv_po_conflict(56, 2, "3900.00"), QUARANTINED, 7 * H, version="15")
    add(inv_missing_receipt(57, 0, "12000.00"), QUARANTINED, 30 * H, version="15")
    add(inv_low_confidence(58, 4, "640.00"), QUARANTINED, 2 * H, version="15")

    # triage: tenants still in onboarding match no team's rule yet
    add(inv_po_conflict(59, 1, "2750.00"), OPEN, 20, tenant=ONBOARDING_TENANT)
    add(refund_over_limit(60, 3, "700.00"), OPEN, 2 * H, tenant=ONBOARDING_TENANT)  # overdue
    add(support_owner_confirmation(61, 2), _claimed("walter"), 15, tenant=ONBOARDING_TENANT)
    add(
        inv_missing_receipt(62, 5, "4100.00"),
        _closed("duplicate filing"),
        6 * H,
        tenant=ONBOARDING_TENANT,
    )
    return c


DEFAULT_VERSION = {"invoice_match": "17", "refund_approval": "4", "support_account_change": "1"}


def demo_packet(case: DemoCase, filed_at: datetime) -> dict[str, Any]:
    version = case.version or DEFAULT_VERSION[case.scenario.workflow_type]
    return packet(
        case.scenario,
        instance_id=f"wf_demo_{case.number:03d}",
        version=version,
        filed_at=filed_at,
        tenant=case.tenant or None,
    )
