"""Two real LangGraph workflows that hand a decision to people through the Exception Desk.

No language model: every node is deterministic, so the run can be repeated and tested.

invoice_match (v17): extract the invoice's fields, look up open purchase orders; one match
is applied at once, two or more are a conflict. At the conflict the graph files a case
with both purchase orders as evidence and pauses with ``interrupt()``; the checkpoint is
saved by the SQLite checkpointer. A person picks the purchase order in the desk; the
receiver (receiver.py) or the pull-feed consumer (consumer.py) resumes the thread with
``Command(resume=decision)``, and the graph applies the chosen purchase order.

refund_approval (v3), the policy-denied path: a refund above the agent's limit is not
issued; the graph files a policy_denied case and pauses. Only an approve_exception decision
issues the refund (for the approved amount); deny ends the run with no refund at all.

Three facts of LangGraph 1.2 shape the code:
  - on resume, the interrupted node runs again from its first line, so filing the case
    there must be idempotent: it is, by a dedupe key made of the thread id and the
    checkpoint id, both the same on every run of that node;
  - resuming a thread that already finished does nothing, silently;
  - two resumes of one thread at the same moment both run the next node, side effect and
    all. The receiver therefore serializes resumes per thread (receiver.py).

Run by hand: see README.md in this directory.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, interrupt

from exception_desk_client import Case, DecisionEvent, Desk, ReviewPacket

from .ledger import Ledger

INVOICE_WORKFLOW = "invoice_match"
INVOICE_VERSION = "17"
REFUND_WORKFLOW = "refund_approval"
REFUND_VERSION = "3"
REFUND_AGENT_LIMIT = Decimal("500.00")

# The ERP's open purchase orders (a stand-in for a lookup tool).
PURCHASE_ORDERS: list[dict[str, str]] = [
    {
        "ref": "po_781",
        "po_number": "PO-781",
        "vendor": "Acme GmbH",
        "amount": "12400.00",
        "currency": "EUR",
        "goods_receipt": "GR-5531",
        "updated_at": "2026-08-31T14:19:59+00:00",
    },
    {
        "ref": "po_799",
        "po_number": "PO-799",
        "vendor": "Acme GmbH",
        "amount": "12400.00",
        "currency": "EUR",
        "goods_receipt": "",
        "updated_at": "2026-08-31T14:19:59+00:00",
    },
    {
        "ref": "po_802",
        "po_number": "PO-802",
        "vendor": "Globex Ltd",
        "amount": "990.00",
        "currency": "EUR",
        "goods_receipt": "GR-5540",
        "updated_at": "2026-08-30T09:12:00+00:00",
    },
]

# An invoice that matches two purchase orders: the conflict of the desk's seed scenario.
SAMPLE_INVOICE: dict[str, str] = {
    "number": "INV-8421",
    "vendor": "  ACME GmbH ",
    "total": "12,400.00",
    "currency": "eur",
    "received_at": "2026-08-31T14:19:58+00:00",
}

SAMPLE_REFUND: dict[str, str] = {
    "order": "ORD-903122",
    "amount": "1250.00",
    "currency": "EUR",
    "reason": "damaged on arrival",
    "requested_at": "2026-08-31T10:02:00+00:00",
}


class InvoiceState(TypedDict, total=False):
    invoice: dict[str, str]  # the document as received
    fields: dict[str, str]  # extracted and normalized
    candidates: list[dict[str, str]]  # open purchase orders that match
    case_id: str
    decision: dict[str, Any]  # the desk's decision, exactly as resumed with
    side_effect: dict[str, Any]  # what was applied, for the report to the desk
    outcome: str  # matched | closed | no_match


class RefundState(TypedDict, total=False):
    request: dict[str, str]
    policy: dict[str, Any]  # the policy check's facts: limit and whether the amount is within
    case_id: str
    decision: dict[str, Any]
    side_effect: dict[str, Any]
    outcome: str  # refunded | denied


# --- the desk side of a pause -------------------------------------------------------------


def thread_config(thread_id: str, workflow_type: str = "") -> RunnableConfig:
    """The config of one thread. With a workflow type, every checkpoint written under it
    carries the type in its metadata, so a thread id alone tells which graph it runs."""
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    if workflow_type:
        config["metadata"] = {"workflow_type": workflow_type}
    return config


def running_checkpoint_id(config: RunnableConfig) -> str:
    """The id of the checkpoint the running node started from.

    It is the checkpoint LangGraph keeps the thread paused at, and it is the same on the
    first run of the node and on the re-run at resume, which makes it the right half of a
    dedupe key. (``checkpoint_map`` holds it per namespace; "" is the root graph.)
    """
    configurable = config.get("configurable") or {}
    checkpoint_id = (configurable.get("checkpoint_map") or {}).get("")
    if not checkpoint_id:
        raise RuntimeError("No checkpoint: compile the graph with a checkpointer.")
    return str(checkpoint_id)


def decision_from_event(event: DecisionEvent) -> dict[str, Any]:
    """The resume value: what the graph needs from a case.decided event, JSON only (the
    checkpointer stores it)."""
    return {
        "event_id": event.id,
        "case_id": event.case_id,
        "checkpoint_id": event.data.get("checkpoint_id", ""),
        "resolution": event.resolution,
        "fields": event.fields,
        "note": event.data.get("note", ""),
        "actor": event.data.get("actor"),
        "decided_at": event.data.get("decided_at", ""),
    }


def file_case_and_wait(desk: Desk, packet: ReviewPacket, checkpoint_id: str) -> tuple[Case, Any]:
    """File the case, then pause until the decision comes back.

    On resume LangGraph runs the calling node again from its first line, so this files
    the very same packet again and the desk answers with the case it already has (200, not
    a second case). If the desk is unreachable, DeskUnavailable propagates: the node fails,
    the thread stays at this checkpoint, and nothing after it (no side effect) runs.
    """
    case = desk.file_case(packet)
    decision = interrupt({"case_id": case.id, "case_url": case.url, "queue": case.queue})
    if decision.get("case_id") != case.id or decision.get("checkpoint_id") != checkpoint_id:
        # A decision for another pause: applying it here would act on the wrong facts.
        raise ValueError(
            f"Resumed with a decision for case {decision.get('case_id')} at checkpoint "
            f"{decision.get('checkpoint_id')}; this thread waits on case {case.id} at "
            f"checkpoint {checkpoint_id}."
        )
    return case, decision


def dedupe_key(thread_id: str, checkpoint_id: str) -> str:
    return f"langgraph:{thread_id}:{checkpoint_id}"


def _thread_id(config: RunnableConfig) -> str:
    return str((config.get("configurable") or {})["thread_id"])


def _report_node(desk: Desk) -> Callable[[Any], dict[str, Any]]:
    """Tell the desk what the destination did. A node of its own, after the effect: if the
    desk is down here, a retry of the run repeats only this report, never the effect."""

    def report_to_desk(state: Any) -> dict[str, Any]:
        case_id = state.get("case_id")
        effect = state.get("side_effect")
        if case_id and effect:
            desk.report_side_effect(case_id, state="confirmed_applied", provider_record=effect)
        return {}

    return report_to_desk


# --- invoice_match -----------------------------------------------------------------------


def _amount(text: str) -> Decimal:
    try:
        return Decimal(text.replace(",", "").strip())
    except InvalidOperation as error:
        raise ValueError(f"Not an amount: {text!r}") from error


def build_invoice_graph(*, desk: Desk, ledger: Ledger, checkpointer: SqliteSaver) -> Any:
    def extract_fields(state: InvoiceState) -> dict[str, Any]:
        invoice = state["invoice"]
        return {
            "fields": {
                "number": invoice["number"].strip(),
                "vendor": " ".join(invoice["vendor"].split()),
                "amount": str(_amount(invoice["total"])),
                "currency": invoice["currency"].strip().upper(),
                "received_at": invoice["received_at"],
            }
        }

    def find_purchase_orders(state: InvoiceState) -> dict[str, Any]:
        fields = state["fields"]
        candidates = [
            order
            for order in PURCHASE_ORDERS
            if order["vendor"].casefold() == fields["vendor"].casefold()
            and _amount(order["amount"]) == _amount(fields["amount"])
            and order["currency"] == fields["currency"]
        ]
        return {"candidates": candidates, **({} if candidates else {"outcome": "no_match"})}

    def after_lookup(state: InvoiceState) -> str:
        count = len(state["candidates"])
        if count == 0:
            return END
        return "apply_match" if count == 1 else "await_decision"

    def await_decision(state: InvoiceState, config: RunnableConfig) -> dict[str, Any]:
        thread_id, checkpoint_id = _thread_id(config), running_checkpoint_id(config)
        fields, candidates = state["fields"], state["candidates"]
        numbers = " and ".join(order["po_number"] for order in candidates)
        packet: ReviewPacket = {
            "workflow_type": INVOICE_WORKFLOW,
            "workflow_version": INVOICE_VERSION,
            "workflow_instance_id": thread_id,
            "checkpoint_id": checkpoint_id,
            "resume_handle": thread_id,
            "case_ref": f"invoice_{fields['number'].removeprefix('INV-')}",
            "summary": f"Invoice {fields['number']} matches {len(candidates)} open purchase orders",
            "class": "evidence_conflict",
            "reason_code": "multiple_po_match",
            "reason_note": f"{numbers} match vendor, amount and currency.",
            "side_effect_state": "none_attempted",
            "policy_version": "ap-policy-12",
            "timeline": [
                {"at": fields["received_at"], "kind": "tool_call", "name": "extract_fields"},
                {
                    "at": fields["received_at"],
                    "kind": "tool_result",
                    "name": "find_purchase_orders",
                    "summary": f"{len(candidates)} candidates",
                },
            ],
            "evidence": [
                {
                    "ref": order["ref"],
                    "source": "erp",
                    "source_timestamp": order["updated_at"],
                    "classification": "internal",
                    "content": {k: v for k, v in order.items() if k not in {"ref", "updated_at"}},
                }
                for order in candidates
            ],
            "attributes": {
                "amount": fields["amount"],
                "currency": fields["currency"],
                "initiated_by": "langgraph-invoice-example",
            },
            "dedupe_key": dedupe_key(thread_id, checkpoint_id),
        }
        case, decision = file_case_and_wait(desk, packet, checkpoint_id)
        update: dict[str, Any] = {"case_id": case.id, "decision": decision}
        if decision["resolution"] != "select_po":
            update["outcome"] = "closed"  # close_invalid: the invoice is not to be matched
        return update

    def after_decision(state: InvoiceState) -> str:
        return "apply_match" if state["decision"]["resolution"] == "select_po" else END

    def apply_match(state: InvoiceState, config: RunnableConfig) -> dict[str, Any]:
        thread_id = _thread_id(config)
        candidates = {order["ref"]: order for order in state["candidates"]}
        if "decision" in state:
            chosen_ref = str(state["decision"]["fields"]["po_number"])
        else:
            (chosen_ref,) = candidates  # the only candidate: no one needed to choose
        if chosen_ref not in candidates:
            raise ValueError(f"{chosen_ref} was not one of the offered purchase orders.")
        order = candidates[chosen_ref]
        case_id = state.get("case_id", "")
        idempotency_key = f"{thread_id}:{case_id or 'auto'}"
        entry = ledger.apply(
            thread_id=thread_id,
            case_id=case_id,
            kind="invoice_matched",
            detail={"invoice": state["fields"]["number"], "purchase_order": order["po_number"]},
            idempotency_key=idempotency_key,
        )
        return {
            "outcome": "matched",
            "side_effect": {
                "ledger_entry": entry,
                "idempotency_key": idempotency_key,
                "purchase_order": order["po_number"],
            },
        }

    builder = StateGraph(InvoiceState)
    builder.add_node("extract_fields", extract_fields)
    builder.add_node("find_purchase_orders", find_purchase_orders)
    builder.add_node("await_decision", await_decision)
    builder.add_node("apply_match", apply_match)
    builder.add_node("report_to_desk", _report_node(desk))
    builder.add_edge(START, "extract_fields")
    builder.add_edge("extract_fields", "find_purchase_orders")
    builder.add_conditional_edges(
        "find_purchase_orders", after_lookup, ["apply_match", "await_decision", END]
    )
    builder.add_conditional_edges("await_decision", after_decision, ["apply_match", END])
    builder.add_edge("apply_match", "report_to_desk")
    builder.add_edge("report_to_desk", END)
    return builder.compile(checkpointer=checkpointer)


# --- refund_approval: the policy-denied path ----------------------------------------------


def build_refund_graph(*, desk: Desk, ledger: Ledger, checkpointer: SqliteSaver) -> Any:
    def check_policy(state: RefundState) -> dict[str, Any]:
        within = _amount(state["request"]["amount"]) <= REFUND_AGENT_LIMIT
        return {
            "policy": {
                "rule": "refund.max_auto",
                "limit": str(REFUND_AGENT_LIMIT),
                "within": within,
            }
        }

    def after_policy(state: RefundState) -> str:
        return "issue_refund" if state["policy"]["within"] else "await_approval"

    def await_approval(state: RefundState, config: RunnableConfig) -> dict[str, Any]:
        thread_id, checkpoint_id = _thread_id(config), running_checkpoint_id(config)
        request = state["request"]
        amount, currency = str(_amount(request["amount"])), request["currency"].upper()
        packet: ReviewPacket = {
            "workflow_type": REFUND_WORKFLOW,
            "workflow_version": REFUND_VERSION,
            "workflow_instance_id": thread_id,
            "checkpoint_id": checkpoint_id,
            "resume_handle": thread_id,
            "case_ref": f"order_{request['order'].removeprefix('ORD-')}",
            "summary": (
                f"Refund of {amount} {currency} for {request['order']} exceeds the agent "
                f"limit of {REFUND_AGENT_LIMIT}"
            ),
            "class": "policy_denied",
            "reason_code": "refund_over_agent_limit",
            "reason_note": "Refund policy caps automatic refunds; a human approval is required.",
            "proposed_action": {
                "action": "issue_refund",
                "order": request["order"],
                "amount": amount,
            },
            "side_effect_state": "none_attempted",
            "policy_version": "refund-policy-4",
            "timeline": [
                {"at": request["requested_at"], "kind": "tool_call", "name": "evaluate_policy"},
                {
                    "at": request["requested_at"],
                    "kind": "tool_result",
                    "name": "evaluate_policy",
                    "summary": "denied: over limit",
                },
            ],
            "evidence": [
                {
                    "ref": "order",
                    "source": "shop",
                    "source_timestamp": request["requested_at"],
                    "classification": "internal",
                    "content": {"order": request["order"], "total": amount, "currency": currency},
                },
                {
                    "ref": "policy",
                    "source": "policy-engine",
                    "source_timestamp": request["requested_at"],
                    "classification": "internal",
                    "content": {"rule": "refund.max_auto", "limit": str(REFUND_AGENT_LIMIT)},
                },
            ],
            "attributes": {
                "amount": amount,
                "currency": currency,
                "initiated_by": "langgraph-refund-example",
            },
            "dedupe_key": dedupe_key(thread_id, checkpoint_id),
        }
        case, decision = file_case_and_wait(desk, packet, checkpoint_id)
        update: dict[str, Any] = {"case_id": case.id, "decision": decision}
        if decision["resolution"] != "approve_exception":
            update["outcome"] = "denied"  # deny (or close): the refund is never issued
        return update

    def after_approval(state: RefundState) -> str:
        approved = state["decision"]["resolution"] == "approve_exception"
        return "issue_refund" if approved else END

    def issue_refund(state: RefundState, config: RunnableConfig) -> dict[str, Any]:
        thread_id = _thread_id(config)
        request = state["request"]
        decision = state.get("decision")
        amount = (
            str(_amount(str(decision["fields"]["approved_amount"])))
            if decision
            else str(_amount(request["amount"]))
        )
        case_id = state.get("case_id", "")
        idempotency_key = f"{thread_id}:{case_id or 'auto'}"
        entry = ledger.apply(
            thread_id=thread_id,
            case_id=case_id,
            kind="refund_issued",
            detail={"order": request["order"], "amount": amount, "currency": request["currency"]},
            idempotency_key=idempotency_key,
        )
        return {
            "outcome": "refunded",
            "side_effect": {
                "ledger_entry": entry,
                "idempotency_key": idempotency_key,
                "amount": amount,
            },
        }

    builder = StateGraph(RefundState)
    builder.add_node("check_policy", check_policy)
    builder.add_node("await_approval", await_approval)
    builder.add_node("issue_refund", issue_refund)
    builder.add_node("report_to_desk", _report_node(desk))
    builder.add_edge(START, "check_policy")
    builder.add_conditional_edges("check_policy", after_policy, ["issue_refund", "await_approval"])
    builder.add_conditional_edges("await_approval", after_approval, ["issue_refund", END])
    builder.add_edge("issue_refund", "report_to_desk")
    builder.add_edge("report_to_desk", END)
    return builder.compile(checkpointer=checkpointer)


# --- wiring --------------------------------------------------------------------------------


@dataclass
class Workflows:
    """Both graphs over one checkpoint file and one ledger file. A thread id names one
    thread of one graph (as with any LangGraph checkpointer): do not reuse it across them."""

    desk: Desk
    ledger: Ledger
    checkpointer: SqliteSaver
    graphs: dict[str, CompiledStateGraph[Any, Any, Any, Any]]

    def graph_for(self, workflow_type: str) -> CompiledStateGraph[Any, Any, Any, Any] | None:
        return self.graphs.get(workflow_type)

    def workflow_type_of(self, thread_id: str) -> str | None:
        """The graph the thread runs, from its latest checkpoint; None for an unknown id."""
        saved = self.checkpointer.get_tuple(thread_config(thread_id))
        if saved is None:
            return None
        return str((saved.metadata or {}).get("workflow_type") or "") or None

    def start_invoice(self, thread_id: str, invoice: dict[str, str]) -> dict[str, Any]:
        """Run until the graph finishes or pauses. A paused result holds ``__interrupt__``
        with the case id."""
        return self._invoke(INVOICE_WORKFLOW, thread_id, {"invoice": invoice})

    def start_refund(self, thread_id: str, request: dict[str, str]) -> dict[str, Any]:
        return self._invoke(REFUND_WORKFLOW, thread_id, {"request": request})

    def retry(self, thread_id: str, workflow_type: str) -> dict[str, Any]:
        """Run a thread again from its last checkpoint after a node failed (the desk was
        down when the case was to be filed)."""
        return self._invoke(workflow_type, thread_id, None)

    def resume(self, thread_id: str, workflow_type: str, decision: dict[str, Any]) -> Any:
        """Resume a paused thread. Unguarded: the receiver and the consumer call this only
        under the thread's lock, after their checks (receiver.py)."""
        return self._invoke(workflow_type, thread_id, Command(resume=decision))

    def _invoke(self, workflow_type: str, thread_id: str, graph_input: Any) -> dict[str, Any]:
        graph = self.graphs[workflow_type]
        return dict(graph.invoke(graph_input, thread_config(thread_id, workflow_type)))

    def close(self) -> None:
        self.checkpointer.conn.close()
        self.desk.close()


