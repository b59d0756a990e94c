"""Case states the browser tests start from, made through the lifecycle services."""

from __future__ import annotations

import uuid

from django.contrib.auth.models import User

from apps.cases.models import Case
from apps.cases.services import decide_case

# A case whose second evidence item is above a worker's (internal) clearance.
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


def decide_select_po(case: Case, actor: User) -> Case:
    """`actor`, holding the lease on `case`, selects purchase order po_781."""
    decide_case(
        case_id=case.pk,
        actor=actor,
        expected_version=case.version,
        lease_token=case.lease_token,
        resolution="select_po",
        fields={"po_number": "po_781"},
        note="",
        resolution_id=str(uuid.uuid4()),
        evidence_digest=case.evidence_digest,
    )
    case.refresh_from_db()
    return case
