"""Thin Celery tasks: load by id, call a service. All idempotent and safe to overlap."""

from __future__ import annotations

from celery import shared_task

from . import services


@shared_task(name="cases.relay_event", time_limit=60)
def relay_event_task(event_id: str) -> str:
    return services.relay_event(event_id=event_id)


@shared_task(name="cases.relay_due_events", time_limit=300)
def relay_due_events_task() -> dict[str, int]:
    return services.relay_due_events()


@shared_task(name="cases.expire_leases", time_limit=120)
def expire_leases_task() -> int:
    return services.expire_leases()


@shared_task(name="cases.expire_waits", time_limit=120)
def expire_waits_task() -> int:
    return services.expire_waits()


@shared_task(name="cases.refresh_priorities", time_limit=300)
def refresh_priorities_task() -> int:
    return services.refresh_priorities()


@shared_task(name="cases.escalate_due_cases", time_limit=240, soft_time_limit=220)
def escalate_due_cases_task() -> int:
    return services.escalate_due_cases()


@shared_task(name="cases.expire_overrides", time_limit=120, soft_time_limit=110)
def expire_overrides_task() -> int:
    return services.expire_overrides()


# The sweeps below call the assignment helper's services. They are imported inside the task
# body so this module (and the beat schedule that names the tasks) loads even before those
# services exist; a beat firing early fails that one run, not the worker.


@shared_task(name="cases.lapse_capacity_adjustments", time_limit=120, soft_time_limit=110)
def lapse_capacity_adjustments_task() -> int:
    from .services.capacity import lapse_capacity_adjustments

    return lapse_capacity_adjustments()


@shared_task(name="cases.end_shifts", time_limit=240, soft_time_limit=220)
def end_shifts_task() -> int:
    from .services.transfers import end_shifts

    return end_shifts()


@shared_task(name="cases.assign_pushed_cases", time_limit=60, soft_time_limit=50)
def assign_pushed_cases_task() -> int:
    from .services.assignment import assign_pushed_cases

    return assign_pushed_cases()


@shared_task(name="cases.check_capacity_alerts", time_limit=120, soft_time_limit=110)
def check_capacity_alerts_task() -> int:
    from .services.alerts import check_capacity_alerts

    return check_capacity_alerts()
