"""A desk outage never advances the business task: while filing fails, the graph stays at
its checkpoint with nothing applied; once the desk is back, running the thread again files
one case, under the same checkpoint, and pauses there."""

from __future__ import annotations

import pytest

from apps.cases.models import Case
from examples.langgraph_invoice.graph import SAMPLE_INVOICE, open_workflows, thread_config
from exception_desk_client import Desk, DeskUnavailable
from tests.client.scripted_server import Answer, scripted_server

pytestmark = [pytest.mark.threaded, pytest.mark.django_db(transaction=True)]

THREAD = "invoice-outage"


def test_the_graph_waits_out_a_desk_outage_at_its_checkpoint(desk_url, api_source, tmp_path):
    state_dir = tmp_path / "state"
    with scripted_server(Answer(503, {"errors": {"detail": ["Maintenance."]}})) as outage:
        down = open_workflows(
            desk=Desk(outage.url, api_source[1], retries=2, backoff=0.01), state_dir=state_dir
        )
        with pytest.raises(DeskUnavailable):
            down.start_invoice(THREAD, SAMPLE_INVOICE)
        stuck = down.graph_for("invoice_match").get_state(thread_config(THREAD))
        down.close()

    assert len(outage.requests) == 3 and len({r.body for r in outage.requests}) == 1
    assert stuck.next == ("await_decision",)
    assert down.ledger.side_effects() == [] and not Case.objects.exists()

    back = open_workflows(desk=Desk(desk_url, api_source[1]), state_dir=state_dir)
    try:
        paused = back.retry(THREAD, "invoice_match")
    finally:
        back.close()

    case = Case.objects.get(pk=paused["__interrupt__"][0].value["case_id"])
    assert case.checkpoint_id == stuck.config["configurable"]["checkpoint_id"]
    assert case.dedupe_key == outage.requests[0].json()["dedupe_key"]
    assert back.ledger.side_effects() == []
