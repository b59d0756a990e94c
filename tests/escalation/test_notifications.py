"""Reminders and alerts reach people in the app (a badge and a list) and by e-mail; the
e-mail leaves only once the change that caused it has committed."""

from __future__ import annotations

import pytest
from django.core import mail
from django.db import transaction

from apps.cases.errors import CaseError
from apps.cases.models import Notification
from apps.cases.services import mark_all_read, mark_read, notify


def test_notify_stores_an_unread_notification_and_mails_it_after_commit(
    people, file_invoice_case, django_capture_on_commit_callbacks
):
    worker = people["worker"]
    case = file_invoice_case()

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        notification = notify(
            user=worker, case=case, kind="escalation.reminder", message="Half the time is gone."
        )
        assert mail.outbox == []  # nothing leaves before the commit
    for callback in callbacks:
        callback()

    stored = Notification.objects.get(pk=notification.pk)
    assert (stored.user, stored.case, stored.read_at) == (worker, case, None)
    assert stored.message == "Half the time is gone."
    assert len(mail.outbox) == 1
    sent = mail.outbox[0]
    assert sent.to == ["wendy@example.test"]
    assert case.case_ref in sent.subject and "\n" not in sent.subject
    assert "Half the time is gone." in sent.body
    assert f"/cases/{case.pk}/" in sent.body


def test_a_rolled_back_change_leaves_no_notification_and_sends_no_mail(
    people, file_invoice_case, django_capture_on_commit_callbacks
):
    case = file_invoice_case()

    with (
        django_capture_on_commit_callbacks(execute=True),
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        notify(user=people["worker"], case=case, kind="escalation.reminder", message="x")
        raise RuntimeError("the escalation failed half way")

    assert not Notification.objects.filter(user=people["worker"]).exists()
    assert mail.outbox == []


def test_no_mail_without_an_address_or_when_email_is_off(
    people, file_invoice_case, django_capture_on_commit_callbacks
):
    case = file_invoice_case()
    with django_capture_on_commit_callbacks(execute=True):
        notify(user=people["viewer"], case=case, kind="escalation.reminder", message="no address")
        notify(
            user=people["worker"],
            case=case,
            kind="escalation.reminder",
            message="in-app only",
            email=False,
        )

    assert mail.outbox == []
    assert Notification.objects.filter(user=people["viewer"], message="no address").exists()
    assert Notification.objects.filter(user=people["worker"], message="in-app only").exists()


def test_a_user_marks_their_own_notification_read_and_a_second_click_changes_nothing(people):
    worker = people["worker"]
    notification = notify(user=worker, kind="escalation.reminder", message="hello", email=False)

    mark_read(user=worker, notification_id=notification.pk)
    notification.refresh_from_db()
    first_read = notification.read_at
    assert first_read is not None

    mark_read(user=worker, notification_id=str(notification.pk))
    notification.refresh_from_db()
    assert notification.read_at == first_read


def test_someone_elses_notification_is_not_found_and_stays_unread(people):
    theirs = notify(user=people["worker2"], kind="escalation.reminder", message="x", email=False)

    for foreign_id in (theirs.pk, str(theirs.pk), "not-a-number", 999_999):
        with pytest.raises(CaseError) as error:
            mark_read(user=people["worker"], notification_id=foreign_id)
        assert error.value.kind == "not_found"
    theirs.refresh_from_db()
    assert theirs.read_at is None


def test_mark_all_read_clears_only_the_users_own_badge(people):
    for text in ("one", "two"):
        notify(user=people["worker"], kind="escalation.reminder", message=text, email=False)
    notify(user=people["worker2"], kind="escalation.reminder", message="theirs", email=False)

    assert mark_all_read(user=people["worker"]) == 2
    assert not people["worker"].notifications.filter(read_at__isnull=True).exists()
    assert people["worker2"].notifications.filter(read_at__isnull=True).count() == 1
    assert mark_all_read(user=people["worker"]) == 0
