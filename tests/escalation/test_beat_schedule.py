"""Celery beat drives every sweep: each one is on the schedule, names a task a worker knows,
and the database scheduler the deployment uses installs it."""

from __future__ import annotations

import pytest
from django_celery_beat.models import PeriodicTask
from django_celery_beat.schedulers import DatabaseScheduler

from apps.cases import tasks  # noqa: F401 (registers the tasks with the app)
from config.celery import app

# task name -> seconds between runs
SWEEPS = {
    "cases.expire_leases": 30,
    "cases.relay_due_events": 15,
    "cases.expire_waits": 60,
    "cases.refresh_priorities": 60,
    "cases.escalate_due_cases": 60,
    "cases.expire_overrides": 60,
    "cases.lapse_capacity_adjustments": 60,
    "cases.end_shifts": 60,
    "cases.assign_pushed_cases": 30,
    "cases.check_capacity_alerts": 60,
}


def test_every_sweep_is_on_the_beat_schedule_and_names_a_registered_task(settings):
    scheduled = {
        entry["task"]: entry["schedule"].run_every.total_seconds()
        for entry in settings.CELERY_BEAT_SCHEDULE.values()
    }
    assert scheduled == SWEEPS
    missing = [name for name in SWEEPS if name not in app.tasks]
    assert missing == []
    # Thin and bounded: every sweep task has a hard time limit.
    assert all(app.tasks[name].time_limit for name in SWEEPS)


# The scheduler commits and closes connections itself, as it does in the beat process.
@pytest.mark.django_db(transaction=True)
def test_the_database_scheduler_installs_every_sweep_with_its_interval():
    DatabaseScheduler(app=app)

    installed = {
        task.task: task.interval.every * {"seconds": 1, "minutes": 60}[task.interval.period]
        for task in PeriodicTask.objects.filter(task__startswith="cases.").select_related(
            "interval"
        )
        if task.enabled
    }
    assert installed == SWEEPS
