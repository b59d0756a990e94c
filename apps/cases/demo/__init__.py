"""Demo data for `make run`: workflow types, sources, users for every role and ~60 cases in
every state, built only through the lifecycle services so the audit log reads like a real
desk's history.

Nothing in the product imports this package; `seed_demo` and `simulate_workflows` use it.
The demo password lives here (and is printed by `make run`), never in settings.
"""

from .catalogue import DEMO_PASSWORD, SIMULATOR_SOURCE, USERS, WORKFLOW_TYPES
from .packets import random_packet
from .seeding import SeedReport, pending_feed_count, recovery_count, seed, state_counts

__all__ = [
    "DEMO_PASSWORD",
    "SIMULATOR_SOURCE",
    "USERS",
    "WORKFLOW_TYPES",
    "SeedReport",
    "pending_feed_count",
    "random_packet",
    "recovery_count",
    "seed",
    "state_counts",
]
