"""Start many calls at the same instant in real threads, each with its own connection."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from django.db import connection


def run_at_once(calls: list[Callable[[], Any]], *, timeout: float = 60) -> list[Any]:
    """Run each call in its own thread, released together by a barrier. Returns each call's
    result or the exception it raised, in order. Every thread closes its own connection so
    the test database can be flushed and dropped afterwards."""
    barrier = threading.Barrier(len(calls))
    outcomes: list[Any] = [None] * len(calls)

    def run(index: int, call: Callable[[], Any]) -> None:
        try:
            barrier.wait(timeout=timeout)
            outcomes[index] = call()
        except BaseException as error:  # noqa: BLE001 (reported to the test, not swallowed)
            outcomes[index] = error
        finally:
            connection.close()

    threads = [
        threading.Thread(target=run, args=(index, call), daemon=True)
        for index, call in enumerate(calls)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    assert not any(thread.is_alive() for thread in threads), "a thread did not finish in time"
    return outcomes
