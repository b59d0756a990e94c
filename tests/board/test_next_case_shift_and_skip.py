"""A worker's assignment controls: "Next case" leads to the case it handed out, or says why
there is none (never silently nothing); the shift panel shows on/off and the cases held,
and going off shift with complex work asks for a hand-off note; Skip on a pull queue."""

from __future__ import annotations

import re

from django.urls import reverse

from apps.audit.models import AuditEvent
from apps.cases.models import Case, Transfer
from apps.cases.services import claim_case
from apps.routing.models import Queue, WorkerProfile

from .conftest import HTMX

QUEUE = "/"


def push_queue(name: str = "accounts_payable") -> Queue:
    Queue.objects.filter(name=name).update(assignment_model="priority_push")
    return Queue.objects.get(name=name)


def messages_of(page: str) -> list[str]:
    return [
        " ".join(re.sub(r"<[^>]+>", "", m).split())
        for m in re.findall(r'<p class="message[^"]*">(.*?)</p>', page, re.S)
    ]


def test_the_queue_page_offers_next_case_and_the_shift_to_a_worker_only(worker, viewer, client_for):
    worker_page = client_for(worker).get(QUEUE).content.decode()
    viewer_page = client_for(viewer).get(QUEUE).content.decode()

    assert 'id="next-case-button"' in worker_page
    assert "You are on shift." in worker_page and "You hold 0 cases." in worker_page
    assert 'id="next-case-button"' not in viewer_page
    assert 'id="shift-panel"' not in viewer_page


def test_next_case_hands_out_the_best_case_and_opens_it(worker, file_invoice_case, client_for):
    push_queue()
    urgent = file_invoice_case(case_ref="urgent")
    Case.objects.filter(pk=urgent.pk).update(priority_band="P1")
    file_invoice_case(case_ref="routine")
    client = client_for(worker)

    response = client.post(reverse("cases:next_case"), follow=True)

    assert response.redirect_chain[0] == (reverse("cases:detail", args=[urgent.pk]), 302)
    taken = Case.objects.get(pk=urgent.pk)
    assert (taken.state, taken.assignee, taken.lease_kind) == ("claimed", worker, "push")
    assert messages_of(response.content.decode())[0].startswith("Your next case is urgent (P1).")


def test_next_case_with_nothing_eligible_says_so_on_the_queue_page(
    worker, file_invoice_case, client_for
):
    file_invoice_case()  # a pull queue: nothing is pushed from it

    response = client_for(worker).post(reverse("cases:next_case"), follow=True)

    assert response.redirect_chain[-1] == (QUEUE, 302)
    said = messages_of(response.content.decode())
    assert said and said[0].startswith("No eligible case for you right now")
    assert not Case.objects.filter(state="claimed").exists()


def test_next_case_off_shift_says_why(worker, file_invoice_case, client_for):
    push_queue()
    file_invoice_case()
    WorkerProfile.objects.filter(user=worker).update(on_shift=False)

    response = client_for(worker).post(reverse("cases:next_case"), follow=True)

    said = messages_of(response.content.decode())
    assert said == ["Error: You are off shift: go on shift to receive cases."]
    assert not Case.objects.filter(state="claimed").exists()


def test_going_off_shift_with_complex_work_asks_for_a_note_in_place(
    worker, file_invoice_case, client_for
):
    case = file_invoice_case()
    Case.objects.filter(pk=case.pk).update(workload_weight=2)
    claim_case(case_id=case.pk, actor=worker)
    client = client_for(worker)

    response = client.post(reverse("cases:shift"), {"on_shift": "off"}, **HTMX)

    body = response.content.decode()
    assert response.status_code == 422
    assert body.lstrip().startswith('<section id="shift-panel"')
    assert 'id="shift-errors" tabindex="-1" autofocus' in body
    assert '<a href="#shift-handoff_note">Write a short hand-off note' in body
    assert 'id="shift-handoff_note-error"' in body and 'aria-invalid="true"' in body
    assert WorkerProfile.objects.get(user=worker).on_shift is True
    assert Case.objects.get(pk=case.pk).assignee == worker


