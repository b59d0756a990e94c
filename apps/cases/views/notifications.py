"""In-app notifications: the list page, marking read, and the badge in the navigation that
polls and announces new notifications (once each, not on every poll)."""

from __future__ import annotations

import json

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST, require_safe
from django.views.decorators.vary import vary_on_headers

from .. import selectors, services
from ..errors import CaseError
from .common import HtmxHttpRequest, announce, login_required_page, raise_http, redirect_after_post


def badge_context(user: object) -> dict[str, object]:
    count, newest = selectors.notification_badge(user)
    return {
        "notification_count": count,
        "notification_poll_vals": json.dumps({"count": count, "newest": newest}),
    }


@login_required_page
@require_safe
@vary_on_headers("HX-Request")
def notifications(request: HtmxHttpRequest) -> HttpResponse:
    """The list page; an HTMX request is the navigation badge's poll of the same address
    (the badge link's href), answered with the badge alone."""
    if request.htmx:
        return _badge(request)
    return render(
        request,
        "cases/notifications.html",
        {"nav": "notifications", "notifications": selectors.notifications_of(request.user)},
    )


def _badge(request: HtmxHttpRequest) -> HttpResponse:
    """204 while nothing changed; a new notification is said in the live region once (the
    poll carries the unread count and the newest id it has seen)."""
    context = badge_context(request.user)
    seen = json.loads(str(context["notification_poll_vals"]))
    try:
        previous_count = int(request.GET.get("count", ""))
        previous_newest = int(request.GET.get("newest", ""))
    except ValueError:
        previous_count = previous_newest = -1
    if (seen["count"], seen["newest"]) == (previous_count, previous_newest):
        return HttpResponse(status=204)
    # The badge keeps saying "current page" while the poll runs on the notifications page.
    current = (request.htmx.current_url_abs_path or "").split("?")[0]
    context["nav"] = "notifications" if current == reverse("cases:notifications") else ""
    response = render(request, "cases/notifications.html#notification-badge", context)
    if previous_newest >= 0:
        arrived, newest = selectors.notifications_since(request.user, after_id=previous_newest)
        if arrived == 1 and newest is not None:
            announce(response, _("New notification: %(message)s") % {"message": newest.message})
        elif arrived > 1:
            announce(
                response,
                ngettext(
                    "%(count)d new notification, %(total)d unread",
                    "%(count)d new notifications, %(total)d unread",
                    arrived,
                )
                % {"count": arrived, "total": seen["count"]},
            )
    return response


@login_required_page
@require_POST
def mark_read(request: HtmxHttpRequest, notification_id: int) -> HttpResponse:
    try:
        services.mark_read(user=request.user, notification_id=notification_id)
    except CaseError as error:
        raise_http(error)  # someone else's notification is 404: its existence is not revealed
    messages.success(request, _("Marked as read."))
    return redirect_after_post(request, reverse("cases:notifications"))


@login_required_page
@require_POST
def mark_all_read(request: HtmxHttpRequest) -> HttpResponse:
    changed = services.mark_all_read(user=request.user)
    messages.success(
        request,
        ngettext(
            "Marked %(count)d notification as read.",
            "Marked %(count)d notifications as read.",
            changed,
        )
        % {"count": changed},
    )
    return redirect_after_post(request, reverse("cases:notifications"))
