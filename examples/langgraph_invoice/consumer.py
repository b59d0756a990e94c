"""The pull feed instead of a webhook: for engines that cannot receive calls.

    for event in desk.decisions():
        resumer.resume(event)      # the same once-only resume the receiver uses
        desk.ack(event)            # only after the thread has moved on

Acknowledging after the resume means a crash in between leaves the event in the feed; the
next pass finds the thread already resumed (the ledger says so) and only acknowledges.
An event this process cannot act on (a thread it does not know, or one not paused where
the case was filed) is left unacknowledged and logged, for a person to look at.

    python -m examples.langgraph_invoice.consumer --once          # one pass, then exit
    python -m examples.langgraph_invoice.consumer --interval 5    # poll every 5 s
"""

from __future__ import annotations

import argparse
import json
import logging
import threading
from collections import Counter

from exception_desk_client import Desk, DeskUnavailable

from .graph import add_connection_arguments, workflows_from_arguments
from .receiver import Resumer

logger = logging.getLogger(__name__)

ACKNOWLEDGE = {"resumed", "already_applied", "noted"}


def drain(desk: Desk, resumer: Resumer, *, limit: int = 50) -> Counter[str]:
    """One pass over the feed. Returns how many events ended each way."""
    outcomes: Counter[str] = Counter()
    for event in desk.decisions(limit=limit):
        outcome = resumer.resume(event)
        outcomes[outcome] += 1
        if outcome in ACKNOWLEDGE:
            desk.ack(event)
        else:
            logger.warning("left %s unacknowledged: %s", event.id, outcome)
    return outcomes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Resume paused threads from the pull feed.")
    add_connection_arguments(parser)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--once", action="store_true", help="one pass over the feed, then exit")
    mode.add_argument("--interval", type=float, default=5.0, help="seconds between passes")
    arguments = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    workflows = workflows_from_arguments(arguments)
    resumer = Resumer(workflows)
    stop = threading.Event()
    try:
        while True:
            try:
                outcomes = drain(workflows.desk, resumer)
            except DeskUnavailable as error:
                if arguments.once:
                    raise
                logger.warning("the desk is unavailable; trying again: %s", error)
            else:
                print(json.dumps(dict(outcomes)), flush=True)
            if arguments.once or stop.wait(arguments.interval):
                return 0
    except KeyboardInterrupt:
        return 0
    finally:
        workflows.close()


if __name__ == "__main__":
    raise SystemExit(main())
