"""The recovery queue (release case 7): a failed resume stays visible as "decision completed
— workflow recovery pending" and a supervisor retries the same event."""

from __future__ import annotations

from django.urls import reverse

from apps.cases.models import Decision, DeliveryStatus, OutboxEvent, OutboxStatus, State


def test_recovery_lists_a_failed_delivery_with_its_decision_attempts_and_error(
    worker, supervisor, failed_delivery_case, file_invoice_case, client_for
):
    case = failed_delivery_case(worker)
    file_invoice_case(case_ref="still_open")  # not a recovery case
    event = OutboxEvent.objects.get(case=case)

    response = client_for(supervisor).get(reverse("cases:recovery"))

    page = response.content.decode()
    assert response.status_code == 200
    assert "1 case waiting for recovery" in page
    assert "Decision completed — workflow recovery pending" in page
    assert "Select the purchase order" in page and "wendy" in page
    assert f"<code>{event.pk}</code>" in page
    assert "<dt>Attempts</dt><dd>2</dd>" in page
    assert "HTTP 503" in page
    assert "still_open" not in page
    assert reverse("cases:retry_delivery", args=[case.pk]) in page


def test_retry_puts_the_same_event_back_to_pending_and_never_redecides(
    worker, supervisor, failed_delivery_case, client_for
):
    case = failed_delivery_case(worker)
    event = OutboxEvent.objects.get(case=case)
    client = client_for(supervisor)

    response = client.post(reverse("cases:retry_delivery", args=[case.pk]))

    assert response.status_code == 302 and response["Location"] == reverse("cases:recovery")
    event.refresh_from_db()
    case.refresh_from_db()
    assert event.status == OutboxStatus.PENDING
    assert OutboxEvent.objects.filter(case=case).count() == 1  # the same id, no new event
    assert case.state == State.RESOLUTION_PENDING
    assert case.delivery_status == DeliveryStatus.PENDING
    assert Decision.objects.filter(case=case).count() == 1
    page = client.get(response["Location"]).content.decode()
    assert f"Delivery of {event.pk} scheduled again with the same event id." in page
    assert "0 cases waiting for recovery" in page


def test_the_decision_page_of_a_failed_delivery_says_recovery_is_pending(
    worker, failed_delivery_case, client_for
):
    case = failed_delivery_case(worker)

    page = client_for(worker).get(reverse("cases:detail", args=[case.pk])).content.decode()

    assert "Decision completed — workflow recovery pending" in page
    assert "Nobody needs to decide again." in page
    assert 'id="decide-form"' not in page


def test_only_supervisors_see_the_recovery_link(worker, supervisor, client_for):
    recovery = reverse("cases:recovery")

    assert f'href="{recovery}"' in client_for(supervisor).get("/").content.decode()
    assert f'href="{recovery}"' not in client_for(worker).get("/").content.decode()
