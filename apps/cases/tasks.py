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
