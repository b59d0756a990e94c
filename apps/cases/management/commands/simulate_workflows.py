"""`python manage.py simulate_workflows`: keep the demo alive by filing new cases through the
real HTTP API, as a workflow engine would, under a test source ("demo-simulator").

It issues its own API key at start (printed nowhere) and revokes it when it stops, so no
usable key outlives the run.
"""

from __future__ import annotations

import logging
import random
import signal
import threading
from types import FrameType
from typing import Any

import httpx
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from ulid import ULID

from apps.audit.services import Actor
from apps.cases import demo
from apps.workflows.models import WorkflowType
from apps.workflows.services import create_api_key, revoke_api_key


class Command(BaseCommand):
    help = "File random demo cases through the REST API every few seconds (Ctrl-C stops)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--url",
            default="http://127.0.0.1:8000/api/v1/cases",
            help="the desk's case-filing endpoint",
        )
        parser.add_argument(
            "--interval", type=float, default=45.0, help="seconds between two filings"
        )
        parser.add_argument(
            "--count", type=int, default=0, help="stop after this many cases (0: run until stopped)"
        )
        parser.add_argument(
            "--seed", type=int, default=None, help="random seed, for repeatable runs"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        names = [t["name"] for t in demo.WORKFLOW_TYPES]
        if WorkflowType.objects.filter(name__in=names).count() != len(names):
            raise CommandError("The demo workflow types are missing: run `manage.py seed_demo`.")
        key, plain = create_api_key(
            source_name=demo.SIMULATOR_SOURCE,
            workflow_type_names=names,
            is_test=True,
            acting=Actor.system("simulate_workflows"),
        )
        stop = threading.Event()

        def _stop(signum: int, frame: FrameType | None) -> None:
            stop.set()

        # honcho and Ctrl-C end us with SIGTERM/SIGINT; stop between filings so the key is
        # revoked on the way out. The previous handlers come back when we return.
        previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGTERM, signal.SIGINT)}
        logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per filing is enough
        rng = random.Random(options["seed"])  # noqa: S311 - demo data, not security
        filed = 0
        self.stdout.write(
            f"Simulating workflows: a case every {options['interval']:g} s to {options['url']} "
            f"(source '{demo.SIMULATOR_SOURCE}', marked test)."
        )
        try:
            with httpx.Client(headers={"Authorization": f"Bearer {plain}"}, timeout=10.0) as client:
                while not stop.is_set():
                    if self._file_one(client, options["url"], rng):
                        filed += 1
                    if options["count"] and filed >= options["count"]:
                        break
                    stop.wait(options["interval"])
        finally:
            revoke_api_key(key=key, acting=Actor.system("simulate_workflows"))
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        self.stdout.write(f"Filed {filed} case(s); the simulator's key is revoked.")

    def _file_one(self, client: httpx.Client, url: str, rng: random.Random) -> bool:
        body = demo.random_packet(
            rng, instance_id=f"wf_sim_{str(ULID()).lower()}", filed_at=timezone.now()
        )
        try:
            response = client.post(url, json=body)
        except httpx.HTTPError as error:
            self.stderr.write(f"desk not reachable ({type(error).__name__}); trying again later")
            return False
        if response.status_code not in (200, 201):
            self.stderr.write(f"HTTP {response.status_code}: {response.text[:300]}")
            return False
        case = response.json()
        self.stdout.write(
            f"filed {case.get('id')} {body['case_ref']} ({body['workflow_type']}, "
            f"{body['class']}) -> {case.get('queue')}, {case.get('state')}"
        )
        return True
