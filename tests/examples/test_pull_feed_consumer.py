"""The pull-feed path: no webhook (invoice_match has no callback URL here); a separate
consumer process reads the feed with the client's decisions()/ack loop and resumes the
paused thread once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from apps.cases.models import Case, OutboxEvent, State
from apps.workflows.models import WorkflowType
from examples.langgraph_invoice.graph import SAMPLE_INVOICE, thread_config

pytestmark = [pytest.mark.threaded, pytest.mark.django_db(transaction=True)]

THREAD = "invoice-feed"


def run_consumer(desk_url: str, api_key: str, state_dir: Path) -> dict[str, int]:
    """One pass of examples/langgraph_invoice/consumer.py in its own process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DESK_", "EXAMPLE_"))}
    completed = subprocess.run(  # noqa: S603 (our interpreter, fixed arguments)
        [
            sys.executable,
            "-m",
            "examples.langgraph_invoice.consumer",
            "--once",
            "--desk",
            desk_url,
            "--api-key",
            api_key,
            "--state-dir",
            str(state_dir),
        ],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout.strip().splitlines()[-1])


def test_a_consumer_process_resumes_the_thread_once_from_the_feed(
    workflows, desk_url, api_source, tmp_path, worker, decide_through_pages
):
    assert WorkflowType.objects.get(name="invoice_match").callback_url == ""
    paused = workflows.start_invoice(THREAD, SAMPLE_INVOICE)
    case_id = paused["__interrupt__"][0].value["case_id"]
    decide_through_pages(worker, case_id, "select_po", {"po_number": "po_799"})

    first_pass = run_consumer(desk_url, api_source[1], tmp_path / "state")
    second_pass = run_consumer(desk_url, api_source[1], tmp_path / "state")

    assert first_pass == {"resumed": 1} and second_pass == {}
    (effect,) = workflows.ledger.side_effects()
    assert effect.detail["purchase_order"] == "PO-799"
    finished = workflows.graph_for("invoice_match").get_state(thread_config(THREAD))
    assert finished.next == () and finished.values["outcome"] == "matched"
    case = Case.objects.get(pk=case_id)
    assert (case.state, case.side_effect_state) == (State.RESOLVED, "confirmed_applied")
    assert OutboxEvent.objects.get(case=case).delivered_via == "ack"
