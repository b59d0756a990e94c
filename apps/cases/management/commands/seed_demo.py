"""`python manage.py seed_demo`: the demo desk for `make run`. Idempotent."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.cases import demo


class Command(BaseCommand):
    help = (
        "Create the demo desk: workflow types, API sources, users for every role (one shared "
        "demo password) and ~60 cases in every state. Running it again changes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--base-url",
            default="http://127.0.0.1:8000",
            help="where the desk is served; callbacks go to its demo webhook receiver",
        )
        parser.add_argument(
            "--allow-no-debug",
            action="store_true",
            help="seed even though DEBUG is off (the demo users share a published password)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.DEBUG and not options["allow_no_debug"]:
            raise CommandError(
                "seed_demo creates users whose password is published; it runs on a demo or "
                "development desk (DEBUG on). Pass --allow-no-debug if this is one."
            )
        report = demo.seed(base_url=options["base_url"])
        made = ", ".join(f"{n} {what}" for what, n in sorted(report.created.items()))
        self.stdout.write(f"Demo data: {made or 'already in place, nothing changed'}.")
        counts = demo.state_counts()
        self.stdout.write(
            "Cases by state: " + ", ".join(f"{state} {n}" for state, n in counts.items())
        )
        self.stdout.write(
            f"  recovery queue (delivery failed): {demo.recovery_count()}; "
            f"decisions waiting in the pull feed: {demo.pending_feed_count()}"
        )
        self.stdout.write("")
        self.stdout.write(f"Demo logins (password for all: {demo.DEMO_PASSWORD}):")
        for user in demo.USERS:
            self.stdout.write(f"  {user.username:<8} {user.what}")
