"""Lifecycle services: every state change of a case goes through here.

Views, the API, Celery tasks and the admin call these verbs; none of them saves a case.
"""

from .decisions import (
    allowed_resolutions,
    decide_case,
    reconcile_side_effect,
    record_answer,
    request_information,
    save_draft,
)
from .delivery import ack_event, relay_due_events, relay_event, retry_delivery
from .filing import append_evidence, cancel_case, file_case, report_side_effect
from .leases import (
    claim_case,
    expire_leases,
    release_case,
    release_user_leases,
    renew_lease,
)
from .priority import refresh_priorities
from .waiting import expire_waits

__all__ = [
    "ack_event",
    "allowed_resolutions",
    "append_evidence",
    "cancel_case",
    "claim_case",
    "decide_case",
    "expire_leases",
    "expire_waits",
    "file_case",
    "reconcile_side_effect",
    "record_answer",
    "refresh_priorities",
    "relay_due_events",
    "relay_event",
    "release_case",
    "release_user_leases",
    "renew_lease",
    "report_side_effect",
    "request_information",
    "retry_delivery",
    "save_draft",
]
