"""Lifecycle services: every state change of a case goes through here.

Views, the API, Celery tasks and the admin call these verbs; none of them saves a case.
"""

from .alerts import check_capacity_alerts, clear_capacity_alert, raise_if_no_eligible_worker
from .assignment import assign_pushed_cases, next_case
from .capacity import active_load, adjust_capacity, effective_capacity, lapse_capacity_adjustments
from .decisions import (
    allowed_resolutions,
    decide_case,
    reconcile_side_effect,
    record_answer,
    request_information,
    save_draft,
)
from .delivery import ack_event, relay_due_events, relay_event, retry_delivery
from .escalation import escalate_due_cases
from .filing import append_evidence, cancel_case, file_case, report_side_effect
from .leases import (
    claim_case,
    expire_leases,
    release_case,
    release_user_leases,
    renew_lease,
)
from .notifications import mark_all_read, mark_read, notify
from .overrides import adjust_due, clear_priority_override, expire_overrides, override_priority
from .priority import refresh_priorities
from .transfers import end_shifts, go_off_shift, go_on_shift, reroute_case, skip_case, transfer_case
from .waiting import expire_waits

__all__ = [
    "ack_event",
    "active_load",
    "adjust_capacity",
    "adjust_due",
    "allowed_resolutions",
    "append_evidence",
    "assign_pushed_cases",
    "cancel_case",
    "check_capacity_alerts",
    "claim_case",
    "clear_capacity_alert",
    "clear_priority_override",
    "decide_case",
    "effective_capacity",
    "end_shifts",
    "escalate_due_cases",
    "expire_leases",
    "expire_overrides",
    "expire_waits",
    "file_case",
    "go_off_shift",
    "go_on_shift",
    "lapse_capacity_adjustments",
    "mark_all_read",
    "mark_read",
    "next_case",
    "notify",
    "raise_if_no_eligible_worker",
    "override_priority",
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
    "reroute_case",
    "retry_delivery",
    "save_draft",
    "skip_case",
    "transfer_case",
]
