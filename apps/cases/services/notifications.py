"""In-app notifications (a badge and a list) with an e-mail copy through Django's mail
framework.

The notification row is written in the caller's transaction, so an escalation that rolls
back leaves no trace; the e-mail goes out only after that transaction commits.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from ..errors import CaseError
from ..models import Case, Notification

logger = logging.getLogger(__name__)


class NotificationKind:
    """What a notification is about; stored in Notification.kind (32 characters at most)."""

    REMINDER = "escalation.reminder"
    SUPERVISOR_ALERT = "escalation.supervisor_alert"
    OVERFLOW = "escalation.overflow"
    CONTROL_OWNER = "escalation.control_owner"


def _case_link(case: Case) -> str:
    # E-mail needs an absolute address; the site's base URL is optional configuration.
    base = str(settings.EXCEPTION_DESK.get("SITE_URL", "")).rstrip("/")
    return f"{base}{reverse('cases:detail', args=[case.pk])}"


def _send_after_commit(*, subject: str, body: str, recipient: str) -> None:
    def _send() -> None:
        send_mail(subject, body, None, [recipient])

    # robust: a mail server that is down must not fail the sweep or request that committed;
    # the in-app notification is already stored and shows in the badge.
    transaction.on_commit(_send, robust=True)


def notify(
    *,
    user: Any,
    case: Case | None = None,
    kind: str,
    message: str,
    email: bool = True,
) -> Notification:
    """Store an in-app notification for ``user`` and, when ``email`` is set and the user has
    an address, send it by e-mail once the surrounding transaction commits (at once when
    there is none)."""
    notification = Notification.objects.create(
        user=user,
        case=case,
        kind=kind,
        message=message[:500],
        created_at=timezone.now(),
    )
    if email and getattr(user, "email", ""):
        context = {
            "user": user,
            "case": case,
            "message": message,
            "link": _case_link(case) if case is not None else "",
        }
        subject = render_to_string("email/notification_subject.txt", context)
        body = render_to_string("email/notification_body.txt", context)
        # Headers may not contain newlines; templates end in one.
        subject = " ".join(subject.split())
        _send_after_commit(subject=subject, body=body, recipient=user.email)
    return notification


def mark_read(*, user: Any, notification_id: int | str) -> None:
    """Mark one of the user's notifications read. Someone else's is not found (its existence
    is not revealed); marking it again changes nothing."""
    try:
        notification_pk = int(notification_id)
    except (TypeError, ValueError):
        raise CaseError("not_found", _("No such notification.")) from None
    mine = Notification.objects.filter(pk=notification_pk, user=user)
    if not mine.exists():
        raise CaseError("not_found", _("No such notification."))
    mine.filter(read_at__isnull=True).update(read_at=timezone.now())


def mark_all_read(*, user: Any) -> int:
    """Mark every unread notification of the user read; returns how many changed."""
    return Notification.objects.filter(user=user, read_at__isnull=True).update(
        read_at=timezone.now()
    )
