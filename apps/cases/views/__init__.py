"""Worker and supervisor pages, one module per screen."""

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
from .queue import delete_view, queue, save_view
from .recovery import recovery, retry_delivery

__all__ = [
    "case_detail",
    "claim",
    "decide",
    "delete_view",
    "queue",
    "reconcile",
    "record_answer",
    "recovery",
    "release",
    "renew",
    "request_information",
    "retry_delivery",
    "save_draft",
    "save_view",
]
