"""The demo webhook receiver: a stand-in workflow engine served by the desk itself, so the
seeded workflow types have a callback that verifies signatures and answers like a real one.

Routed only when DEBUG or the DEMO_RECEIVER setting is on (see config/urls.py).
"""

from __future__ import annotations

import logging

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from .models import WorkflowType

logger = logging.getLogger(__name__)


@csrf_exempt  # a machine-to-machine endpoint: the Standard Webhooks signature authenticates it
@require_POST
def demo_webhook_receiver(request: HttpRequest, workflow_type: str) -> HttpResponse:
    """Verify the signature with the type's secret: 204 when valid, 400 otherwise."""
    endpoint = get_object_or_404(WorkflowType, name=workflow_type)
    try:
        event = Webhook(endpoint.signing_secret).verify(request.body, dict(request.headers))
    except (WebhookVerificationError, ValueError) as error:
        # ValueError covers malformed signature headers and bodies that are not JSON.
        logger.warning("demo receiver rejected a %s webhook: %s", workflow_type, error)
        return HttpResponse(status=400)
    if not isinstance(event, dict) or not isinstance(event.get("data"), dict):
        return HttpResponse(status=400)
    data = event["data"]
    logger.info(
        "demo receiver: %s %s for case %s (%s)",
        event.get("type"),
        request.headers.get("webhook-id"),
        data.get("case_id"),
        data.get("resolution") or "information requested",
    )
    return HttpResponse(status=204)
