"""In-app notifications: a badge in the navigation whose accessible name says how many are
unread, a list page, marking read (one or all), and a poll that announces a notification
that arrived since the last look, once."""

from __future__ import annotations

import re

from django.urls import reverse
from django.utils import timezone

from apps.cases.models import Notification
from apps.cases.services import notify

from .conftest import HTMX, announced, poll_values

LIST = "/notifications/"
BADGE = LIST  # the badge polls the list's address; HTMX gets the badge alone


def badge_name(page: str) -> str:
    """The accessible name of the notifications link: its text, hidden parts included."""
    match = re.search(r'<a id="nav-notifications-link"[^>]*>(.*?)</a>', page, re.S)
    assert match, "the navigation has a notifications link"
    return " ".join(re.sub(r"<[^>]+>", "", match.group(1)).split()).replace(" ,", ",")


def test_the_badge_names_the_unread_count(worker, worker2, file_invoice_case, client_for):
    case = file_invoice_case()
    for n in range(3):
        notify(user=worker, case=case, kind="escalation.reminder", message=f"reminder {n}")
    notify(user=worker2, kind="escalation.reminder", message="not for wendy")
    read = notify(user=worker, kind="escalation.reminder", message="old news")
    Notification.objects.filter(pk=read.pk).update(read_at=timezone.now())

    page = client_for(worker).get("/").content.decode()

    assert badge_name(page) == "Notifications, 3 unread"


def test_without_unread_notifications_the_link_says_only_notifications(worker, client_for):
    page = client_for(worker).get("/").content.decode()

    assert badge_name(page) == "Notifications"


def test_the_list_shows_the_user_s_own_notifications_newest_first_with_status_in_words(
    worker, worker2, file_invoice_case, client_for
):
    case = file_invoice_case()
    notify(user=worker, case=case, kind="escalation.reminder", message="first")
    second = notify(user=worker, kind="escalation.supervisor_alert", message="second")
    Notification.objects.filter(pk=second.pk).update(read_at=timezone.now())
    notify(user=worker2, kind="escalation.reminder", message="someone else's")

    page = client_for(worker).get(LIST).content.decode()

    assert "<caption" in page
    assert page.index(">second<") < page.index(">first<")
    assert "someone else&#x27;s" not in page and "someone else's" not in page
    assert f'href="{reverse("cases:detail", args=[case.pk])}">{case.case_ref}</a>' in page
    assert "<strong>Unread</strong>" in page and ">Read<" in page
    assert re.search(r'<a id="nav-notifications-link"[^>]*aria-current="page"', page)


def test_marking_one_read_lowers_the_badge(worker, client_for):
    first = notify(user=worker, kind="escalation.reminder", message="first")
    notify(user=worker, kind="escalation.reminder", message="second")
    client = client_for(worker)

    response = client.post(reverse("cases:mark_read", args=[first.pk]), follow=True)

    first.refresh_from_db()
    assert first.read_at is not None
    assert response.redirect_chain[-1] == (LIST, 302)
    assert badge_name(response.content.decode()) == "Notifications, 1 unread"


def test_marking_all_read_clears_the_badge(worker, client_for):
    for n in range(2):
        notify(user=worker, kind="escalation.reminder", message=f"n{n}")

    response = client_for(worker).post(reverse("cases:mark_all_read"), follow=True)

    assert not Notification.objects.filter(user=worker, read_at__isnull=True).exists()
    page = response.content.decode()
    assert "Marked 2 notifications as read." in page
    assert badge_name(page) == "Notifications"


def test_the_badge_poll_answers_204_while_nothing_changed(worker, client_for):
    notify(user=worker, kind="escalation.reminder", message="already seen")
    client = client_for(worker)
    values = poll_values(client.get("/").content.decode(), "nav-notifications-link")

    response = client.get(BADGE, values, **HTMX)

    assert response.status_code == 204


def test_a_new_notification_is_announced_once_by_the_poll(worker, client_for):
    client = client_for(worker)
    values = poll_values(client.get("/").content.decode(), "nav-notifications-link")
    notify(user=worker, kind="escalation.reminder", message="invoice_8401 is due in 30 minutes")

    first = client.get(BADGE, values, **HTMX)
    again = client.get(BADGE, poll_values(first.content.decode(), "nav-notifications-link"), **HTMX)

    assert first.status_code == 200
    assert first.content.decode().lstrip().startswith('<li id="nav-notifications"')
    assert badge_name(first.content.decode()) == "Notifications, 1 unread"
    assert announced(first) == "New notification: invoice_8401 is due in 30 minutes"
    assert again.status_code == 204


def test_several_new_notifications_are_announced_as_a_count(worker, client_for):
    client = client_for(worker)
    values = poll_values(client.get("/").content.decode(), "nav-notifications-link")
    for n in range(3):
        notify(user=worker, kind="escalation.reminder", message=f"reminder {n}")

    response = client.get(BADGE, values, **HTMX)

    assert announced(response) == "3 new notifications, 3 unread"


def test_reading_elsewhere_updates_the_badge_without_an_announcement(worker, client_for):
    notification = notify(user=worker, kind="escalation.reminder", message="seen on phone")
    client = client_for(worker)
    values = poll_values(client.get("/").content.decode(), "nav-notifications-link")
    Notification.objects.filter(pk=notification.pk).update(read_at=timezone.now())

    response = client.get(BADGE, values, **HTMX)

    assert response.status_code == 200
    assert badge_name(response.content.decode()) == "Notifications"
    assert "HX-Trigger" not in response


def test_the_badge_poll_keeps_the_current_page_marker_on_the_list_page(worker, client_for):
    client = client_for(worker)
    notify(user=worker, kind="escalation.reminder", message="x")

    response = client.get(
        BADGE,
        {"count": "0", "newest": "0"},
        HTTP_HX_CURRENT_URL="http://testserver/notifications/",
        **HTMX,
    )

    assert 'aria-current="page"' in response.content.decode()
