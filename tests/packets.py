"""Sample review packets, free of Django so benchmarks and load scripts can use them too."""

from __future__ import annotations

import copy
import itertools
from typing import Any

_counter = itertools.count(1)


def invoice_packet(**overrides: Any) -> dict[str, Any]:
    """The seed's invoice conflict packet: two candidate purchase orders."""
    n = next(_counter)
    packet: dict[str, Any] = {
        "workflow_type": "invoice_match",
        "workflow_version": "17",
        "workflow_instance_id": f"wf_invoice_{n}",
        "checkpoint_id": "cp_0193",
        "case_ref": f"invoice_{8400 + n}",
        "summary": "Invoice matches two open purchase orders",
        "class": "evidence_conflict",
        "reason_code": "multiple_po_match",
        "reason_note": "PO 781 and PO 799 both match vendor and amount.",
        "proposed_action": None,
        "side_effect_state": "none_attempted",
        "policy_version": "ap-policy-12",
        "policy_decision_ref": "policy_551",
        "trace_ref": "trace_932",
        "input_snapshot_ref": "snapshot_8421",
        "timeline": [
            {"at": "2026-08-31T14:19:58Z", "kind": "tool_call", "name": "find_purchase_orders"},
            {"at": "2026-08-31T14:19:59Z", "kind": "tool_result", "summary": "2 candidates"},
        ],
        "evidence": [
            {
                "ref": "po_781",
                "source": "erp",
                "source_timestamp": "2026-08-31T14:19:59Z",
                "classification": "internal",
                "content": {"po_number": "PO-781", "vendor": "Acme", "amount": "12400.00"},
            },
            {
                "ref": "po_799",
                "source": "erp",
                "source_timestamp": "2026-08-31T14:19:59Z",
                "classification": "internal",
                "content": {"po_number": "PO-799", "vendor": "Acme", "amount": "12400.00"},
            },
        ],
        "attributes": {
            "tenant": "acme-eu",
            "region": "eu",
            "amount": "12400.00",
            "currency": "EUR",
            "initiated_by": "ap-bot",
        },
    }
    packet.update(copy.deepcopy(overrides))
    return packet