def test_without_javascript_the_note_error_comes_on_the_shift_page(
    worker, file_invoice_case, client_for
):
    case = file_invoice_case()
    Case.objects.filter(pk=case.pk).update(workload_weight=3)
    claim_case(case_id=case.pk, actor=worker)

    response = client_for(worker).post(reverse("cases:shift"), {"on_shift": "off"})

    page = response.content.decode()
    assert response.status_code == 422
    assert "<h1>Your shift</h1>" in page
    assert "Write a short hand-off note" in page
    assert case.case_ref in page  # the cases held are listed


def test_going_off_shift_with_a_note_hands_the_cases_back(worker, file_invoice_case, client_for):
    case = file_invoice_case()
    Case.objects.filter(pk=case.pk).update(workload_weight=2)
    claim_case(case_id=case.pk, actor=worker)
    client = client_for(worker)

    response = client.post(
        reverse("cases:shift"),
        {"on_shift": "off", "handoff_note": "PO 781 confirmed by phone"},
        follow=True,
    )

    assert response.redirect_chain[-1] == (QUEUE, 302)
    page = response.content.decode()
    assert "You are off shift" in messages_of(page)[0]
    assert "You are off shift." in page  # the panel now says so
    assert 'value="on"' in page
    returned = Case.objects.get(pk=case.pk)
    assert (returned.state, returned.assignee) == ("open", None)
    handoff = Transfer.objects.get(case=case, kind="handoff")
    assert handoff.note == "PO 781 confirmed by phone"
    assert WorkerProfile.objects.get(user=worker).on_shift is False


def test_going_on_shift_is_recorded(worker, client_for):
    WorkerProfile.objects.filter(user=worker).update(on_shift=False)

    response = client_for(worker).post(reverse("cases:shift"), {"on_shift": "on"})

    assert response.status_code == 302
    assert WorkerProfile.objects.get(user=worker).on_shift is True
    assert AuditEvent.objects.filter(
        stream=f"worker:{worker.username}", action="worker.on_shift"
    ).exists()


def test_skip_is_offered_on_a_pull_queue_and_counted(worker, file_invoice_case, client_for):
    case = file_invoice_case()
    client = client_for(worker)
    page = client.get(reverse("cases:detail", args=[case.pk])).content.decode()

    response = client.post(
        reverse("cases:skip", args=[case.pk]), {"reason": "conflict_of_interest"}
    )

    assert 'id="skip-details"' in page and '<label for="skip-reason">' in page
    assert response.status_code == 302 and response["Location"] == QUEUE
    skipped = Case.objects.get(pk=case.pk)
    assert (skipped.skip_count, skipped.state) == (1, "open")
    event = AuditEvent.objects.get(stream=case.pk, action="case.skipped")
    assert event.reason == "Possible conflict of interest"


def test_skip_is_not_offered_on_an_open_case_of_a_push_queue(worker, file_invoice_case, client_for):
    push_queue()
    case = file_invoice_case()

    page = client_for(worker).get(reverse("cases:detail", args=[case.pk])).content.decode()

    assert 'id="skip-details"' not in page


def test_a_held_case_can_be_skipped_back_to_the_queue(worker, file_invoice_case, client_for):
    case = claim_case(case_id=file_invoice_case().pk, actor=worker)

    response = client_for(worker).post(reverse("cases:skip", args=[case.pk]), {"reason": "other"})

    assert response.status_code == 302
    skipped = Case.objects.get(pk=case.pk)
    assert (skipped.state, skipped.assignee, skipped.skip_count) == ("open", None, 1)


def test_a_tampered_skip_reason_is_refused_and_changes_nothing(
    worker, file_invoice_case, client_for
):
    case = file_invoice_case()

    response = client_for(worker).post(reverse("cases:skip", args=[case.pk]), {"reason": "bored"})

    assert response.status_code == 422
    assert 'id="action-error"' in response.content.decode()
    assert Case.objects.get(pk=case.pk).skip_count == 0
