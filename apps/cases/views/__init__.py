"""Worker and supervisor pages, one module per screen."""

from .assignment import next_case, shift, skip
from .audit import history as audit_history
from .audit import history_export as audit_export
from .detail import (
    case_detail,
    claim,
    decide,
    reconcile,
    record_answer,
    release,
    renew,
    request_information,
    save_draft,
)
from .notifications import mark_all_read, mark_read, notifications
from .queue import delete_view, queue, save_view
from .recovery import recovery, retry_delivery
from .supervisor import (
    adjust_due,
    board,
    board_absence,
    board_capacity,
    board_priority,
    board_transfer,
    override_priority,
    reroute,
    transfer,
)

__all__ = [
    "adjust_due",
    "audit_export",
    "audit_history",
    "board",
    "board_absence",
    "board_capacity",
    "board_priority",
    "board_transfer",
    "case_detail",
    "claim",
    "decide",
    "delete_view",
    "mark_all_read",
    "mark_read",
    "next_case",
    "notifications",
    "override_priority",
    "queue",
    "reconcile",
    "record_answer",
    "recovery",
    "release",
    "renew",
    "request_information",
    "reroute",
    "retry_delivery",
    "save_draft",
    "save_view",
    "shift",
    "skip",
    "transfer",
]