def open_workflows(*, desk: Desk, state_dir: str | Path) -> Workflows:
    """Open (creating if needed) ``checkpoints.sqlite`` and ``ledger.sqlite`` in state_dir."""
    directory = Path(state_dir)
    directory.mkdir(parents=True, exist_ok=True)
    # SqliteSaver guards its connection with a lock, so one connection may serve the
    # receiver's threads.
    connection = sqlite3.connect(directory / "checkpoints.sqlite", check_same_thread=False)
    checkpointer = SqliteSaver(connection)
    ledger = Ledger(directory / "ledger.sqlite")
    graphs = {
        INVOICE_WORKFLOW: build_invoice_graph(desk=desk, ledger=ledger, checkpointer=checkpointer),
        REFUND_WORKFLOW: build_refund_graph(desk=desk, ledger=ledger, checkpointer=checkpointer),
    }
    return Workflows(desk=desk, ledger=ledger, checkpointer=checkpointer, graphs=graphs)


# --- command line ------------------------------------------------------------------------


def add_connection_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--desk",
        default=os.environ.get("DESK_URL", "http://127.0.0.1:8000"),
        help="the desk's base URL (env DESK_URL)",
    )
    parser.add_argument(
        "--api-key",
        default=os.environ.get("DESK_API_KEY", ""),
        help="an API key for invoice_match and refund_approval (env DESK_API_KEY)",
    )
    parser.add_argument(
        "--state-dir",
        default=os.environ.get("EXAMPLE_STATE_DIR", "var/langgraph_invoice"),
        help="where the checkpoints, the ledger and the seen webhook ids live",
    )


