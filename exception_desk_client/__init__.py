"""A small typed client of the Exception Desk for Python workflows.

    from exception_desk_client import Desk

    with Desk("https://desk.example.com", api_key) as desk:
        case = desk.file_case(packet)          # idempotent by dedupe key, retried safely
        for event in desk.decisions():         # the pull feed, oldest first
            handle(event)
            desk.ack(event)

Webhooks: ``WebhookVerifier(secret, SqliteSeenStore(path)).verify(body, headers)``.
See docs/integrating.md.
"""

from .client import Desk
from .errors import (
    Conflict,
    DedupeConflict,
    DeskError,
    DeskUnavailable,
    Forbidden,
    InvalidRequest,
    NotFound,
    Unauthorized,
)
from .models import (
    Attributes,
    Case,
    Decision,
    DecisionEvent,
    EventData,
    EvidenceItem,
    ReviewPacket,
)
from .webhooks import (
    InMemorySeenStore,
    InvalidWebhook,
    SeenStore,
    SqliteSeenStore,
    StaleWebhook,
    WebhookRejected,
    WebhookReplayed,
    WebhookVerifier,
)

__all__ = [
    "Attributes",
    "Case",
    "Conflict",
    "Decision",
    "DecisionEvent",
    "DedupeConflict",
    "Desk",
    "DeskError",
    "DeskUnavailable",
    "EventData",
    "EvidenceItem",
    "Forbidden",
    "InMemorySeenStore",
    "InvalidRequest",
    "InvalidWebhook",
    "NotFound",
    "ReviewPacket",
    "SeenStore",
    "SqliteSeenStore",
    "StaleWebhook",
    "Unauthorized",
    "WebhookRejected",
    "WebhookReplayed",
    "WebhookVerifier",
]