def workflows_from_arguments(arguments: argparse.Namespace) -> Workflows:
    if not arguments.api_key:
        sys.exit("Give an API key: --api-key or DESK_API_KEY (manage.py create_api_key).")
    return open_workflows(
        desk=Desk(arguments.desk, arguments.api_key), state_dir=arguments.state_dir
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_connection_arguments(parser)
    commands = parser.add_subparsers(dest="command", required=True)
    invoice = commands.add_parser("invoice", help="match an invoice (pauses at the conflict)")
    invoice.add_argument("--thread", required=True, help="the LangGraph thread id")
    invoice.add_argument("--number", default=SAMPLE_INVOICE["number"])
    refund = commands.add_parser("refund", help="request a refund (over 500.00 pauses)")
    refund.add_argument("--thread", required=True)
    refund.add_argument("--amount", default=SAMPLE_REFUND["amount"])
    show = commands.add_parser("show", help="print a thread's state and the ledger")
    show.add_argument("--thread", required=True)
    arguments = parser.parse_args(argv)

    workflows = workflows_from_arguments(arguments)
    try:
        if arguments.command == "invoice":
            result = workflows.start_invoice(
                arguments.thread, {**SAMPLE_INVOICE, "number": arguments.number}
            )
        elif arguments.command == "refund":
            result = workflows.start_refund(
                arguments.thread, {**SAMPLE_REFUND, "amount": arguments.amount}
            )
        else:
            result = {}
            workflow_type = workflows.workflow_type_of(arguments.thread)
            if workflow_type in workflows.graphs:
                graph = workflows.graphs[workflow_type]
                snapshot = graph.get_state(thread_config(arguments.thread))
                result = {"workflow": workflow_type, "next": list(snapshot.next), **snapshot.values}
            result["ledger"] = [
                effect.__dict__
                for effect in workflows.ledger.side_effects(thread_id=arguments.thread)
            ]
        if "__interrupt__" in result:  # Interrupt objects, shown as what they carry
            result["__interrupt__"] = [pause.value for pause in result["__interrupt__"]]
        print(json.dumps(result, default=str, indent=2))
    finally:
        workflows.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
